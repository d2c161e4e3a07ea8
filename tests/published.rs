//! Kernels as people publish them (tests/data/published/, origins and licenses in its README): each kernel
//! of `kernels.tsv` analysed three ways on CC 8.0, from its `.cu` file as published, from the PTX NVRTC 12.9
//! made of it and from the SASS ptxas made of that PTX (`make.sh`), with the launch and values of the
//! repository's own host code. Memory instructions are summed per source line (the CUDA front end's line; the
//! PTX's `.loc` and the SASS's `//## File` line information, which name the same file) and the three languages
//! compared line by line.
//!
//! `agreement.txt` holds the outcome, every number in it: the lines where the languages agree are counted,
//! and each line where they differ is listed with each language's figures. Each kernel with a difference has
//! its reason in `differences.txt` (what the compiler merged, kept in registers or reloaded; an assumption
//! about data), and each reason there has a difference: a change that makes two languages agree, or disagree,
//! shows in both files. `UPDATE_EXPECT=1 cargo test --test published` rewrites `agreement.txt` for review.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use warpscope::analysis::ProgramResult;
use warpscope::lang::Lang;
use warpscope::model::arch::Cc;
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/published");

/// One row of `kernels.tsv`.
struct Kernel {
    file: String,
    build: String,
    kernel: String,
    block: String,
    grid: String,
    cuda_sets: Vec<String>,
    symbol: String,
    ptx_sets: Vec<String>,
    sass_sets: Vec<String>,
    /// Data given to the CUDA kernel (column 11, `NAME=SOURCE;...`, files under this folder), and to its PTX
    /// and SASS, whose pointer parameters are `param_0`, `param_1` ... (column 12).
    cuda_data: Vec<String>,
    asm_data: Vec<String>,
}

fn kernels() -> Vec<Kernel> {
    let text = std::fs::read_to_string(format!("{DIR}/kernels.tsv")).expect("kernels.tsv");
    let list = |s: &str| if s == "-" { Vec::new() } else { s.split(',').map(str::to_string).collect() };
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert!(f.len() >= 9, "kernels.tsv: {l}");
            Kernel {
                file: f[0].into(),
                build: f[1].into(),
                kernel: f[2].into(),
                block: f[3].into(),
                grid: f[4].into(),
                cuda_sets: list(f[5]),
                symbol: f[6].into(),
                ptx_sets: list(f[7]),
                sass_sets: list(f[8]),
                cuda_data: f.get(10).map_or(Vec::new(), |d| d.split(';').map(str::to_string).collect()),
                asm_data: f.get(11).map_or(Vec::new(), |d| d.split(';').map(str::to_string).collect()),
            }
        })
        .collect()
}

/// Each line of a C++ text mapped to the statement it is part of, named by its lines (`95` or `95-96`): where a
/// statement spans lines, compilers attribute its accesses to one of them by their scheduling (a store to the
/// line of its `=`, of its value, or of the last address operand it computed), so the languages are compared
/// statement by statement. A statement ends at `;`, `{` or `}` outside parentheses, or at the end of a
/// preprocessor line; comments and literals are skipped.
fn statements(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut line = 1;
    let mut start = 1;
    let mut depth = 0i32;
    let mut ends: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    let mut directive = false;
    let mut blank = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                if directive && (i == 0 || b[i - 1] != b'\\') {
                    ends.push((start, line));
                    directive = false;
                    blank = true;
                }
                line += 1;
                if blank {
                    start = line;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i + 1 < b.len() && b[i + 1] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    if b[i] == b'\n' {
                        line += 1;
                        if blank {
                            start = line;
                        }
                    }
                    i += 1;
                }
                i += 1;
            }
            b'"' | b'\'' => {
                i += 1;
                while i < b.len() && b[i] != c && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                blank = false;
            }
            b'#' if blank => {
                directive = true;
                blank = false;
            }
            b'(' | b'[' => {
                depth += 1;
                blank = false;
            }
            b')' | b']' => {
                depth -= 1;
                blank = false;
            }
            b';' | b'{' | b'}' if depth <= 0 && !directive => {
                ends.push((start, line));
                blank = true;
                start = line;
                depth = 0;
            }
            c if c.is_ascii_whitespace() => {}
            _ => {
                if blank {
                    start = line;
                }
                blank = false;
            }
        }
        i += 1;
    }
    let mut of = vec![String::new(); line + 2];
    for (k, name) in of.iter_mut().enumerate() {
        *name = format!("{k:5}");
    }
    for (a, z) in ends {
        if z > a {
            for name in of.iter_mut().take(z + 1).skip(a) {
                *name = format!("{a:5}-{z}");
            }
        }
    }
    of
}

