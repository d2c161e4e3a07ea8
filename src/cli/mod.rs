//! The native command line: thin glue that parses arguments, calls the core and prints. Exit codes: 0 on
//! success, 2 on bad input (with one message naming the problem and where), never a panic.
//!
//! May import: anything of the library (it is a front end); nothing imports it except `main`.

use crate::analysis::{Analysis, ProgramResult};
use crate::figure::{scene, svg};
use crate::lang::{InputError, Lang, Span};
use crate::model::access::Windows;
use crate::model::access::{Instr, LaneSet};
use crate::model::arch::{self, Carveout, Cc, ALL_CCS};
use crate::model::cost::analyze;
use crate::model::report::Report;
use crate::program::launch::Dim3;
use crate::scenario::{Deadline, Field, Scenario, ScenarioError, Setting};
use crate::teach::presets;
use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;

/// See memory coalescing and shared-memory bank conflicts, warp by warp, on every CUDA compute capability.
#[derive(Parser, Debug)]
#[command(name = "warpscope", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Analyse one warp-level memory instruction.
    Analyze(Box<AnalyzeArgs>),
    /// Show the per-CC facts table, or one CC's facts and its carveout.
    Facts(FactsArgs),
    /// List the named examples.
    Presets(PresetsArgs),
    /// Draw the figure of one warp's issue of one instruction, as the page shows it.
    Figure(Box<FigureArgs>),
    /// Grade a student's saved answers against a lab file (exit 0 when every goal passes, 1 when not).
    Check(CheckArgs),
    /// Check the engine against a GPU: emit the probe kernels, ingest Nsight Compute's counts, compare.
    #[command(subcommand)]
    Calibrate(CalibrateCommand),
    /// Cost a TMA box copy (cp.async.bulk.tensor, UTMALDG): the global sectors of the box and the shared
    /// layout its swizzle mode produces. The box comes from the host's tensor map, so it is given here.
    Tma(TmaArgs),
}

#[derive(clap::Args, Debug)]
struct TmaArgs {
    /// The box in elements, inner dimension first, as the tensor map's boxDim: `64x8`.
    #[arg(long = "box", default_value = "64x8")]
    box_dim: String,
    /// Bytes per element.
    #[arg(long, default_value_t = 2)]
    elem_bytes: u32,
    /// Bytes between the starts of two rows of the tensor in global memory (globalStrides[0]).
    #[arg(long, default_value_t = 4096)]
    pitch: u64,
    /// Global address of the box's first element.
    #[arg(long, default_value = "0x100000")]
    global: String,
    /// Offset of the box in the shared window.
    #[arg(long, default_value = "0")]
    shared: String,
    /// The tensor map's swizzle mode: none, 32B, 64B, 128B.
    #[arg(long, default_value = "128B")]
    swizzle: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Subcommand, Debug)]
enum CalibrateCommand {
    /// Write the probe program (probes.cu) and the list of probes (probes.txt: id, kernel, fingerprint,
    /// instruction, title; tab-separated) into a directory.
    Emit {
        /// The directory (created if missing).
        #[arg(long, default_value = "hw/build")]
        out: String,
    },
    /// Print the Nsight Compute metrics to collect, comma-separated.
    Metrics,
    /// Join the probe program's device file and Nsight Compute's CSV into one measurement file.
    Ingest {
        /// What the probe program wrote (its argument).
        #[arg(long)]
        device: String,
        /// `ncu --csv --print-units base --metrics ...` output.
        #[arg(long)]
        ncu: String,
        /// The driver release (`nvidia-smi --query-gpu=driver_version`).
        #[arg(long, default_value = "")]
        driver: String,
        /// The Nsight Compute version (`ncu --version`).
        #[arg(long, default_value = "")]
        ncu_version: String,
        /// The measurement file to write (`-` for standard output).
        #[arg(short = 'o', long = "output", default_value = "-")]
        output: String,
    },
    /// Compare a measurement file with the engine, probe by probe (exit 1 when a count differs with no
    /// recorded reason).
    Compare {
        /// The measurement file.
        file: String,
        /// Also draw the agreement figure (SVG) here.
        #[arg(long)]
        svg: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// The lab file (TOML).
    lab: String,
    /// The answers file (JSON, as the page's "save answers" writes it).
    #[arg(long)]
    answers: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::Args, Debug)]
struct AnalyzeArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also give each instruction's detailed steps (requests, transactions, wavefronts and their lanes) for
    /// one warp issue: the first, or the one `--issue` names.
    #[arg(long)]
    steps: bool,
    /// With --steps: which warp-level issue, counting from 0 (warps, then loop iterations) in the listed block.
    #[arg(long, default_value_t = 0)]
    issue: usize,
}

#[derive(clap::Args, Debug)]
struct FigureArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Which memory instruction, counting from 1 in program order.
    #[arg(long, default_value_t = 1)]
    instr: usize,
    /// Which warp-level issue of it, counting from 0 (warps, then loop iterations).
    #[arg(long, default_value_t = 0)]
    issue: usize,
    /// Animation step: 0 (nothing moved yet) .. the number of steps, or `all` for every step as numbered files.
    #[arg(long, default_value = "all-done")]
    step: String,
    /// Colour theme.
    #[arg(long, value_enum, default_value_t = ThemeArg::Light)]
    theme: ThemeArg,
    /// What to draw: `lanes` (the lanes, their requests or phases, and the memory they touch, step by step),
    /// or `tile` (shared memory as 128-byte rows of 16-byte chunks, coloured by phase, conflicts outlined;
    /// shared-memory issues only, one picture with no steps).
    #[arg(long, value_enum, default_value_t = FigureView::Lanes)]
    view: FigureView,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = FigureFormat::Svg)]
    format: FigureFormat,
    /// Output file (`-` for standard output); with --step all, FILE gets -01, -02, ... before its extension,
    /// or, when FILE ends in .zip, every frame goes into that one archive.
    #[arg(short = 'o', long = "output", default_value = "-")]
    output: String,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ThemeArg {
    Light,
    Dark,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FigureView {
    Lanes,
    Tile,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FigureFormat {
    Svg,
    Png,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["addr", "cuda", "ptx", "sass", "addresses", "preset"])))]
