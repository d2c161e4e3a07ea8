//! The SASS syntax tree: a listing's instructions (`Line`), each with its opcode, modifiers, guard and
//! operands (`Operand`), its labels and its functions (`Func`). What the parser makes and the lowering reads;
//! nothing here reads text or knows what an instruction does.
//!
//! May import: nothing but `crate::text` (`lang::Span`) and the standard library.

use crate::lang::Span;
use std::collections::HashMap;

/// A value, or why it is unknown.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Operand {
    Reg {
        idx: Option<u32>,
        neg: bool,
        not: bool,
        abs: bool,
        wide: bool,
        cc: bool,
    },
    UReg(Option<u32>),
    /// A negated or inverted uniform register: `-UR6` (ptxas's division idiom), `~UR4`.
    UMod {
        idx: Option<u32>,
        neg: bool,
        not: bool,
    },
    Pred {
        idx: Option<u32>,
        not: bool,
        uniform: bool,
    },
    Imm(u32),
    FImm(f64),
    /// `c[bank][offset]`, possibly negated (`-c[0x0][0xc]`) or inverted.
    CBank {
        bank: u32,
        off: u32,
        neg: bool,
        not: bool,
    },
    /// `c[bank][Rn + offset]`: a constant word at a register's offset (`LDC R6, c[0x0][R0+0x8]`).
    CBankIdx {
        bank: u32,
        reg: Option<u32>,
        off: u32,
    },
    Special(String),
    Mem {
        base: Option<(Option<u32>, bool)>,
        ubase: Option<Option<u32>>,
        offset: i64,
        /// The base register's scale: `[R10.X4+UR4]` is R10 * 4 + UR4 (shared-memory operands on sm_75 and
        /// later); 1 without one.
        scale: u32,
    },
    Other,
}

#[derive(Clone, Debug)]
pub(super) struct Line {
    pub(super) no: usize,
    /// The `/*0040*/` address in front of it (addresses restart in each function).
    pub(super) addr: Option<u64>,
    /// `@!P1`: (predicate, negated, uniform); `None` for PT.
    pub(super) guard: Option<(Option<u32>, bool, bool)>,
    pub(super) opcode: String,
    pub(super) mods: Vec<String>,
    pub(super) ops: Vec<(Operand, Span)>,
    pub(super) text: String,
    pub(super) span: Span,
    pub(super) mem_text: String,
    /// The CUDA line nvdisasm's line information (`-g`) puts it on.
    pub(super) source: Option<FileLine>,
}

/// A line of the CUDA source, as nvdisasm's line information names it (`//## File "k.cu", line 42`).
#[derive(Clone, Debug)]
pub(super) struct FileLine {
    /// The file, as the compiler named it.
    pub(super) file: String,
    /// Its 1-based line.
    pub(super) line: u32,
}

/// The instructions of a listing, with its labels, instruction addresses (branch targets) and functions.
pub(super) struct Listing {
    pub(super) lines: Vec<Line>,
    /// Label name -> the index of the instruction after it.
    pub(super) labels: HashMap<String, usize>,
    /// The functions, in listing order; a listing without headers is one unnamed function.
    pub(super) funcs: Vec<Func>,
    /// The SASS architecture the header names (`EF_CUDA_SM90`, `code for sm_90`): 90.
    pub(super) arch: Option<u32>,
}

/// One function of a listing: a kernel, or a subroutine (`$__internal_0_$__cuda_sm70_shflsync_down`).
#[derive(Clone, Debug)]
pub struct Func {
    /// The symbol as the listing spells it (mangled), or empty for a listing with no function header.
    pub name: String,
    /// The instructions `start..end` of the listing.
    pub(super) start: usize,
    pub(super) end: usize,
    /// Whether it is a kernel (an entry point) rather than a subroutine.
    pub entry: bool,
}
