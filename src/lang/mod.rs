//! The input languages: text in, the engine's types out. This is the only fallible entry to the core; every
//! error carries the line and column where it starts and an excerpt with a caret.
//!
//! May import: `text`, `model` (instructions, addresses, notes, the CC a listing targets), `program` (what every
//! language lowers into). Nothing above: a language knows nothing of costs, scenarios or front ends.

pub mod addresses;
pub mod cexpr;
#[cfg(feature = "lang-cuda")]
pub mod cuda;
pub mod expr;
pub mod layout;
pub mod lex;
pub mod params;
#[cfg(feature = "lang-ptx")]
pub mod ptx;
#[cfg(feature = "lang-sass")]
pub mod sass;

use crate::model::access::{Instr, LaneSet, WarpAddrs, WARP_LANES};
use crate::program::launch::Launch;
use crate::program::{Builder, Op, PredRef, Program, Site};
use expr::Vars;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::rc::Rc;

pub use crate::text::Span;

/// A problem with the user's input: what is wrong and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct InputError {
    /// What is wrong, in one sentence.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The offending line followed by a caret line under the problem.
    pub excerpt: String,
}

impl InputError {
    /// An error about the run as a whole, not about a place in the text (a time limit reached between blocks):
    /// line 0, no column and no excerpt, printed without a position.
    pub fn unplaced(message: impl Into<String>) -> InputError {
        InputError { message: message.into(), line: 0, column: 0, excerpt: String::new() }
    }

    /// Builds an error for `span` of `source`.
    pub fn at(source: &str, span: Span, message: impl Into<String>) -> InputError {
        let start = span.start.min(source.len());
        let start = (0..=start).rev().find(|&i| source.is_char_boundary(i)).unwrap_or(0);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let text = &source[line_start..line_end];
        let mut end = span.end.clamp(start, line_end);
        while !source.is_char_boundary(end) {
            end += 1;
        }
        let width = source[start..end].chars().count().max(1);
        InputError { message: message.into(), line, column, excerpt: excerpt(text, column - 1, width) }
    }
}

/// Line and column lookups in a text without rescanning it: line starts found once, and the character
/// column of the last lookup kept, so that many lookups in one long line stay linear overall.
pub struct LineIndex<'a> {
    src: &'a str,
    starts: Vec<usize>,
    last: std::cell::Cell<(usize, usize)>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `src`.
    pub fn new(src: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { src, starts, last: std::cell::Cell::new((0, 0)) }
    }

    /// The 1-based line of a byte offset.
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset.min(self.src.len()))
    }

    /// The text of 1-based line `line`, without its newline.
    pub fn text(&self, line: usize) -> &'a str {
        let start = self.starts.get(line.wrapping_sub(1)).copied().unwrap_or(self.src.len());
        let end = self.starts.get(line).map_or(self.src.len(), |e| e - 1);
        self.src.get(start..end.max(start)).unwrap_or("")
    }

    /// `line:column` (1-based; the column counts characters) of a byte offset.
    pub fn pos(&self, offset: usize) -> String {
        let mut offset = offset.min(self.src.len());
        while !self.src.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line(offset);
        let start = self.starts[line - 1];
        let (at, chars) = self.last.get();
        let col = if at >= start && at <= offset {
            chars + self.src[at..offset].chars().count()
        } else {
            self.src[start..offset].chars().count()
        };
        self.last.set((offset, col));
        format!("{line}:{}", col + 1)
    }
}

/// At most this many characters of a line are shown under an error; a longer line (a minified paste, a
/// thousand braces) is cut to a window around the problem, so the message fits on a screen.
pub const EXCERPT_CHARS: usize = 100;

/// The line and a caret line under `width` characters from character `at`, windowed to [`EXCERPT_CHARS`].
fn excerpt(text: &str, at: usize, width: usize) -> String {
    let n = text.chars().count();
    if n <= EXCERPT_CHARS {
        return format!("{text}\n{}{}", " ".repeat(at), "^".repeat(width));
    }
    // Keep up to 40 characters of context before the problem.
    let from = at.saturating_sub(40);
    let to = (from + EXCERPT_CHARS).min(n);
    let (lead, trail) = (if from > 0 { "…" } else { "" }, if to < n { "…" } else { "" });
    let shown: String = text.chars().skip(from).take(to - from).collect();
    let caret_at = at - from + lead.chars().count();
    let width = width.min(to.saturating_sub(at)).max(1);
    format!("{lead}{shown}{trail}\n{}{}", " ".repeat(caret_at), "^".repeat(width))
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            // About the run, not a place in the text ([`InputError::unplaced`]).
            0 => write!(f, "{}", self.message),
            _ => write!(f, "{}:{}: {}\n{}", self.line, self.column, self.message, self.excerpt),
        }
    }
}

