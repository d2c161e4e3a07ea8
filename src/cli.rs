//! The native command line: thin glue that parses arguments, calls the core and prints. Exit codes: 0 on
//! success, 2 on bad input (with one message naming the problem and where), never a panic.

use crate::access::{Instr, LaneSet};
use crate::arch::{self, BankMode, Carveout, Cc, L1Choice, ALL_CCS};
use crate::engine::{analyze, Config, Windows};
use crate::pattern::{self, InputError, Span};
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
    Analyze(AnalyzeArgs),
    /// Show the per-CC facts table, or one CC's facts and its carveout.
    Facts(FactsArgs),
}

#[derive(clap::Args, Debug)]
struct AnalyzeArgs {
    /// Compute capability: 2.0 3.0 3.5 3.7 5.0 5.2 6.0 6.1 7.0 7.5 8.0 8.6 8.9 9.0 10.0 12.0.
    #[arg(long, value_parser = Cc::parse, default_value = "8.0")]
    cc: Cc,
    /// SASS mnemonic with modifiers: LDG.E.32, LDG.E.CG.64, LDS.128, STS.64, ST.E.32, LDL.32, ...
    #[arg(long)]
    op: String,
    /// Byte address as an expression in `lane` (0..31), e.g. `4*lane`, `0x1000 + 8*(lane ^ 1)`.
    #[arg(long)]
    addr: String,
    /// Active-lane mask in hex (bit i = lane i); default all 32 lanes.
    #[arg(long)]
    mask: Option<String>,
    /// L1 caching of global loads (-Xptxas -dlcm=ca|cg); default: the CC's documented default.
    #[arg(long, value_enum, default_value_t = L1Arg::Default)]
    l1: L1Arg,
    /// Kepler shared-memory bank mode in bytes.
    #[arg(long, value_parser = ["4", "8"], default_value = "4")]
    bank_mode: String,
    /// Misaligned lanes of LDL/LDS/ST/STS/STL/LD become error lanes instead of warnings.
    #[arg(long)]
    strict: bool,
    /// Shared bytes allocated per block; lanes past it are error lanes.
    #[arg(long)]
    shared_bytes: Option<u64>,
    /// Local bytes allocated per thread; lanes past it are error lanes.
    #[arg(long)]
    local_bytes: Option<u64>,
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

#[derive(Clone, Copy, Debug, ValueEnum)]
enum L1Arg {
    Default,
    On,
    Off,
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
        Command::Analyze(a) => run_analyze(a),
        Command::Facts(f) => run_facts(f),
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

fn flag_error(flag: &str, err: InputError) -> String {
    format!("{flag} {}", err)
}

fn run_analyze(a: AnalyzeArgs) -> Result<String, String> {
    let instr = Instr::parse(&a.op).map_err(|e| {
        flag_error("--op", InputError::at(&a.op, Span { start: e.column, end: e.column + e.len }, e.message))
    })?;
    let mask = match &a.mask {
        None => LaneSet::ALL,
        Some(text) => parse_mask(text).map_err(|e| flag_error("--mask", e))?,
    };
    let warp = pattern::warp_from_expr(&a.addr, &instr, mask).map_err(|e| flag_error("--addr", e))?;
    let cfg = Config {
        l1: match a.l1 {
            L1Arg::Default => L1Choice::Default,
            L1Arg::On => L1Choice::On,
            L1Arg::Off => L1Choice::Off,
        },
        bank_mode: if a.bank_mode == "8" { BankMode::EightByte } else { BankMode::FourByte },
        strict_align: a.strict,
        windows: Windows { shared_alloc_bytes: a.shared_bytes, local_alloc_bytes: a.local_bytes, ..Windows::default() },
    };
    let report = analyze(a.cc, &instr, &warp, &cfg);
    Ok(match a.format {
        Format::Json => serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?,
        Format::Text => report.to_text().trim_end().to_string(),
    })
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