/// What one source line costs: per space, warp issues, requests, sectors, wavefronts (passes for constant
/// memory).
type Line = BTreeMap<String, [u64; 4]>;

/// The memory instructions of a result summed per source line of `file` (lines of other files, a header's,
/// under their file's name).
fn per_line(r: &ProgramResult, lang: Lang, file: &str, stmts: &[String]) -> BTreeMap<String, Line> {
    let base = |f: &str| f.rsplit('/').next().unwrap_or(f).to_string();
    let stmt = |l: usize| stmts.get(l).cloned().unwrap_or_else(|| format!("{l:5}"));
    let mut out: BTreeMap<String, Line> = BTreeMap::new();
    for i in &r.instructions {
        // A constant read at one address per warp is one pass (docs/model.md#constant-memory) however it is written: ptxas makes
        // most of them immediate `c[0x3][...]` operands, no instruction at all, and nvcc hoists them where it
        // likes. Only constant reads at per-thread addresses (more passes than issues) are compared, as passes.
        if i.constant.is_some_and(|k| k.passes == i.warps) {
            continue;
        }
        let at = match (lang, &i.source) {
            // The CUDA front end names a header's line as the compilers do; its own lines are the file's.
            (Lang::Cuda, Some(s)) if base(&s.file) != base(file) => format!("{}:{}", base(&s.file), s.line),
            (Lang::Cuda, _) => stmt(i.line),
            (_, Some(s)) if base(&s.file) == base(file) => stmt(s.line as usize),
            (_, Some(s)) => format!("{}:{}", base(&s.file), s.line),
            (_, None) => "no line information".to_string(),
        };
        let m = i.memory.as_ref();
        let b = i.banks.as_ref();
        let e = out.entry(at).or_default().entry(format!("{:?}", i.space).to_lowercase()).or_default();
        e[0] += i.warps;
        e[1] += m.map_or(0, |m| m.requests);
        e[2] += m.map_or(0, |m| m.sectors);
        e[3] += b.map_or(0, |b| b.wavefronts) + i.constant.map_or(0, |k| k.passes);
    }
    out
}

