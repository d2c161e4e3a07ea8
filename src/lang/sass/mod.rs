//! SASS snippets, as `cuobjdump -sass` / `nvdisasm` print them and as the instruction pages write them,
//! lowered into the program every language shares (branches, loops and reconvergence run there).
//!
//! Accepted and ignored: `/*0040*/` addresses, encodings in comments, trailing `;`, scheduling and barrier
//! annotations (`?WAIT6`, `&wr0`, `&req_6`, `{...}`), labels, and header lines (`Function : ...`). Known
//! instructions: S2R, CS2R, S2UR, MOV, MOV32I, UMOV, IADD, IADD32I, IADD3, IMAD (.WIDE, .WIDE.U32, .HI, .X,
//! .MOV, .SHL, .IADD), IMUL, ISCADD, SHL, SHR, SHF, LOP, LOP32I, LOP3.LUT, BFE, SEL, ISETP, LEA and LEA.HI
//! (the LEA instruction reference: `.X`, `.CC` carry chains, negated offsets, omitted Rc, constant-bank
//! operands and the `Plg` shared-window predicate, and the current `LEA Rd, Pcarry, ...` form), VIADD, control
//! flow (BRA, BRA.DIV, EXIT, BAR, the pre-Volta SYNC/BRK/CONT), and the memory instructions
//! LDG/LDS/LDL/LD/ST/STG/STS/STL.
//! Branch targets are labels (`` `(.L_x_13) ``) or instruction addresses (`/*0040*/`). Any other instruction is
//! fine until an address, branch or guard depends on a register it wrote: then the error says which
//! instruction that was; CALL and indirect branches are errors when reached.
//!
//! Registers and constant-bank words start unknown unless `--set` gives them (`R4=0x1000`,
//! `c[0x0][0x160]=0x7f0000000000`). By default `c[0x0][0x0..0x14]` hold blockDim and gridDim and
//! `c[0x0][0x20]` / `c[0x0][0x28]` the initial stack pointer (local offset 0xfffc00), as on current GPUs.

mod lower;
mod parse;
mod syntax;

pub use super::params::{cbank_key, check_cbank, parse_cbank, CBANK_BYTES};
pub use lower::DEFAULT_STACK_TOP;
pub use parse::MAX_LINES;
pub use syntax::Func;

use super::expr::Vars;
use super::params;
use super::{InputError, Span};
use crate::program::launch::Launch;
use crate::program::Program;

impl Func {
    /// The name users know: demangled (`reduce4<int, (unsigned int)256>`), else the symbol as written.
    pub fn shown(&self) -> String {
        params::shown(&self.name)
    }
}

/// The kernels of a SASS listing, in listing order: (mangled symbol, demangled name) for each entry function.
/// An error when the text is not a listing.
pub fn kernels(src: &str) -> Result<Vec<(String, String)>, InputError> {
    let listing = parse::parse_lines(src)?;
    Ok(listing.funcs.iter().filter(|f| f.entry && !f.name.is_empty()).map(|f| (f.name.clone(), f.shown())).collect())
}

/// What the SASS lowering needs besides the text.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// The kernel to run (`--kernel`): a mangled or demangled name; the first kernel when `None`.
    pub kernel: Option<&'a str>,
    /// The compute capability's SM number (80 for CC 8.0), for the parameter offsets when the listing's header
    /// does not name its architecture.
    pub sm: u32,
}

/// Lowers SASS into a program.
pub fn lower(src: &str, launch: Launch, vars: &Vars, opts: Options) -> Result<Program, InputError> {
    if src.len() > super::lex::MAX_INPUT_BYTES {
        return Err(InputError::at(src, Span { start: 0, end: 1 }, "the input is larger than 1 MB"));
    }
    let listing = parse::parse_lines(src)?;
    lower::lower_listing(src, &listing, launch, vars, opts)
}