struct InputArgs {
    /// Compute capability: 2.0 3.0 3.5 3.7 5.0 5.2 6.0 6.1 7.0 7.5 8.0 8.6 8.9 9.0 10.0 12.0 (default 8.0).
    #[arg(long, value_parser = Cc::parse)]
    cc: Option<Cc>,
    /// SASS mnemonic for --addr and --addresses: LDG.E.32, LDG.E.CG.64, LDS.128, STS.64, ST.E.32, LDL.32, ...
    #[arg(long)]
    op: Option<String>,
    /// Byte address as an expression per thread: `4*lane`, `8*tid + 0x100`, `16*lane if lane < 20`.
    #[arg(long)]
    addr: Option<String>,
    /// A CUDA file: a snippet, a kernel or a whole `.cu` file with host code (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    cuda: Option<String>,
    /// A file the CUDA file includes (`#include "common.h"`), when it is not beside the file (repeatable).
    /// Headers named with quotes and found beside the file, or beside a header that includes them, are read
    /// without this.
    #[arg(long = "include", value_name = "FILE")]
    includes: Vec<String>,
    /// A PTX file as `nvcc -ptx` or clang writes it (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    ptx: Option<String>,
    /// A SASS file as cuobjdump -sass prints it (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    sass: Option<String>,
    /// An address list file: 32 addresses per warp, - for an inactive lane (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    addresses: Option<String>,
    /// A named example (see `warpscope presets`); other options override its settings.
    #[arg(long)]
    preset: Option<String>,
    /// Block size X[xY[xZ]], at most 1024 threads (default 32).
    #[arg(long)]
    block: Option<String>,
    /// Grid size X[xY[xZ]] (default 1). Every block of the grid is counted.
    #[arg(long)]
    grid: Option<String>,
    /// Count only this block, X[,Y[,Z]] (the issues listed and drawn are always one block's: this one, or
    /// block 0,0,0).
    #[arg(long, value_name = "X,Y,Z")]
    block_idx: Option<String>,
    /// Run every block of the grid, none counted as equivalent to another (slower; checks the shortcut).
    #[arg(long)]
    every_block: bool,
    /// Model L1, L2 and DRAM across the warps and blocks of the run (docs/model.md#the-memory-system): hit rates, DRAM bytes and
    /// the bounds no schedule changes, on the CC's example GPU (the flags below change it).
    #[arg(long)]
    caches: bool,
    /// Cache model: SMs (default: the CC's example GPU). Implies --caches.
    #[arg(long, value_name = "N")]
    sms: Option<u32>,
    /// Cache model: L2 size, `40MB`, `1536KB` or bytes. Implies --caches.
    #[arg(long, value_name = "SIZE")]
    l2_size: Option<String>,
    /// Cache model: L2 ways. Implies --caches.
    #[arg(long, value_name = "N")]
    l2_ways: Option<u32>,
    /// Cache model: resident blocks per SM (default: from the thread, block and shared-memory limits).
    /// Implies --caches.
    #[arg(long, value_name = "N")]
    blocks_per_sm: Option<u32>,
    /// Cache model: the shared-memory carveout per SM in KB (7.0 and later); L1 gets the rest. Implies --caches.
    #[arg(long, value_name = "KB")]
    carveout_kb: Option<u64>,
    /// The kernel to analyse when the input has several: its name (`reduce4`, `reduce4<int,256>`) or mangled
    /// symbol. Default: the first. The result says which ran and lists the others.
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Stop a run that takes longer than this many seconds (default 60).
    #[arg(long, value_name = "SECONDS")]
    max_seconds: Option<f64>,
    /// Stop a program whose block needs more register state than this (default 1024).
    #[arg(long, value_name = "MB")]
    max_memory_mb: Option<u64>,
    /// Threads for the memory system's SMs (default: the machine's cores, shared between the main run and its
    /// schedule check). The figures are the same for any number.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// NAME=VALUE: a variable, pointer base, register (R4=0x1000) or constant word (c[0x0][0x160]=...).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    /// NAME=SOURCE: the contents of a pointer parameter or global array of a CUDA kernel, which its loads then
    /// read (repeatable): a generator, `uniform(0, 256, n=65536, seed=1)`, `zipf(1.1, 50257, n=4096)`,
    /// `const(7, n=32)`, `arange(n=1024)`, `perm(n=1024)`, `repeat(1, 2, n=30)`, `text("the cat", n=64)`; a numpy
    /// file, `ids.npy`; or a raw file with its element type, `corpus.txt:uint8`
    #[arg(long = "data", value_name = "NAME=SOURCE")]
    data: Vec<String>,
    /// Active-lane mask in hex (bit i = lane i), applied to every warp; default all 32 lanes.
    #[arg(long)]
    mask: Option<String>,
    /// L1 caching of global loads (-Xptxas -dlcm=ca|cg); default: the CC's documented default.
    #[arg(long, value_parser = ["default", "on", "off"])]
    l1: Option<String>,
    /// Kepler shared-memory bank mode in bytes.
    #[arg(long, value_parser = ["4", "8"])]
    bank_mode: Option<String>,
    /// How 64/128-bit shared accesses whose lanes share addresses in pairs count on CC 7.0+: as measured
    /// (merged phases, the default) or by the documented phase model.
    #[arg(long, value_parser = ["measured", "documented"])]
    shared_model: Option<String>,
    /// How a branch (or guarded instruction) whose condition depends on loaded data, and whose sides move
    /// memory, is decided: `runs` (the default: the code it guards runs and loops do not repeat), or its
    /// condition `true` or `false` in every lane, or true in the lanes of a mask such as 0x0000ffff. The
    /// result states the assumption. (Sides that only compute values need none.)
    #[arg(long, value_name = "runs|true|false|MASK")]
    data_branches: Option<String>,
    /// Named CuTe layouts that --addr may call, separated by `;` or new lines:
    /// `L = Swizzle<3,3,3> o (8,64):(64,1)`, nested modes `((2,4),8):((1,16),2)`. `L(i, j)` takes one
    /// coordinate per mode, `L(k)` a 1-D index (colexicographic, as in CuTe), and gives the swizzled element
    /// offset times --elem-bytes, a byte address.
    #[arg(long, value_name = "LAYOUTS")]
    layout: Option<String>,
    /// Bytes per layout element (default 1: the layout's offsets are bytes; 2 for halves, 4 for floats).
    #[arg(long, value_name = "BYTES")]
    elem_bytes: Option<String>,
    /// Misaligned lanes of LDL/LDS/ST/STS/STL/LD become error lanes instead of warnings.
    #[arg(long)]
    strict: bool,
    /// Shared bytes allocated per block; lanes past it are error lanes.
    #[arg(long)]
    shared_bytes: Option<u64>,
    /// Local bytes allocated per thread; lanes past it are error lanes.
    #[arg(long)]
    local_bytes: Option<u64>,
}