/// Checks a thread's address against the instruction's address width.
fn checked_addr(source: &str, value: i128, instr: &Instr, who: &str) -> Result<u64, InputError> {
    crate::program::exec::address_of(value, instr.address_bits(), &instr.text, who).map_err(|why| {
        let span = crate::program::exec::whole_span(source);
        InputError::at(source, span, why)
    })
}

/// Evaluates an address expression for the lanes of `mask` of one warp (warp 0 of a 32-thread block).
pub fn warp_from_expr(source: &str, instr: &Instr, mask: LaneSet) -> Result<WarpAddrs, InputError> {
    let pattern = expr::Pattern::parse(source, &[])?;
    let launch = Launch::default();
    let mut addrs = [None; WARP_LANES];
    for (lane, slot) in addrs.iter_mut().enumerate() {
        if !mask.contains(lane) {
            continue;
        }
        let t = launch.thread(lane as u32);
        let value = pattern
            .eval(&|name| launch.builtin(&t, name))
            .map_err(|err| InputError::at(source, err.span, format!("{} (lane {lane})", err.message)))?;
        if let Some(v) = value {
            *slot = Some(checked_addr(source, v, instr, &format!("lane {lane}"))?);
        }
    }
    Ok(WarpAddrs(addrs))
}

/// The input languages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    /// One address expression per thread.
    Expr,
    /// CUDA: a snippet, a kernel or a whole `.cu` file.
    Cuda,
    /// SASS text.
    Sass,
    /// A PTX module.
    Ptx,
    /// Raw addresses, 32 per warp.
    Addresses,
}

impl Lang {
    /// All languages, in the order the page lists them.
    pub const ALL: [Lang; 5] = [Lang::Expr, Lang::Cuda, Lang::Ptx, Lang::Sass, Lang::Addresses];

    /// The short name used by the CLI, the page and URLs.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Expr => "expr",
            Lang::Cuda => "cuda",
            Lang::Sass => "sass",
            Lang::Ptx => "ptx",
            Lang::Addresses => "addresses",
        }
    }

    /// Whether this build carries the language's front end. The command line carries every one; the page
    /// splits CUDA, PTX and SASS between three analysis workers (`warpscope-engine`, `-ptx`, `-sass`) to keep
    /// each within its size budget.
    pub fn available(self) -> bool {
        match self {
            Lang::Cuda => cfg!(feature = "lang-cuda"),
            Lang::Ptx => cfg!(feature = "lang-ptx"),
            Lang::Sass => cfg!(feature = "lang-sass"),
            Lang::Expr | Lang::Addresses => true,
        }
    }

    /// Parses a short name.
    pub fn parse(text: &str) -> Result<Lang, String> {
        Lang::ALL
            .iter()
            .copied()
            .find(|l| l.name() == text)
            .ok_or_else(|| format!("unknown language `{text}` (known: expr, cuda, ptx, sass, addresses)"))
    }
}

/// Everything needed to turn text into a trace.
#[derive(Clone, Debug)]
pub struct Source<'a> {
    /// The language.
    pub lang: Lang,
    /// The text.
    pub text: &'a str,
    /// The instruction, for `expr` (required) and `addresses` (the default before any op line).
    pub op: Option<Instr>,
    /// The launch.
    pub launch: Launch,
    /// `--set` values: variables, registers (`R4`, `UR4`) and constant-bank words (`c[0x0][0x160]`).
    pub vars: &'a Vars,
    /// The kernel to run, for listings with several (`--kernel`).
    pub kernel: Option<&'a str>,
    /// The compute capability the program runs on.
    pub cc: crate::model::arch::Cc,
    /// Named layouts an address expression may call (`--layout`).
    pub layouts: Rc<layout::Layouts>,
    /// Files a CUDA file includes (`#include "common.h"`), by name.
    pub headers: &'a [Header],
}