fn show(l: Option<&Line>) -> String {
    match l {
        None => "-".into(),
        Some(l) => l
            .iter()
            .map(|(space, [w, rq, s, wf])| {
                let mut t = format!("{space} {w} issues");
                if *rq > 0 || *s > 0 {
                    t += &format!(" {rq} req {s} sectors");
                }
                if *wf > 0 {
                    t += &format!(" {wf} {}", if space == "constant" { "passes" } else { "wavefronts" });
                }
                t
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Runs one language; `launch`: the block and grid the CUDA file's own launch gave, for PTX and SASS.
fn run(
    lang: Lang,
    text: String,
    k: &Kernel,
    kernel: &str,
    sets: &[String],
    data: &[String],
    launch: Option<(Dim3, Dim3)>,
) -> Result<ProgramResult, String> {
    let (block, grid) = match launch {
        Some(l) => l,
        None => (
            Dim3::parse(&k.block, "block").map_err(|e| e.to_string())?,
            Dim3::parse(&k.grid, "grid").map_err(|e| e.to_string())?,
        ),
    };
    let mut sc = Scenario {
        lang,
        text,
        op: String::new(),
        cc: Cc::parse("8.0").expect("cc"),
        block,
        grid,
        kernel: Some(kernel.to_string()),
        sets: sets.to_vec(),
        ..Scenario::default()
    };
    #[cfg(not(feature = "data"))]
    if let Some(d) = data.first() {
        return Err(format!("this build does not read data ({d})"));
    }
    #[cfg(feature = "data")]
    for d in data {
        let mut spec = warpscope::data::DataSpec::parse(d)?;
        if spec.is_file() {
            let path = format!("{DIR}/{}", spec.file_path().0);
            spec.file = Some(std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?.into());
        }
        sc.data.push(spec);
    }
    if lang == Lang::Cuda {
        let path = format!("{DIR}/{}", k.file);
        sc.headers = warpscope::cli::headers(&sc.text, Some(&path), &[])?;
    }
    sc.run().map_err(|e| e.to_string().lines().next().unwrap_or("").to_string())
}

/// The outcome of one kernel: a heading, then what each pair of languages does on its lines.
fn compare(k: &Kernel, out: &mut String) -> BTreeSet<&'static str> {
    let read = |f: &str| std::fs::read_to_string(format!("{DIR}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}"));
    let cuda = run(Lang::Cuda, read(&k.file), k, &k.kernel, &k.cuda_sets, &k.cuda_data, None);
    // Where the file's host code launches the kernel with constants, that launch is the one PTX and SASS run.
    let launch = cuda.as_ref().ok().map(|r| (r.launch.block, r.launch.grid));
    let results = [
        ("cuda", cuda),
        (
            "ptx",
            run(
                Lang::Ptx,
                read(&format!("{}/nvrtc_sm_80.ptx", k.build)),
                k,
                &k.symbol,
                &k.ptx_sets,
                &k.asm_data,
                launch,
            ),
        ),
        (
            "sass",
            run(
                Lang::Sass,
                read(&format!("{}/nvrtc_sm_80.sass", k.build)),
                k,
                &k.symbol,
                &k.sass_sets,
                &k.asm_data,
                launch,
            ),
        ),
    ];
    let _ = writeln!(out, "\n== {} {} (block {}, grid {})", k.file, k.kernel, k.block, k.grid);
    if !k.cuda_data.is_empty() {
        let _ = writeln!(out, "data: {} (PTX and SASS: {})", k.cuda_data.join("; "), k.asm_data.join("; "));
    }
    let stmts = statements(&read(&k.file));
    let mut lines = Vec::new();
    for (name, r) in &results {
        match r {
            Ok(r) => {
                let _ = writeln!(out, "{name}: {} memory instructions", r.instructions.len());
                lines.push(Some(per_line(r, if *name == "cuda" { Lang::Cuda } else { Lang::Ptx }, &k.file, &stmts)));
            }
            Err(e) => {
                let _ = writeln!(out, "{name}: error: {e}");
                lines.push(None);
            }
        }
    }
    let mut differ = BTreeSet::new();
    for (a, b, pair) in [(0, 1, "cuda-ptx"), (1, 2, "ptx-sass")] {
        let (Some(x), Some(y)) = (&lines[a], &lines[b]) else { continue };
        let all: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
        let same = all.iter().filter(|l| x.get(**l) == y.get(**l)).count();
        let _ = write!(out, "{pair}: {same} of {} statements agree", all.len());
        let diff: Vec<&&String> = all.iter().filter(|l| x.get(**l) != y.get(**l)).collect();
        if diff.is_empty() {
            let _ = writeln!(out);
            continue;
        }
        differ.insert(pair);
        let _ = writeln!(out, "; they differ on:");
        for l in diff {
            let _ = writeln!(out, "  line {}: {} | {}", l.trim(), show(x.get(*l)), show(y.get(*l)));
        }
    }
    differ
}

#[test]
fn published_kernels_agree_line_by_line_across_cuda_ptx_and_sass() {
    let mut out = String::from(
        "# Written by tests/published.rs (UPDATE_EXPECT=1 to rewrite): each kernel of kernels.tsv on CC 8.0,\n\
         # as CUDA, NVRTC 12.9's PTX and its SASS, memory instructions summed per source line and compared\n\
         # (constant reads in passes, those at one address per warp left out: ptxas folds them into operands).\n\
         # Each kernel with a difference has its reason in differences.txt.\n",
    );
    let mut found: BTreeSet<(String, &'static str)> = BTreeSet::new();
    // The kernels run on every core, each into its own text, joined in the manifest's order.
    let ks = kernels();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, String, BTreeSet<&'static str>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(k) = ks.get(i) else { break };
                        let mut text = String::new();
                        let pairs = compare(k, &mut text);
                        mine.push((i, text, pairs));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a worker")).collect()
    });
    done.sort_by_key(|d| d.0);
    for (i, text, pairs) in done {
        out.push_str(&text);
        for pair in pairs {
            found.insert((ks[i].kernel.clone(), pair));
        }
    }
    expect_test::expect_file!["data/published/agreement.txt"].assert_eq(&out);
    // Every difference has a reason, and every reason a difference.
    let reasons = std::fs::read_to_string(format!("{DIR}/differences.txt")).expect("differences.txt");
    let mut given: BTreeSet<(String, &'static str)> = BTreeSet::new();
    for l in reasons.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(f.len(), 3, "differences.txt: kernel, pair, reason: {l}");
        assert!(!f[2].trim().is_empty(), "differences.txt: a reason for {l}");
        let pair = match f[1] {
            "cuda-ptx" => "cuda-ptx",
            "ptx-sass" => "ptx-sass",
            other => panic!("differences.txt: pair `{other}`"),
        };
        given.insert((f[0].to_string(), pair));
    }
    let unexplained: Vec<_> = found.difference(&given).collect();
    let stale: Vec<_> = given.difference(&found).collect();
    assert!(unexplained.is_empty(), "differences without a reason in differences.txt: {unexplained:?}");
    assert!(stale.is_empty(), "reasons in differences.txt for languages that now agree: {stale:?}");
}