#[derive(clap::Args, Debug)]
struct PresetsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::Args, Debug)]
struct FactsArgs {
    /// One compute capability; default: all of them.
    #[arg(long, value_parser = Cc::parse)]
    cc: Option<Cc>,
    /// A preferred carveout: -1, 0..100, default, maxl1 or maxshared (CC 7.0 and later).
    #[arg(long, value_parser = Carveout::parse, requires = "cc", allow_hyphen_values = true)]
    carveout: Option<Carveout>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Runs the CLI and returns the process exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Analyze(a) => run_analyze(*a),
        Command::Facts(f) => run_facts(f),
        Command::Presets(p) => run_presets(p),
        Command::Figure(f) => run_figure(*f),
        Command::Tma(t) => run_tma(t),
        Command::Calibrate(c) => {
            return match run_calibrate(c) {
                Ok((text, code)) => {
                    if !text.is_empty() {
                        println!("{text}");
                    }
                    code
                }
                Err(message) => {
                    eprintln!("error: {message}");
                    2
                }
            }
        }
        Command::Check(c) => {
            return match run_check(c) {
                Ok((text, all_pass)) => {
                    println!("{text}");
                    if all_pass {
                        0
                    } else {
                        1
                    }
                }
                Err(message) => {
                    eprintln!("error: {message}");
                    2
                }
            }
        }
    };
    match result {
        Ok(text) => {
            println!("{text}");
            0
        }
        Err(message) => {
            eprintln!("error: {message}");
            2
        }
    }
}

/// What a command gives when a program calls it ([`call`]) instead of a shell: the text the command line
/// prints, the files it would write (standard output, `-`, among them), in order, and whether every goal
/// passed (`check`; true for the other commands).
#[derive(Debug, Default)]
pub struct Output {
    pub text: String,
    pub files: Vec<(String, Vec<u8>)>,
    pub pass: bool,
}

/// The inputs a calling program gives in place of files, and what the command writes, while [`call`] runs.
#[derive(Default)]
struct Captured {
    inputs: std::collections::HashMap<String, String>,
    /// Binary inputs (arrays given as data, as `.npy` bytes) by path.
    #[cfg_attr(not(feature = "data"), allow(dead_code))]
    blobs: std::collections::HashMap<String, Vec<u8>>,
    files: Vec<(String, Vec<u8>)>,
}

thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Captured>> = const { std::cell::RefCell::new(None) };
}

/// Runs one command as the command line would (`args` without the program's name: `["analyze", "--addr",
/// "4*lane", "--op", "LDG.E.32", "--format", "json"]`), for a program that embeds warpscope (the Python
/// package): the same parsing, settings path and output, byte for byte. A path found in `inputs` is read from
/// there instead of the disk; files the command writes, and standard output, come back in
/// [`Output::files`] instead. The error is the command line's message (`--addr 1:5: ...`).
pub fn call(args: &[String], inputs: std::collections::HashMap<String, String>) -> Result<Output, String> {
    call_with(args, inputs, std::collections::HashMap::new())
}

/// [`call`], with binary inputs too: a `--data` path found in `blobs` is read from there (Python's numpy arrays,
/// as `.npy` bytes).
pub fn call_with(
    args: &[String],
    inputs: std::collections::HashMap<String, String>,
    blobs: std::collections::HashMap<String, Vec<u8>>,
) -> Result<Output, String> {
    let argv = std::iter::once("warpscope".to_string()).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        let text = e.render().to_string();
        text.lines().next().unwrap_or_default().trim_start_matches("error: ").to_string()
    })?;
    CAPTURE.with(|c| *c.borrow_mut() = Some(Captured { inputs, blobs, files: Vec::new() }));
    let result = match cli.command {
        Command::Analyze(a) => run_analyze(*a).map(|t| (t, true)),
        Command::Facts(f) => run_facts(f).map(|t| (t, true)),
        Command::Presets(p) => run_presets(p).map(|t| (t, true)),
        Command::Figure(f) => run_figure(*f).map(|t| (t, true)),
        Command::Tma(t) => run_tma(t).map(|t| (t, true)),
        Command::Check(c) => run_check(c),
        Command::Calibrate(_) => Err("calibrate runs from the command line only".to_string()),
    };
    let files = CAPTURE.with(|c| c.borrow_mut().take()).map(|c| c.files).unwrap_or_default();
    result.map(|(text, pass)| Output { text, files, pass })
}

/// One flag of a command, as [`call`] takes it: its long name, whether it takes a value, whether it may be
/// given more than once, and its help.
#[derive(Debug, Clone)]
pub struct Flag {
    pub name: String,
    pub takes_value: bool,
    pub repeats: bool,
    pub help: String,
}

/// The flags of `command` (`analyze`, `figure`, `check`, ...), for a program that offers them under their own
/// names (the Python package's keyword arguments); empty for an unknown command.
pub fn flags(command: &str) -> Vec<Flag> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let Some(c) = cli.find_subcommand(command) else { return Vec::new() };
    c.get_arguments()
        .filter_map(|a| {
            let name = a.get_long()?.to_string();
            (name != "help").then(|| Flag {
                name,
                takes_value: a.get_action().takes_values(),
                repeats: matches!(a.get_action(), clap::ArgAction::Append),
                help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
            })
        })
        .collect()
}

/// Writes bytes to a file, or to standard output for `-` (inside [`call`], to its output instead).
fn write_output(path: &str, bytes: impl AsRef<[u8]>) -> Result<(), String> {
    let captured = CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some(c) => {
            c.files.push((path.to_string(), bytes.as_ref().to_vec()));
            true
        }
        None => false,
    });
    if captured {
        return Ok(());
    }
    if path == "-" {
        use std::io::Write as _;
        std::io::stdout().write_all(bytes.as_ref()).map_err(|e| format!("standard output: {e}"))
    } else {
        std::fs::write(path, bytes).map_err(|e| format!("{path}: {e}"))
    }
}