/// A file that a CUDA file `#include`s, given with it (the command line reads them beside the file; a page user
/// pastes them above the kernel).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Header {
    /// The name `#include "..."` uses (`common.h`, `../common.h`: matched by its last path component too).
    pub name: String,
    /// Its text.
    pub text: String,
}

/// A lowered pattern: the program, and the block size the pattern itself implies (address lists give one
/// row per warp).
pub struct Lowered {
    /// The program.
    pub program: Program,
    /// The block size to run, when the language decides it.
    pub block: Option<crate::program::launch::Dim3>,
    /// The grid the input itself gives (a CUDA file's launch), overriding the settings'.
    pub grid: Option<crate::program::launch::Dim3>,
}

/// A kernel a file offers in its menu.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelChoice {
    /// The kernel as the file names it (`sgemm`, `reduce<256>`, or a template's bare name).
    pub name: String,
    /// What choosing it runs (`--kernel`): the name, or a template with example arguments.
    pub value: String,
    /// For a template kernel that nothing in the file instantiates: the suggested arguments (`int, 256`).
    pub template: Option<String>,
}

/// The kernels a CUDA file offers, read from its top level without lowering any kernel's body, so that one
/// that fails leaves the others choosable. `None` for the other languages (their menus come with a result).
pub fn kernel_choices(src: &Source) -> Option<Result<Vec<KernelChoice>, InputError>> {
    match src.lang {
        #[cfg(feature = "lang-cuda")]
        Lang::Cuda => Some(cuda::kernels(
            src.text,
            src.vars,
            cuda::Options { kernel: None, sm: src.cc.sm(), headers: src.headers },
        )),
        _ => None,
    }
}

/// Parses the source and lowers it into a program (the only fallible step; running can still stop on a value
/// the program needs but cannot know).
pub fn lower(src: &Source) -> Result<Lowered, InputError> {
    let lowered = lower_any(src)?;
    check_available(src, &lowered.program)?;
    Ok(lowered)
}

/// Refuses an instruction the chosen CC does not have (`ldmatrix` before 7.5, `cp.async` before 8.0,
/// `stmatrix` before 9.0), at its line, naming the first CC that has it.
fn check_available(src: &Source, program: &Program) -> Result<(), InputError> {
    for site in &program.sites {
        let Some(first) = site.instr.base.first_cc() else { continue };
        if src.cc >= first {
            continue;
        }
        let line_start: usize = src.text.split_inclusive('\n').take(site.line.saturating_sub(1)).map(str::len).sum();
        let line = src.text[line_start.min(src.text.len())..].lines().next().unwrap_or("");
        let word = site.instr.base.name();
        let at = line
            .to_ascii_uppercase()
            .find(word)
            .or_else(|| line.find(site.instr.base.ptx_name()))
            .unwrap_or(line.len() - line.trim_start().len());
        let len = line[at..].split(|c: char| c.is_whitespace() || c == '(' || c == ';').next().map_or(1, str::len);
        let span = Span { start: line_start + at, end: line_start + at + len.max(1) };
        return Err(InputError::at(
            src.text,
            span,
            format!(
                "`{}` ({}) needs CC {first} or later; CC {} does not have it (PTX ISA, {}: sm_{})",
                site.instr.text,
                site.instr.base.ptx_name(),
                src.cc,
                site.instr.base.ptx_name(),
                first.sm()
            ),
        ));
    }
    Ok(())
}

fn lower_any(src: &Source) -> Result<Lowered, InputError> {
    let program = match src.lang {
        Lang::Expr => expr_program(src)?,
        #[cfg(feature = "lang-cuda")]
        Lang::Cuda => {
            let sm = src.cc.sm();
            let l = cuda::lower(
                src.text,
                src.launch,
                src.vars,
                cuda::Options { kernel: src.kernel, sm, headers: src.headers },
            )?;
            return Ok(Lowered { program: l.program, block: l.block, grid: l.grid });
        }
        #[cfg(feature = "lang-sass")]
        Lang::Sass => {
            sass::lower(src.text, src.launch, src.vars, sass::Options { kernel: src.kernel, sm: src.cc.sm() })?
        }
        #[cfg(feature = "lang-ptx")]
        Lang::Ptx => ptx::lower(src.text, src.launch, src.vars, ptx::Options { kernel: src.kernel, sm: src.cc.sm() })?,
        Lang::Addresses => {
            let (program, block) = addresses::lower(src.text, src.op.clone())?;
            return Ok(Lowered { program, block: Some(block), grid: None });
        }
        #[allow(unreachable_patterns)]
        lang => {
            return Err(InputError::at(
                src.text,
                Span { start: 0, end: 1 },
                format!("this build of warpscope has no {} front end", lang.name()),
            ))
        }
    };
    Ok(Lowered { program, block: None, grid: None })
}

