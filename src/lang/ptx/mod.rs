//! PTX, as `nvcc -ptx` and clang emit it, lowered into the program every language shares.
//!
//! A module's `.entry` kernels with their `.param`s, `.func` functions (inlined at each `call`), `.reg`,
//! `.shared`, `.local` and `.global` variables, labels and predicated branches. Integer arithmetic runs with
//! PTX's exact semantics at each instruction's type (8 to 64 bits, signed or not): `mov`, `add/sub/mul/mad`
//! (`.lo/.hi/.wide`), `mul24/mad24`, `div/rem`, `min/max`, `abs/neg`, `and/or/xor/not/cnot`, `shl/shr`,
//! `shf`, `bfe/bfi`, `prmt`, `lop3`, `popc/clz/brev/bfind`, `setp` (with `.and/.or/.xor` and `p|q`),
//! `selp`, `slct`, `set`, `cvt` between integers (and integer to f32 and back), `cvta`, `isspacep`,
//! special registers (`%tid`, `%ntid`, `%ctaid`, `%nctaid`, `%laneid`, `%lanemask_*`), `bra`,
//! `ret`, `exit`, `call`, `bar.sync`/`barrier.sync`, `shfl.sync`, `vote.sync`, `activemask`. Every
//! `ld`/`st` (`.global/.shared/.local`/generic, `.nc`, cache operators, `.v2/.v4`, every type) is a
//! memory site reported under the SASS instruction it becomes (`ld.global.nc.v4.f32` is `LDG.E.128.CONSTANT`).
//!
//! Anything else (floating point, atomics' returned values, texture reads, hardware counters) gives a value
//! that is unknown for a named reason: harmless until an address, a branch or a guard depends on it, then an
//! error that names the instruction and its line. Never a default.
//!
//! Kernel parameters (docs/model.md#kernel-parameters): `--set NAME=VALUE` by the parameter's PTX name, its short form
//! (`param_3`), or its constant-bank word; otherwise each pointer gets its own 256-byte-aligned base (as
//! `cudaMalloc` gives) and each integer the launch's thread count, listed in a note.
//!
//! The files: `syntax.rs` the syntax tree (modules, functions, declarations, statements, operands);
//! `parse.rs` tokens and the parser (text to tree); `lower.rs` the tree to the program (integer semantics,
//! parameters, inlined calls, each `ld`/`st`'s SASS instruction). This file: the options and the entry points.
//!
//! May import: its own files, `lang::{InputError, Span, lex, params, expr::Vars}` and `crate::program`.

mod lower;
mod parse;
pub mod syntax;

use super::expr::Vars;
use super::params;
use super::{InputError, Span};
use crate::program::launch::Launch;
use crate::program::Program;

type R<T> = Result<T, InputError>;

/// What the PTX lowering needs besides the text.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// The kernel to run (`--kernel`): a mangled or demangled name; the first kernel when `None`.
    pub kernel: Option<&'a str>,
    /// The compute capability's SM number, for the parameters' constant-bank offsets when the module's
    /// `.target` does not say.
    pub sm: u32,
}

/// The kernels of a PTX module, in file order: (symbol, the name users know).
pub fn kernels(src: &str) -> R<Vec<(String, String)>> {
    let m = parse::parse(src)?;
    Ok(m.funcs
        .iter()
        .filter(|f| f.entry && f.body.is_some())
        .map(|f| (f.name.clone(), params::shown(&f.name)))
        .collect())
}

/// Lowers PTX into a program.
pub fn lower(src: &str, launch: Launch, vars: &Vars, opts: Options) -> R<Program> {
    if src.len() > super::lex::MAX_INPUT_BYTES {
        return Err(InputError::at(src, Span { start: 0, end: 1 }, "the input is larger than 1 MB"));
    }
    let m = parse::parse(src)?;
    lower::lower_module(src, &m, launch, vars, opts)
}