/// Runs a `calibrate` subcommand; returns its report and exit code (compare: 1 when a count differs with no
/// recorded reason).
fn run_calibrate(c: CalibrateCommand) -> Result<(String, i32), String> {
    use crate::calibrate;
    match c {
        CalibrateCommand::Emit { out } => {
            let (probes, skipped) = calibrate::probes();
            std::fs::create_dir_all(&out).map_err(|e| format!("{out}: {e}"))?;
            let cu = format!("{out}/probes.cu");
            write_output(&cu, calibrate::cuda_source(&probes))?;
            let mut list = String::new();
            for p in &probes {
                let cut = if p.issues_total > p.item.issues.len() {
                    format!(" (first {} of {} warp issues)", p.item.issues.len(), p.issues_total)
                } else {
                    String::new()
                };
                list.push_str(&format!(
                    "{}\t{}\t{}\t{}\t{}{cut}\n",
                    p.id,
                    p.kernel_name(),
                    p.fingerprint(),
                    p.instr().text,
                    p.title
                ));
            }
            write_output(&format!("{out}/probes.txt"), &list)?;
            let mut text = format!("{cu}: {} probes", probes.len());
            for s in &skipped {
                text.push_str(&format!("\nskipped {}: {}", s.id, s.reason));
            }
            Ok((text, 0))
        }
        CalibrateCommand::Metrics => Ok((calibrate::metrics().join(","), 0)),
        CalibrateCommand::Ingest { device, ncu, driver, ncu_version, output } => {
            let device_text = read_input(&device)?;
            let run: calibrate::DeviceRun =
                serde_json::from_str(&device_text).map_err(|e| format!("{device}:{}:{}: {e}", e.line(), e.column()))?;
            let counts = calibrate::parse_ncu_csv(&read_input(&ncu)?).map_err(|e| format!("{ncu}: {e}"))?;
            let (m, missing) = calibrate::ingest(&run, &counts, &driver, &ncu_version).map_err(|e| e.to_string())?;
            let json = serde_json::to_string_pretty(&m).map_err(|e| e.to_string())? + "\n";
            write_output(&output, &json)?;
            let mut text = format!("{} (CC {}): {} probes measured", m.gpu, m.cc, m.probes.len());
            for s in &missing {
                text.push_str(&format!("\nnot measured {}: {}", s.id, s.reason));
            }
            if output == "-" {
                eprintln!("{text}");
                Ok((String::new(), 0))
            } else {
                Ok((text, 0))
            }
        }
        CalibrateCommand::Compare { file, svg, format } => run_compare(&file, svg.as_deref(), format),
    }
}

/// Compares a measurement file; returns the report and 0 when every difference is explained, else 1.
fn run_compare(file: &str, svg_out: Option<&str>, format: Format) -> Result<(String, i32), String> {
    use crate::calibrate;
    let text = read_input(file)?;
    let m: calibrate::Measurement =
        serde_json::from_str(&text).map_err(|e| format!("{file}:{}:{}: {e}", e.line(), e.column()))?;
    let c = calibrate::compare(&m, calibrate::DEPARTURES).map_err(|e| format!("{file}: {e}"))?;
    if let Some(path) = svg_out {
        write_output(path, calibrate::agreement_svg(&c))?;
    }
    let code = i32::from(!c.problems().is_empty());
    let out = match format {
        Format::Text => c.to_text(),
        Format::Json => serde_json::to_string_pretty(&c).map_err(|e| e.to_string())?,
    };
    Ok((out, code))
}

fn flag_error(flag: &str, err: InputError) -> String {
    format!("{flag} {}", err)
}