/// An address expression as a program: the expression, then the instruction for the lanes it gives.
fn expr_program(src: &Source) -> Result<Program, InputError> {
    let text = src.text;
    let Some(instr) = src.op.clone() else {
        return Err(InputError::at(
            text,
            Span { start: 0, end: 1 },
            "an address expression needs an instruction (--op)",
        ));
    };
    let names: Vec<String> = src.vars.keys().cloned().collect();
    let pattern = expr::Pattern::parse_with(text, &names, src.layouts.clone())?;
    let whole = Span { start: 0, end: text.len().max(1) };
    let source = match (pattern.source_pattern(), instr.base == crate::model::access::Base::Ldgsts) {
        (Some(p), true) => Some(p),
        (None, false) => None,
        (None, true) => {
            return Err(InputError::at(
                text,
                whole,
                format!(
                    "{} copies from global to shared memory: write `SHARED from GLOBAL`, as in `16*lane from 16*tid`",
                    instr.text
                ),
            ))
        }
        (Some(_), false) => {
            let at = text.find("from").unwrap_or(0);
            return Err(InputError::at(
                text,
                Span { start: at, end: at + 4 },
                format!("`from` gives a copy's global source; {} is not a copy (cp.async is LDGSTS)", instr.text),
            ));
        }
    };
    let mut b = Builder::new();
    let span = whole;
    let (dst, pred) = (b.reg(), b.pred());
    let vars = Rc::new(src.vars.clone());
    b.emit(
        Op::Eval {
            dst,
            pred,
            expr: Rc::new(pattern),
            vars: vars.clone(),
            addr_bits: instr.address_bits(),
            op_text: instr.text.clone().into(),
        },
        None,
        span,
    );
    let from = source.map(|p| {
        let (reg, p2) = (b.reg(), b.pred());
        b.emit(
            Op::Eval {
                dst: reg,
                pred: p2,
                expr: Rc::new(p),
                vars,
                addr_bits: instr.source_address_bits(),
                op_text: instr.text.clone().into(),
            },
            None,
            span,
        );
        reg
    });
    let site = b.site(
        (0, 0),
        Site {
            line: 1,
            text: text.trim().to_string(),
            access: text.trim().to_string(),
            instr,
            notes: Vec::new(),
            source: None,
        },
    );
    let ctx = b.ctx("the address depends on ");
    b.emit(Op::Mem { site, addr: dst, plg: None, src: from, ctx, data: None }, Some(PredRef::of(pred)), span);
    Ok(b.finish())
}

/// The SASS instruction a PTX `ldmatrix`, `stmatrix` or `cp.async` becomes, from its opcode split at dots and,
/// for `cp.async`, its copy size in bytes: `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` is
/// `LDSM.16.MT88.4` (PTX ISA, "ldmatrix", "stmatrix"); `cp.async.cg.shared.global.L2::128B [d], [s], 16` is
/// `LDGSTS.E.BYPASS.LTC128B.128` (PTX ISA, "cp.async"; `.cg` takes 16 bytes only). `Ok(None)` for what moves
/// nothing: `cp.async.commit_group`, `.wait_group`, `.wait_all`, `.mbarrier.arrive`. PTX and CUDA's inline
/// PTX share it.
pub fn matrix_or_copy(parts: &[&str], size: Option<u64>) -> Result<Option<Instr>, String> {
    let has = |m: &str| parts.iter().skip(1).any(|p| *p == m);
    let name = match parts {
        ["ldmatrix" | "stmatrix", ..] => {
            let n = match parts.iter().find(|p| matches!(**p, "x1" | "x2" | "x4")) {
                Some(&"x1") => "",
                Some(&"x2") => ".2",
                Some(_) => ".4",
                None => return Err(format!("{}: how many matrices? Add .x1, .x2 or .x4", parts[0])),
            };
            if !has("m8n8") || !has("b16") {
                return Err(format!(
                    "{}: warpscope models the .m8n8 shape of .b16 elements ({0}.sync.aligned.m8n8.x4.shared.b16)",
                    parts[0]
                ));
            }
            let head = if parts[0] == "ldmatrix" { "LDSM" } else { "STSM" };
            format!("{head}.16.{}{n}", if has("trans") { "MT88" } else { "M88" })
        }
        ["cp", "async", "commit_group" | "wait_group" | "wait_all" | "mbarrier", ..] => return Ok(None),
        ["cp", "async", op @ ("ca" | "cg"), ..] => {
            let cg = *op == "cg";
            let bits = match (size, cg) {
                (Some(16), _) => 128,
                (Some(8), false) => 64,
                (Some(4), false) => 32,
                _ => {
                    return Err(format!(
                        "cp.async.{op} copies {} bytes per thread, not {}",
                        if cg { "16" } else { "4, 8 or 16" },
                        size.map_or("an unknown number of".to_string(), |s| s.to_string())
                    ))
                }
            };
            let (bypass, ltc) = (if cg { ".BYPASS" } else { "" }, if has("L2::128B") { ".LTC128B" } else { "" });
            format!("LDGSTS.E{bypass}{ltc}.{bits}")
        }
        _ => {
            return Err(format!(
                "`{}`: warpscope reads ldmatrix, stmatrix and cp.async.ca/.cg (with commit_group, wait_group, wait_all) here",
                parts.join(".")
            ))
        }
    };
    Instr::parse(&name).map(Some).map_err(|e| e.message)
}