fn read_input(path: &str) -> Result<String, String> {
    let given = CAPTURE.with(|c| c.borrow().as_ref().map(|c| c.inputs.get(path).cloned()));
    match given {
        Some(Some(text)) => return Ok(text),
        Some(None) if path == "-" => return Err("standard input: give the text itself".to_string()),
        _ => {}
    }
    let bytes = if path == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .map_err(|e| format!("reading standard input: {e}"))?;
        buf
    } else {
        std::fs::read(path).map_err(|e| format!("{path}: {e}"))?
    };
    String::from_utf8(bytes).map_err(|e| format!("{path}: not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// The files a CUDA text includes with quotes (`#include "common.h"`), read as a compiler's `-I` of the
/// including file's folder does: beside the file, then beside each header that includes more; plus the
/// `--include` files. A header not found is left to the preprocessor (the CUDA toolkit's and the C library's
/// headers are what warpscope already knows).
pub fn headers(text: &str, file: Option<&str>, given: &[String]) -> Result<Vec<crate::lang::Header>, String> {
    let mut out: Vec<crate::lang::Header> = Vec::new();
    for path in given {
        let name = std::path::Path::new(path).file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        out.push(crate::lang::Header { name, text: read_input(path)? });
    }
    // A text a calling program gave in place of a file has no folder to look beside.
    let given = |f: &str| CAPTURE.with(|c| c.borrow().as_ref().is_some_and(|c| c.inputs.contains_key(f)));
    let dir = |f: Option<&str>| {
        f.filter(|f| *f != "-" && !given(f))
            .and_then(|f| std::path::Path::new(f).parent().map(std::path::Path::to_path_buf))
    };
    let mut todo: Vec<(String, Option<std::path::PathBuf>)> = vec![(text.to_string(), dir(file))];
    while let Some((t, here)) = todo.pop() {
        for line in t.lines() {
            let l = line.trim_start();
            let Some(rest) = l.strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("include")) else {
                continue;
            };
            let Some(name) = rest.trim().strip_prefix('"').and_then(|r| r.split('"').next()) else { continue };
            if out.iter().any(|h| h.name == name) || out.len() >= 64 {
                continue;
            }
            let Some(path) = here.as_ref().map(|d| d.join(name)).filter(|p| p.is_file()) else { continue };
            let text = read_input(&path.to_string_lossy())?;
            todo.push((text.clone(), path.parent().map(std::path::Path::to_path_buf)));
            out.push(crate::lang::Header { name: name.to_string(), text });
        }
    }
    Ok(out)
}

/// Builds the scenario the input options describe, and where its pattern came from (for error messages).
fn scenario_from(a: &InputArgs) -> Result<(Scenario, String), String> {
    let mut sc = match &a.preset {
        Some(name) => presets::find(name)
            .map(|p| p.scenario())
            .ok_or_else(|| format!("unknown preset `{name}` (see `warpscope presets`)"))?,
        None => Scenario::default(),
    };
    // Where the pattern came from, for error messages.
    let mut origin = format!("--preset {}", a.preset.clone().unwrap_or_default());
    let inputs = [
        (&a.addr, Lang::Expr, false),
        (&a.cuda, Lang::Cuda, true),
        (&a.ptx, Lang::Ptx, true),
        (&a.sass, Lang::Sass, true),
        (&a.addresses, Lang::Addresses, true),
    ];
    for (value, lang, is_file) in inputs {
        if let Some(v) = value {
            sc.lang = lang;
            sc.text = if is_file { read_input(v)? } else { v.clone() };
            origin = if is_file { v.clone() } else { "--addr".into() };
        }
    }
    if sc.lang == Lang::Cuda && a.preset.is_none() {
        sc.headers = headers(&sc.text, a.cuda.as_deref(), &a.includes)?;
    }
    if let Some(cc) = a.cc {
        sc.cc = cc;
    }
    if let Some(op) = &a.op {
        set(&mut sc, Setting::Op, op)?;
    } else if a.preset.is_none() && matches!(sc.lang, Lang::Expr) {
        return Err("--addr needs --op, the instruction (LDG.E.32, LDS.64, ...)".into());
    } else if a.preset.is_none() && sc.lang == Lang::Addresses {
        sc.op = String::new();
    }
    for (setting, value) in [(Setting::Block, &a.block), (Setting::Grid, &a.grid), (Setting::Kernel, &a.kernel)] {
        if let Some(v) = value {
            set(&mut sc, setting, v)?;
        }
    }
    if let Some(b) = &a.block_idx {
        sc.block_idx = Some(parse_block_idx(b)?);
    }
    sc.every_block |= a.every_block;
    if a.caches
        || a.sms.is_some()
        || a.l2_size.is_some()
        || a.l2_ways.is_some()
        || a.blocks_per_sm.is_some()
        || a.carveout_kb.is_some()
    {
        let mut c = sc.caches.take().unwrap_or_default();
        c.sms = a.sms.or(c.sms);
        if let Some(v) = &a.l2_size {
            c.l2_bytes = Some(crate::analysis::caches::parse_size(v).map_err(|e| format!("--l2-size `{v}`: {e}"))?);
        }
        c.l2_ways = a.l2_ways.or(c.l2_ways);
        c.blocks_per_sm = a.blocks_per_sm.or(c.blocks_per_sm);
        if let Some(k) = a.carveout_kb {
            c.carveout_bytes =
                Some(k.checked_mul(1024).ok_or_else(|| format!("--carveout-kb {k}: too large for this setting"))?);
        }
        c.shared_bytes = a.shared_bytes.or(c.shared_bytes);
        sc.caches = Some(c);
    }
    if let Some(t) = a.max_seconds {
        if !(t > 0.0 && t.is_finite()) {
            return Err(format!("--max-seconds {t}: give a positive number of seconds"));
        }
        sc.limits.max_seconds = t;
    }
    if let Some(m) = a.max_memory_mb {
        sc.limits.max_memory_mb = m;
    }
    sc.limits.threads = match a.threads {
        Some(0) => return Err("--threads 0: give at least 1".into()),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    sc.sets.extend(a.sets.iter().cloned());
    #[cfg(not(feature = "data"))]
    if !a.data.is_empty() {
        return Err("--data: this build of warpscope does not read data (its `data` feature)".into());
    }
    #[cfg(feature = "data")]
    for d in &a.data {
        let mut spec = crate::data::DataSpec::parse(d).map_err(|e| format!("--data {e}"))?;
        if spec.is_file() {
            let path = spec.file_path().0.to_string();
            let given = CAPTURE.with(|c| c.borrow().as_ref().and_then(|c| c.blobs.get(&path).cloned()));
            let bytes = match given {
                Some(b) => b,
                None => std::fs::read(&path).map_err(|e| format!("--data {}: {path}: {e}", spec.name))?,
            };
            spec.file = Some(bytes.into());
        }
        sc.data.push(spec);
    }
    if let Some(m) = &a.mask {
        sc.lane_mask = parse_mask(m).map_err(|e| flag_error("--mask", e))?;
    }
    for (setting, value) in [
        (Setting::L1, &a.l1),
        (Setting::BankMode, &a.bank_mode),
        (Setting::SharedModel, &a.shared_model),
        (Setting::DataBranches, &a.data_branches),
        (Setting::Layout, &a.layout),
        (Setting::ElemBytes, &a.elem_bytes),
    ] {
        if let Some(v) = value {
            set(&mut sc, setting, v)?;
        }
    }
    if let Some(v) = &a.layout {
        crate::lang::layout::Layouts::parse(v, 1).map_err(|e| flag_error("--layout", e))?;
    }
    sc.config.strict_align |= a.strict;
    if a.shared_bytes.is_some() || a.local_bytes.is_some() {
        sc.config.windows =
            Windows { shared_alloc_bytes: a.shared_bytes, local_alloc_bytes: a.local_bytes, ..sc.config.windows };
    }
    Ok((sc, origin))
}

/// Sets a setting given as a flag through the scenario's one settings path. Its messages start with the
/// setting's name (`block `0x4`: ...`); here that name is the flag (`--block `0x4`: ...`).
fn set(sc: &mut Scenario, setting: Setting, value: &str) -> Result<(), String> {
    sc.set(setting, value).map_err(|e| {
        let m = e.error.message;
        match m.strip_prefix(setting.name()) {
            Some(rest) => format!("--{}{rest}", setting.name().replace('_', "-")),
            None => m,
        }
    })
}

/// `X`, `X,Y` or `X,Y,Z`: a block index (missing coordinates are 0).
fn parse_block_idx(text: &str) -> Result<Dim3, String> {
    let parts: Vec<&str> = text.split([',', 'x']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--block-idx `{text}` is not X, X,Y or X,Y,Z"));
    }
    let mut v = [0u32; 3];
    for (k, p) in parts.iter().enumerate() {
        v[k] = p.parse().map_err(|_| format!("--block-idx `{text}`: `{p}` is not a whole number"))?;
    }
    Ok(Dim3 { x: v[0], y: v[1], z: v[2] })
}

/// A scenario's error as the CLI prints it: which option, and where in it.
fn scenario_error(e: ScenarioError, origin: &str) -> String {
    match e.field {
        // An error about the run as a whole has no position to follow the file's name.
        Field::Pattern | Field::Limit if e.error.line == 0 => format!("{origin}: {}", e.error),
        Field::Pattern | Field::Limit => format!("{origin} {}", e.error),
        Field::Op => flag_error("--op", e.error),
        Field::Launch => format!("--block/--grid: {}", e.error.message),
        // The setting's own messages already start with `--set NAME`.
        Field::Set if e.error.message.starts_with("--set") => e.error.message,
        Field::Set => format!("--set: {}", e.error.message),
        Field::Layout => flag_error("--layout", e.error),
        Field::Caches => format!("cache settings: {}", e.error.message),
        Field::Data => format!("--data: {}", e.error.message),
    }
}

/// Lowers and runs a scenario under its time limit: the analysis (for details) and the result.
fn run_scenario(sc: &Scenario, origin: &str) -> Result<(Analysis, ProgramResult), String> {
    let mut analysis = sc.analysis().map_err(|e| scenario_error(e, origin))?;
    let mut deadline = Deadline::new(sc.limits.max_seconds);
    let mut result = analysis.run(sc.blocks(), &mut deadline).map_err(|e| scenario_error(sc.run_error(e), origin))?;
    if let Some(settings) = &sc.caches {
        // The grid's schedule check (the same model with another R) runs on a second thread beside the main run;
        // the two share the threads.
        let both = sc.block_idx.is_none() && analysis.launch.grid.volume() > 1;
        let threads = if both { sc.limits.threads.div_ceil(2) } else { sc.limits.threads };
        analysis.threads = threads;
        let (main, check) = std::thread::scope(|scope| {
            let check = sc.block_idx.is_none().then(|| {
                scope.spawn(|| {
                    let mut a = sc.analysis().map_err(|e| scenario_error(e, origin))?;
                    a.threads = threads;
                    let mut deadline = Deadline::new(sc.limits.max_seconds);
                    a.cache_schedule_check(settings, &mut deadline).map_err(|e| scenario_error(sc.run_error(e), origin))
                })
            });
            let main = analysis
                .caches_alone(sc.block_idx, settings, &mut deadline)
                .map_err(|e| scenario_error(sc.run_error(e), origin));
            let check = match check {
                Some(h) => h.join().unwrap_or_else(|_| Err("the schedule check stopped unexpectedly".into())),
                None => Ok(None),
            };
            (main, check)
        });
        result.caches = Some(main?.with_schedule(check?));
    }
    Ok((analysis, result))
}

/// The detailed report of issue `issue` of instruction `instr` (an index into the result).
fn issue_report(
    sc: &Scenario,
    origin: &str,
    analysis: &Analysis,
    result: &ProgramResult,
    instr: usize,
    issue: usize,
) -> Result<Option<Report>, String> {
    let Some(i) = result.instructions.get(instr) else { return Ok(None) };
    let Some((warp, pass)) = i.issue_at(issue) else { return Ok(None) };
    let mut deadline = Deadline::new(sc.limits.max_seconds);
    let mut r =
        analysis.report(i.site, warp, pass, &mut deadline).map_err(|e| scenario_error(sc.run_error(e), origin))?;
    // With --caches the figure colours each sector by where the modelled memory system served it.
    if let (Some(r), Some(c)) = (r.as_mut(), &result.caches) {
        r.served = c.served.get(&(i.site as u32, warp, pass)).cloned().unwrap_or_default();
    }
    Ok(r)
}

fn run_analyze(args: AnalyzeArgs) -> Result<String, String> {
    let a = &args.input;
    let (sc, origin) = scenario_from(a)?;
    // The engine issue's contract: one instruction of one warp from --addr prints one report object.
    let single = a.addr.is_some() && a.preset.is_none() && sc.block.volume() <= 32 && sc.grid.volume() == 1;
    let (analysis, result) = run_scenario(&sc, &origin)?;
    if single {
        let report = issue_report(&sc, &origin, &analysis, &result, 0, 0)?.unwrap_or_else(|| {
            let instr = sc.instr().ok().unwrap_or_else(|| Instr::parse("LDG.E.32").expect("a valid mnemonic"));
            analyze(sc.cc, &instr, &crate::model::access::WarpAddrs([None; 32]), &sc.config)
        });
        return Ok(match args.format {
            Format::Json => serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?,
            Format::Text => report.to_text().trim_end().to_string(),
        });
    }
    let details: Vec<Option<Report>> = if args.steps {
        (0..result.instructions.len())
            .map(|k| issue_report(&sc, &origin, &analysis, &result, k, args.issue))
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    Ok(match args.format {
        Format::Json => {
            let mut v = serde_json::to_value(&result).map_err(|e| e.to_string())?;
            if let Some(list) = v.get_mut("instructions").and_then(|x| x.as_array_mut()) {
                for ((entry, d), r) in list.iter_mut().zip(&details).zip(&result.instructions) {
                    if let (Some(obj), Some(d)) = (entry.as_object_mut(), d) {
                        let (warp, pass) = r.issue_at(args.issue).unwrap_or((0, 0));
                        let report = serde_json::to_value(d).map_err(|e| e.to_string())?;
                        obj.insert(
                            "detail".into(),
                            serde_json::json!({ "issue": args.issue, "warp": warp, "pass": pass, "report": report }),
                        );
                    }
                }
            }
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        }
        Format::Text => {
            let mut out = result.to_text();
            if args.steps {
                for (k, (d, r)) in details.iter().zip(&result.instructions).enumerate() {
                    let (warp, pass) = r.issue_at(args.issue).unwrap_or((0, 0));
                    out.push_str(&format!("\n#{} steps of warp {warp}, pass {}:\n", k + 1, pass + 1));
                    match d {
                        Some(d) => out.push_str(&d.to_text()),
                        None => out.push_str(&format!("  (instruction {} has no issue {})\n", k + 1, args.issue)),
                    }
                }
            }
            out.trim_end().to_string()
        }
    })
}

fn run_figure(f: FigureArgs) -> Result<String, String> {
    let (sc, origin) = scenario_from(&f.input)?;
    let (analysis, result) = run_scenario(&sc, &origin)?;
    let count = result.instructions.len();
    let k =
        f.instr.checked_sub(1).filter(|&k| k < count).ok_or_else(|| {
            format!("--instr {}: the program has {count} memory instruction(s), counted from 1", f.instr)
        })?;
    let instr = &result.instructions[k];
    let report = issue_report(&sc, &origin, &analysis, &result, k, f.issue)?.ok_or_else(|| {
        format!(
            "--issue {}: instruction {} has {} warp-level issue(s) in the listed block, counted from 0",
            f.issue,
            f.instr,
            instr.issue_count()
        )
    })?;
    let report = &report;
    // What the totals assume and leave out goes under the figure, as on the page's export.
    let note = result.assumptions();
    let footnoted = |s: scene::Scene| match &note {
        Some(n) => scene::with_footnote(s, n),
        None => s,
    };
    let theme = match f.theme {
        ThemeArg::Light => scene::Theme::Light,
        ThemeArg::Dark => scene::Theme::Dark,
    };
    let n = scene::steps(report).len();
    let title = scene::title(&instr.op, result.cc, &instr.access);
    if f.view == FigureView::Tile {
        if f.step != "all-done" {
            return Err("--view tile draws one picture with no steps: leave out --step".into());
        }
        let tile = crate::figure::tile::tile_scene(report, &title)?;
        let text = svg::to_svg(&footnoted(tile), theme);
        let bytes = match f.format {
            FigureFormat::Svg => text.into_bytes(),
            FigureFormat::Png => png(&text)?,
        };
        write_output(&f.output, bytes)?;
        return Ok(String::new());
    }
    let render = |step: usize| -> Result<Vec<u8>, String> {
        let text = svg::to_svg(&footnoted(scene::scene(report, &title, step)), theme);
        match f.format {
            FigureFormat::Svg => Ok(text.into_bytes()),
            FigureFormat::Png => png(&text),
        }
    };
    match f.step.as_str() {
        "all" => {
            if f.output == "-" {
                return Err("--step all writes one file per step: give -o FILE".into());
            }
            // FILE.zip: every frame in one archive, named as the separate files would be.
            if let Some(stem) = f.output.strip_suffix(".zip") {
                let ext = match f.format {
                    FigureFormat::Svg => "svg",
                    FigureFormat::Png => "png",
                };
                let base = stem.rsplit('/').next().unwrap_or(stem);
                let files = (0..=n)
                    .map(|k| Ok((format!("{base}-{k:02}.{ext}"), render(k)?)))
                    .collect::<Result<Vec<_>, String>>()?;
                write_output(&f.output, crate::export::zip_files(&files)?)?;
                return Ok(format!("wrote {} frames in {}", files.len(), f.output));
            }
            let (stem, ext) = match f.output.rsplit_once('.') {
                Some((s, e)) => (s.to_string(), format!(".{e}")),
                None => (f.output.clone(), String::new()),
            };
            let mut names = Vec::new();
            for k in 0..=n {
                let name = format!("{stem}-{k:02}{ext}");
                write_output(&name, render(k)?)?;
                names.push(name);
            }
            Ok(format!("wrote {} frames: {} .. {}", names.len(), names[0], names[names.len() - 1]))
        }
        step => {
            let k = match step {
                "all-done" => n,
                s => s
                    .parse::<usize>()
                    .ok()
                    .filter(|&k| k <= n)
                    .ok_or_else(|| format!("--step `{s}`: give 0..{n} or all"))?,
            };
            write_output(&f.output, render(k)?)?;
            Ok(String::new())
        }
    }
}

/// Rasterises an exported SVG at 2x with resvg, using the system's fonts.
fn png(svg_text: &str) -> Result<Vec<u8>, String> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = usvg::Tree::from_str(svg_text, &opt).map_err(|e| format!("figure: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width() * 2, size.height() * 2).ok_or("figure: the PNG would be empty")?;
    resvg::render(&tree, tiny_skia::Transform::from_scale(2.0, 2.0), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("figure: {e}"))
}

fn run_check(c: CheckArgs) -> Result<(String, bool), String> {
    let src = read_input(&c.lab)?;
    let lab = crate::teach::lab_file::parse(&src).map_err(|e| format!("{} {e}", c.lab))?;
    let answers_text = read_input(&c.answers)?;
    let answers: crate::teach::lab::Answers = serde_json::from_str(&answers_text).map_err(|e| {
        let text = e.to_string();
        let message = text.rsplit_once(" at line ").map_or(text.as_str(), |(m, _)| m);
        format!("{} {}:{}: {message}", c.answers, e.line(), e.column())
    })?;
    let unknown: Vec<&String> = answers.answers.keys().filter(|k| !lab.exercises.iter().any(|e| &e.id == *k)).collect();
    if let Some(k) = unknown.first() {
        return Err(format!("{}: no exercise `{k}` in {}", c.answers, c.lab));
    }
    let grades = crate::teach::lab::grade(&lab, &answers);
    let all_pass = grades.iter().all(|g| g.goals.iter().all(|x| x.pass));
    let goals_met: usize = grades.iter().map(|g| g.goals.iter().filter(|x| x.pass).count()).sum();
    let goals_all: usize = grades.iter().map(|g| g.goals.len()).sum();
    if c.format == Format::Json {
        let v = serde_json::json!({ "lab": lab.title, "student": answers.student, "all_goals_pass": all_pass, "goals_met": goals_met, "goals": goals_all, "exercises": grades });
        return Ok((serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?, all_pass));
    }
    let who = if answers.student.is_empty() { String::new() } else { format!(" ({})", answers.student) };
    let mut out = format!("{}{who}: {goals_met} of {goals_all} goals met\n", lab.title);
    for (ex, g) in lab.exercises.iter().zip(&grades) {
        let mark = if g.done {
            "done"
        } else if g.goals.iter().all(|x| x.pass) {
            "goals met"
        } else {
            "open"
        };
        out.push_str(&format!("\n[{mark}] {}\n", ex.title));
        if let Some(e) = &g.error {
            out.push_str(&format!("  error: {e}\n"));
        }
        for r in &g.goals {
            out.push_str(&format!(
                "  {} {}{}{}\n",
                if r.pass { "✔" } else { "✘" },
                r.text,
                if r.check.is_empty() { String::new() } else { format!(" ({})", r.check) },
                if r.detail.is_empty() { String::new() } else { format!(": {}", r.detail) }
            ));
        }
        for (k, q) in g.questions.iter().enumerate() {
            out.push_str(&format!("  {} question {}\n", if *q { "✔" } else { "✘" }, k + 1));
        }
    }
    Ok((out.trim_end().to_string(), all_pass))
}

fn run_presets(p: PresetsArgs) -> Result<String, String> {
    if p.format == Format::Json {
        let list: Vec<serde_json::Value> = presets::PRESETS
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name, "title": p.title, "explanation": p.explanation, "cc": p.cc,
                    "lang": p.lang, "text": p.text, "op": p.op, "block": p.block.to_string(), "sets": p.sets,
                })
            })
            .collect();
        return serde_json::to_string_pretty(&list).map_err(|e| e.to_string());
    }
    let mut out = String::new();
    for p in presets::PRESETS.iter() {
        out.push_str(&format!("{:<24} CC {:<5} {:<10} {}\n", p.name, p.cc.to_string(), p.lang.name(), p.title));
    }
    Ok(out.trim_end().to_string())
}