/// What one instruction of CUDA's inline PTX (`asm volatile("...")`) does to memory.
#[derive(Clone, Debug, PartialEq)]
pub enum AsmKind {
    /// A memory instruction warpscope costs: ldmatrix, stmatrix, cp.async, and ld/st of a state space; `store`
    /// says which operand is the address (the first for a store, else the last before the sources).
    Mem {
        /// The SASS instruction it becomes.
        instr: Instr,
        /// A store (its address is the first operand).
        store: bool,
    },
    /// Memory that warpscope lists but does not count (atomics, reductions, mbarrier operations, prefetches):
    /// the words say what.
    Uncounted(&'static str),
    /// No memory: arithmetic, moves, tensor-core math (`mma`, `wgmma.mma_async`), shuffles, fences, waits.
    /// Its outputs become unknown.
    Compute,
}

/// What an instruction of inline PTX is, from its opcode split at dots and, for `cp.async`, its copy size: see
/// [`AsmKind`]. An instruction that moves memory in a way warpscope does not follow (bulk and tensor copies,
/// generic `ld`/`st`, `wmma.load`, textures) is an error that says so.
pub fn asm_kind(parts: &[&str], size: Option<u64>) -> Result<AsmKind, String> {
    let has = |m: &str| parts.iter().skip(1).any(|p| *p == m || p.starts_with(&format!("{m}::")));
    let refuse = |why: &str| Err(format!("`{}` {why}", parts.join(".")));
    match parts.first().copied().unwrap_or("") {
        "ldmatrix" | "stmatrix" => {
            matrix_or_copy(parts, size).map(|i| i.map_or(AsmKind::Compute, |instr| AsmKind::Mem { instr, store: parts[0] == "stmatrix" }))
        }
        "cp" if has("bulk") || parts.get(1) == Some(&"reduce") => refuse("is a bulk (TMA) copy: it moves a box that a tensor map or a size describes, which warpscope does not count inside a kernel"),
        "cp" => matrix_or_copy(parts, size).map(|i| i.map_or(AsmKind::Compute, |instr| AsmKind::Mem { instr, store: false })),
        op @ ("ld" | "st") => {
            let store = op == "st";
            let space = ["global", "shared", "local"].into_iter().find(|s| has(s));
            let Some(space) = space else {
                return refuse("reads through a generic address: warpscope follows ld/st in asm only with a state space (.global, .shared, .local)");
            };
            if has("async") || has("bulk") || has("multimem") {
                return refuse("is an asynchronous or multimem access, which warpscope does not follow");
            }
            let ty = parts.last().copied().unwrap_or("b32");
            let bits: u32 = ty[1..].parse().unwrap_or(32);
            let vec: u32 = parts.iter().find_map(|p| p.strip_prefix('v').and_then(|n| n.parse().ok())).unwrap_or(1);
            let bytes = bits.div_ceil(8) * vec;
            let signed = ty.starts_with('s');
            let Some(size) = Instr::size_modifier(bytes, signed && !store) else {
                return refuse(&format!("moves {bytes} bytes per thread; SASS moves 1, 2, 4, 8 or 16"));
            };
            let cop = [("ca", ".CA"), ("cg", ".CG"), ("cs", ".CS"), ("lu", ".LU"), ("cv", ".CV"), ("wb", ".WB"), ("wt", ".WT")]
                .into_iter()
                .find(|(c, _)| has(c))
                .map_or("", |(_, m)| m);
            let name = match (space, store) {
                ("global", false) if has("nc") => format!("LDG.E.CONSTANT.{size}"),
                ("global", false) => format!("LDG.E{cop}.{size}"),
                ("global", true) => format!("STG.E{cop}.{size}"),
                ("shared", false) => format!("LDS.{size}"),
                ("shared", true) => format!("STS.{size}"),
                ("local", false) => format!("LDL.{size}"),
                _ => format!("STL.{size}"),
            };
            Instr::parse(&name).map(|instr| AsmKind::Mem { instr, store }).map_err(|e| e.message)
        }
        "atom" | "red" => Ok(AsmKind::Uncounted("an atomic or reduction")),
        "wgmma" if has("mma_async") => {
            Ok(AsmKind::Uncounted("tensor-core math that reads its tiles from shared memory through descriptors"))
        }
        "mbarrier" => Ok(AsmKind::Uncounted("an mbarrier operation (a shared-memory barrier word)")),
        "prefetch" | "prefetchu" | "applypriority" | "discard" => Ok(AsmKind::Uncounted("a cache hint (prefetch, priority or discard)")),
        "wmma" if has("load") || has("store") => refuse("loads or stores a fragment in an unspecified layout; warpscope follows ldmatrix and ld/st instead"),
        "tex" | "tld4" | "txq" | "suld" | "sust" | "sured" | "suq" => refuse("is a texture or surface access, which warpscope does not model"),
        "ldu" => refuse("is a uniform load through a generic address, which warpscope does not follow"),
        "" => refuse("is empty"),
        _ => Ok(AsmKind::Compute),
    }
}

/// Parses `--set NAME=VALUE`. Names are identifiers (variables, pointers), registers (`R4`, `UR4`) or
/// constant-bank words (`c[0x0][0x160]`, normalised to that form); values are integer expressions.
pub fn parse_set(text: &str) -> Result<(String, i128), String> {
    let (name, value) = text.split_once('=').ok_or_else(|| format!("--set `{text}`: expected NAME=VALUE"))?;
    let name = name.trim();
    let key = match name.strip_prefix('c').or_else(|| name.strip_prefix('C')) {
        Some(rest) if rest.trim_start().starts_with('[') => {
            let (bank, off) =
                params::parse_cbank(name).ok_or_else(|| format!("--set `{name}`: expected c[BANK][OFFSET]"))?;
            params::check_cbank(bank, off).map_err(|e| format!("--set {e}"))?;
            params::cbank_key(bank, off)
        }
        _ if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') => {
            return Err(format!("--set `{name}`: a name is letters, digits, `_` and `.`"))
        }
        _ => name.to_string(),
    };
    let toks = lex::lex(value).map_err(|e| format!("--set {name}: {e}"))?;
    let mut p = cexpr::Parser::new(value, toks);
    let e = p.ternary().map_err(|e| format!("--set {name}: {e}"))?;
    if !matches!(p.peek(), lex::Tok::End) {
        return Err(format!("--set {name}: unexpected {} after the value", p.describe()));
    }
    let v = expr::eval(&e, &|_| None).map_err(|e| format!("--set {name}: {}", e.message))?;
    // No parameter, register or constant word is wider than 64 bits: a wider value would be cut quietly.
    if v < i128::from(i64::MIN) || v > i128::from(u64::MAX) {
        return Err(format!(
            "--set {name}: {} does not fit in 64 bits (signed or unsigned), the widest value a kernel takes",
            value.trim()
        ));
    }
    Ok((key, v))
}