/// Parses a 32-bit lane mask in hex, with or without `0x`.
fn parse_mask(text: &str) -> Result<LaneSet, InputError> {
    let t = text.trim();
    let lead = text.len() - text.trim_start().len();
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
    let start = lead + (t.len() - digits.len());
    let span = Span { start, end: start + digits.len().max(1) };
    if digits.is_empty() {
        return Err(InputError::at(text, span, "empty mask: give 32 bits in hex, e.g. 0xffff"));
    }
    if let Some((i, c)) = digits.char_indices().find(|(_, c)| !c.is_ascii_hexdigit() && *c != '_') {
        return Err(InputError::at(
            text,
            Span { start: start + i, end: start + i + c.len_utf8() },
            format!("`{c}` is not a hex digit"),
        ));
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    match u64::from_str_radix(&clean, 16) {
        Ok(v) if v <= u64::from(u32::MAX) => Ok(LaneSet(v as u32)),
        _ => Err(InputError::at(text, span, "mask out of range: a warp has 32 lanes, so at most 0xffffffff")),
    }
}

fn run_tma(t: TmaArgs) -> Result<String, String> {
    use crate::model::tma::{box_copy, BoxCopy};
    let bad = |flag: &str, m: String| format!("{flag}: {m}");
    let number = |flag: &str, text: &str| -> Result<u64, String> {
        let v = crate::lang::parse_set(&format!("v={text}")).map_err(|e| bad(flag, e.replace("--set v: ", "")))?.1;
        u64::try_from(v).map_err(|_| bad(flag, format!("`{text}` is negative")))
    };
    let (w, h) = t
        .box_dim
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
        .ok_or_else(|| bad("--box", format!("expected WIDTHxROWS in elements, as 64x8, not `{}`", t.box_dim)))?;
    if w == 0 || w > crate::model::tma::MAX_BOX_DIM || !matches!(t.elem_bytes, 1 | 2 | 4 | 8) {
        return Err(bad(
            "--box",
            format!(
                "the inner box dimension is 1 to 256 elements of 1, 2, 4 or 8 bytes, not {w} x {} bytes",
                t.elem_bytes
            ),
        ));
    }
    let b = BoxCopy {
        global: number("--global", &t.global)?,
        pitch: t.pitch,
        rows: h,
        row_bytes: w * t.elem_bytes,
        shared: number("--shared", &t.shared)?,
        swizzle: t.swizzle.parse().map_err(|e| bad("--swizzle", e))?,
    };
    let c = box_copy(&b)?;
    if t.format == Format::Json {
        let value = serde_json::json!({ "box": b, "cost": c });
        return serde_json::to_string_pretty(&value).map_err(|e| e.to_string());
    }
    let mut out = format!(
        "TMA box copy {}x{} of {}-byte elements ({} bytes per row), swizzle {}\nglobal read: {} lines, {} sectors ({} if 32-byte aligned), {} bytes\nshared layout (bank group of each 16-byte chunk, rows down, chunks across):\n",
        w,
        h,
        t.elem_bytes,
        b.row_bytes,
        t.swizzle,
        c.lines,
        c.sectors,
        c.ideal_sectors,
        c.bytes
    );
    for r in 0..b.rows {
        let groups: Vec<String> = c.chunks.iter().filter(|k| k.row == r).map(|k| k.bank_group.to_string()).collect();
        out.push_str(&format!("  row {r:>3}: {}\n", groups.join(" ")));
    }
    out.push_str("A TMA copy writes shared memory without LSU wavefronts; read the tile with the same swizzle (sw128(), sw64(), sw32() in expressions) to see the reads' conflicts.");
    Ok(out)
}

fn run_facts(f: FactsArgs) -> Result<String, String> {
    let rows: Vec<&arch::CcFacts> = match f.cc {
        Some(cc) => vec![cc.facts()],
        None => ALL_CCS.iter().map(|c| c.facts()).collect(),
    };
    let carve = match (f.cc, f.carveout) {
        (Some(cc), Some(c)) => Some(arch::carveout(cc, c)?),
        _ => None,
    };
    if f.format == Format::Json {
        let value = serde_json::json!({ "facts": rows, "carveout": carve });
        return serde_json::to_string_pretty(&value).map_err(|e| e.to_string());
    }
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!(
            "CC {:<5} {:<10} {:<28} shared KB {:?}, max {} KB/block, L2 {}, bank {} B, L1 default {:?}\n         {}\n",
            r.cc.to_string(),
            format!("{:?}", r.family),
            r.example_gpu,
            r.shared_capacities_kb,
            r.max_shared_per_block_kb,
            r.l2,
            r.bank_width_bytes,
            r.l1_default,
            r.l1_shared
        ));
        if !r.unchecked.is_empty() {
            out.push_str(&format!("         unchecked: {}\n", r.unchecked));
        }
    }
    if let Some(c) = carve {
        out.push_str(&format!("carveout: {}\n", c.explanation));
    }
    Ok(out.trim_end().to_string())
}
