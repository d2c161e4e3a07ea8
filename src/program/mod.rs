//! The one program representation every input language is lowered into, and the machine that runs it.
//!
//! A [`Program`] is a flat list of typed instructions over 64-bit lane registers and 32-lane predicates:
//! integer and predicate operations, memory operations (each one a [`Site`]: a static memory instruction
//! with its space, width and cache operator), branches, barriers and exits. The languages (`lang::cuda`,
//! `lang::sass`, `lang::expr`, `lang::addresses`) keep their own parsers and error messages and
//! end by building a program with [`Builder`]; nothing after that knows which language it came from.
//!
//! Architecture invariant: this module and its children know nothing about compute capabilities or costs.
//! [`exec`] runs one warp at a time, all 32 lanes per operation, with an active mask and a reconvergence
//! stack; [`grid`] runs blocks and whole launches and hands every warp-level memory issue to a sink.
//!
//! Values a program cannot know (data loaded from memory, floating-point results, unmodelled instructions,
//! parameters without a value) are tracked per lane as *unknown*, each with the reason it is unknown. An
//! unknown value that reaches an address, a branch or a predicate guard stops the run with an error that
//! names the reason; it never becomes a default.
//!
//! May import: `text`, `model` (instructions and notes it carries). Never `lang`: the expression language
//! reaches the program only as a [`LaneExpr`].

pub mod affine;
pub mod exec;
pub mod grid;
pub mod launch;
pub mod memory;
mod reconverge;

use crate::model::access::Instr;
use crate::model::note::Note;
use crate::text::Span;
use std::rc::Rc;

/// A register: 32 lanes of 64 bits.
pub type Reg = u32;
/// A predicate register: 32 lanes of one bit.
pub type Pred = u32;
/// A memory site's index in [`Program::sites`].
pub type SiteId = u32;
/// A reason's index in [`Program::whys`].
pub type WhyId = u32;
/// A message prefix's index in [`Program::ctxs`].
pub type CtxId = u32;

/// A source operand: a register or an immediate (the same for every lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// A register.
    Reg(Reg),
    /// A constant.
    Imm(u64),
}

/// A predicate operand: a predicate register or the constant true (`PT`), optionally negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PredRef {
    /// The register, or `None` for true.
    pub idx: Option<Pred>,
    /// `!P`.
    pub neg: bool,
}

impl PredRef {
    /// The constant true.
    pub const TRUE: PredRef = PredRef { idx: None, neg: false };

    /// `p`.
    pub fn of(p: Pred) -> PredRef {
        PredRef { idx: Some(p), neg: false }
    }

    /// `!p`.
    pub fn not(p: Pred) -> PredRef {
        PredRef { idx: Some(p), neg: true }
    }

    /// The same predicate, negated.
    pub fn negated(self) -> PredRef {
        PredRef { neg: !self.neg, ..self }
    }
}

/// The width an integer operation works at: it reads the low bits of its operands and writes its result
/// zero-extended to 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// 32 bits.
    W32,
    /// 64 bits.
    W64,
}

impl Width {
    /// The number of bits.
    pub fn bits(self) -> u32 {
        match self {
            Width::W32 => 32,
            Width::W64 => 64,
        }
    }

    /// The mask of the low `bits` bits.
    pub fn mask(self) -> u64 {
        match self {
            Width::W32 => 0xFFFF_FFFF,
            Width::W64 => u64::MAX,
        }
    }
}

/// A two-operand integer operation. Shifts by the width or more give 0 (or the sign, for `ShrS`), as the
/// hardware's clamped shifts do; division by zero is an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// a + b
    Add,
    /// a - b
    Sub,
    /// a * b (low half)
    Mul,
    /// The high half of the signed product.
    MulHiS,
    /// The high half of the unsigned product.
    MulHiU,
    /// Signed division (towards zero).
    DivS,
    /// Unsigned division.
    DivU,
    /// Signed remainder.
    RemS,
    /// Unsigned remainder.
    RemU,
    /// a & b
    And,
    /// a | b
    Or,
    /// a ^ b
    Xor,
    /// a << b
    Shl,
    /// Arithmetic shift right.
    ShrS,
    /// Logical shift right.
    ShrU,
    /// Signed minimum.
    MinS,
    /// Unsigned minimum.
    MinU,
    /// Signed maximum.
    MaxS,
    /// Unsigned maximum.
    MaxU,
}

impl BinOp {
    /// The operator as C writes it, for messages.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul | BinOp::MulHiS | BinOp::MulHiU => "*",
            BinOp::DivS | BinOp::DivU => "/",
            BinOp::RemS | BinOp::RemU => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::ShrS | BinOp::ShrU => ">>",
            BinOp::MinS | BinOp::MinU => "min",
            BinOp::MaxS | BinOp::MaxU => "max",
        }
    }
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// ==
    Eq,
    /// !=
    Ne,
    /// <
    Lt,
    /// <=
    Le,
    /// >
    Gt,
    /// >=
    Ge,
}

impl Cmp {
    /// The comparison of two integers in their interpretation.
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// A logical operation on predicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PredOp {
    /// a && b
    And,
    /// a || b
    Or,
    /// a != b
    Xor,
}

/// A per-thread value the hardware provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// threadIdx.x, .y, .z (0, 1, 2).
    Tid(u8),
    /// blockIdx.x, .y, .z.
    Ctaid(u8),
    /// blockDim.x, .y, .z.
    Ntid(u8),
    /// gridDim.x, .y, .z.
    Nctaid(u8),
    /// The lane in the warp.
    Lane,
    /// The warp in the block.
    Warp,
    /// The linear thread index in the block.
    LinearTid,
}

/// An address table row per warp (address lists): each lane's address, or `None` when inactive.
pub type Table = Rc<[[Option<u64>; 32]]>;

/// Values the user gave by name (`--set n=1024`): variables, pointer bases, registers, constant words.
pub type Vars = std::collections::BTreeMap<String, i128>;

/// A closed-form address per thread: the expression language's pattern, which the program evaluates without
/// knowing its syntax. `var` reads a name: a built-in (`threadIdx.x`, `lane`, `blockIdx.y`...) or a
/// [`Vars`] value.
pub trait LaneExpr {
    /// The source text.
    fn source(&self) -> &str;
    /// The thread's address, or `None` where the expression's condition is false; an error says what went
    /// wrong and where in the source.
    fn eval(&self, var: &dyn Fn(&str) -> Option<i128>) -> Result<Option<i128>, (Span, String)>;
    /// The address's coefficients of `blockIdx.x`, `.y`, `.z` at the block `var` describes, when it is affine
    /// in them; `None` when that cannot be shown.
    fn address_slope(&self, var: &dyn Fn(&str) -> Option<i128>) -> Option<[i128; 3]>;
    /// True when the condition, if any, provably does not depend on `blockIdx`.
    fn condition_block_invariant(&self, var: &dyn Fn(&str) -> Option<i128>) -> bool;
}

/// An expression shows as its source text (a derived `Debug` of its syntax tree would cost the page's workers
/// kilobytes they never use).
impl std::fmt::Debug for dyn LaneExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.source())
    }
}

/// One operation.
#[derive(Clone, Debug)]
pub enum Op {
    /// dst = a op b at width w.
    Bin {
        /// The operation.
        op: BinOp,
        /// Its width.
        w: Width,
        /// Destination.
        dst: Reg,
        /// First operand.
        a: Src,
        /// Second operand.
        b: Src,
    },
    /// dst = the low `bits` bits of `a`, sign- or zero-extended to 64 bits (truncation and extension).
    Conv {
        /// Destination.
        dst: Reg,
        /// Source.
        a: Src,
        /// 8, 16, 32 or 64.
        bits: u8,
        /// Sign-extend (else zero-extend).
        signed: bool,
    },
    /// dst = base + ext(idx) * scale at 64 bits, where ext sign- or zero-extends the low `bits` bits of
    /// `idx`: the address of element `idx` of an array (one operation for what C spells as a conversion, a
    /// multiplication and an addition).
    Index {
        /// Destination.
        dst: Reg,
        /// The array's address.
        base: Src,
        /// The element index.
        idx: Src,
        /// The index's width: 32 or 64.
        bits: u8,
        /// Whether the index is signed.
        signed: bool,
        /// Bytes per element.
        scale: u64,
    },
    /// dst = a.
    Mov {
        /// Destination.
        dst: Reg,
        /// Source.
        a: Src,
    },
    /// dst = p ? a : b.
    Sel {
        /// Destination.
        dst: Reg,
        /// Selector.
        p: PredRef,
        /// When true.
        a: Src,
        /// When false.
        b: Src,
    },
    /// dst = a hardware-provided value.
    Special {
        /// Destination.
        dst: Reg,
        /// Which.
        which: Special,
    },
    /// dst becomes unknown for the reason `why`.
    Unknown {
        /// Destination.
        dst: Reg,
        /// Why.
        why: WhyId,
    },
    /// dst = the `elem` at `addr` in the given arrays (docs/model.md#kernels-on-data), where a lane's address is in
    /// one; elsewhere unknown for the reason `why`. A part of a value a memory instruction just loaded (a field of
    /// a struct, a component of a `uint4`): it moves no memory of its own.
    Peek {
        /// Destination.
        dst: Reg,
        /// The part's address.
        addr: Reg,
        /// Its type.
        elem: memory::Elem,
        /// Why it is unknown where no given array holds it.
        why: WhyId,
    },
    /// dst = a cmp b, at width w, signed or unsigned.
    Setp {
        /// Destination predicate.
        dst: Pred,
        /// Comparison.
        cmp: Cmp,
        /// Compare as signed integers.
        signed: bool,
        /// Width.
        w: Width,
        /// First operand.
        a: Src,
        /// Second operand.
        b: Src,
    },
    /// dst = a op b on predicates.
    PredLogic {
        /// Destination.
        dst: Pred,
        /// Operation.
        op: PredOp,
        /// First operand.
        a: PredRef,
        /// Second operand.
        b: PredRef,
    },
    /// dst = p (1 or 0).
    PredToReg {
        /// Destination.
        dst: Reg,
        /// Source.
        p: PredRef,
    },
    /// Stops with `ctx`'s message and the reason when `a` is unknown in an active lane.
    Require {
        /// The value that must be known.
        a: Src,
        /// The message prefix.
        ctx: CtxId,
    },
    /// The same for a predicate.
    RequirePred {
        /// The predicate that must be known.
        p: Pred,
        /// The message prefix.
        ctx: CtxId,
    },
    /// The expression language: dst = the address, `pred` = the `if` condition, per lane.
    Eval {
        /// Destination address register.
        dst: Reg,
        /// Destination predicate (true where the address exists).
        pred: Pred,
        /// The expression.
        expr: Rc<dyn LaneExpr>,
        /// `--set` values.
        vars: Rc<Vars>,
        /// The instruction's address width (32 or 64), for the range check.
        addr_bits: u32,
        /// The instruction's mnemonic, for messages.
        op_text: Rc<str>,
    },
    /// Address lists: dst = this warp's row of the table, `pred` = the lanes that have an address.
    Table {
        /// Destination.
        dst: Reg,
        /// Destination predicate.
        pred: Pred,
        /// One row per warp of the block.
        rows: Table,
    },
    /// A warp-level memory instruction at `site`, over the active lanes' addresses in `addr`.
    Mem {
        /// The site.
        site: SiteId,
        /// The byte address (a generic or global address, or an offset in the shared or local window).
        addr: Reg,
        /// For generic LD/ST with an explicit `Plg` operand: true for "local or global", false for shared. For
        /// `cp.async` (`src` given): true in the lanes that read their source; the others (a src-size of 0, an
        /// ignore-src predicate) read nothing and zero-fill their shared destination.
        plg: Option<PredRef>,
        /// For `cp.async` (`LDGSTS`): the global source address (`addr` is the shared destination).
        src: Option<Reg>,
        /// The message prefix when the address is unknown.
        ctx: CtxId,
        /// For a load: the register that receives the data.
        data: Option<Load>,
    },
    /// nvcc's warp aggregation of an atomic (docs/model.md#atomics): dst = true in the lowest running lane alone when every
    /// running lane has the same known `addr` and the same known `val`, else true in every running lane. The
    /// atomic it guards is then one lane's operation (a popcount's worth of adds), or every lane's.
    Aggregate {
        /// Destination.
        dst: Pred,
        /// The atomic's address.
        addr: Reg,
        /// The value it applies.
        val: Src,
    },
    /// dst = true in every running lane when the warp runs all its live lanes together (SASS `BRA.DIV`
    /// branches when it does not).
    Converged {
        /// Destination.
        dst: Pred,
    },
    /// Branch to `target` (an instruction index) for the lanes whose guard holds.
    Bra {
        /// Target.
        target: u32,
    },
    /// The lanes whose guard holds leave the program.
    Exit,
    /// `__syncthreads()` / `BAR.SYNC`: every warp of the block waits for the others.
    Bar,
    /// Reaching this is an error (an instruction warpscope cannot follow).
    Trap {
        /// The message.
        ctx: CtxId,
    },
    /// dst = f(a) in every lane (bit counts, float conversions).
    Un {
        /// The function.
        f: UnOp,
        /// Destination.
        dst: Reg,
        /// Source.
        a: Src,
    },
    /// dst = a from another lane of the warp (SASS `SHFL`, CUDA `__shfl_*_sync`); `pdst` is true where the
    /// source lane was in range. A lane whose source lane is not running gets an unknown value.
    Shfl {
        /// The mode.
        mode: ShflMode,
        /// Destination.
        dst: Reg,
        /// Destination predicate (in range).
        pdst: Option<Pred>,
        /// The value.
        a: Src,
        /// The source lane or lane offset.
        b: Src,
        /// Clamp (bits 0-4) and segment mask (bits 8-12), as PTX packs them.
        c: Src,
        /// Why a lane whose source lane is not running gets no value.
        inactive: WhyId,
    },
    /// A vote over the running lanes of the warp: `dst` gets the ballot (lanes where `p` holds) and `pdst`
    /// whether all (or any) of them hold it.
    Vote {
        /// Destination for the ballot.
        dst: Option<Reg>,
        /// Destination predicate.
        pdst: Option<Pred>,
        /// `true` for ALL, `false` for ANY (for `pdst`).
        all: bool,
        /// The voted predicate.
        p: PredRef,
    },
    /// Nothing.
    Nop,
}

/// One-operand functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// Number of one bits of the low 32.
    Popc,
    /// Bit reverse of the low 32.
    Brev,
    /// Position of the highest one bit of the low 32 (signed: of the highest bit differing from the sign), or
    /// 0xffffffff when there is none.
    Flo {
        /// Signed.
        signed: bool,
    },
    /// An integer (low 32 bits, signed or not) to the bits of the nearest f32 (`up`: rounded towards +inf).
    I2F {
        /// Signed.
        signed: bool,
        /// Round towards +infinity (`.RP`), else to nearest.
        up: bool,
    },
    /// The f32 reciprocal (correctly rounded) of the f32 bits of the low 32.
    Rcp,
    /// f32 bits to an integer, truncated towards zero and saturated.
    F2I {
        /// Signed.
        signed: bool,
    },
}

impl UnOp {
    /// The function on one value.
    pub fn apply(self, x: u64) -> u64 {
        let w = x as u32;
        let r = match self {
            UnOp::Popc => w.count_ones(),
            UnOp::Brev => w.reverse_bits(),
            UnOp::Flo { signed } => {
                let v = if signed && (w as i32) < 0 { !w } else { w };
                if v == 0 {
                    u32::MAX
                } else {
                    31 - v.leading_zeros()
                }
            }
            UnOp::I2F { signed, up } => {
                let exact = if signed { f64::from(w as i32) } else { f64::from(w) };
                let mut f = exact as f32;
                if up && f64::from(f) < exact {
                    // The next f32 towards +infinity: a larger magnitude when positive, a smaller when negative.
                    f = if f == 0.0 {
                        f32::from_bits(1)
                    } else if f > 0.0 {
                        f32::from_bits(f.to_bits() + 1)
                    } else {
                        f32::from_bits(f.to_bits() - 1)
                    };
                }
                f.to_bits()
            }
            UnOp::Rcp => (1.0f32 / f32::from_bits(w)).to_bits(),
            UnOp::F2I { signed } => {
                let f = f32::from_bits(w);
                if signed {
                    (f as i32) as u32
                } else {
                    f as u32
                }
            }
        };
        u64::from(r)
    }
}

/// How `Shfl` picks the source lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    /// lane - b.
    Up,
    /// lane + b.
    Down,
    /// lane ^ b.
    Bfly,
    /// b.
    Idx,
}

impl ShflMode {
    /// The source lane of `lane` and whether it is in range (PTX ISA, `shfl.sync`): `b` is the lane or
    /// offset, `c` the packed clamp and segment mask.
    pub fn source(self, lane: u32, b: u64, c: u64) -> (u32, bool) {
        let bval = (b & 31) as i64;
        let cval = (c & 31) as i64;
        let mask = ((c >> 8) & 31) as i64;
        let lane_i = i64::from(lane);
        let max_lane = (lane_i & mask) | (cval & !mask);
        let min_lane = lane_i & mask;
        let (j, ok) = match self {
            ShflMode::Up => {
                let j = lane_i - bval;
                (j, j >= max_lane)
            }
            ShflMode::Down => {
                let j = lane_i + bval;
                (j, j <= max_lane)
            }
            ShflMode::Bfly => {
                let j = lane_i ^ bval;
                (j, j <= max_lane)
            }
            ShflMode::Idx => {
                let j = min_lane | (bval & !mask);
                (j, j <= max_lane)
            }
        };
        if ok && (0..32).contains(&j) {
            (j as u32, true)
        } else {
            (lane, false)
        }
    }
}

/// An instruction: an operation, an optional guard predicate, and where it came from.
#[derive(Clone, Debug)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// Lanes where the guard is false skip the operation.
    pub guard: Option<PredRef>,
    /// The source text it was lowered from (errors point here).
    pub span: Span,
}

/// One static memory instruction: what the results table lists.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    /// 1-based source line.
    pub line: usize,
    /// The source line, trimmed.
    pub text: String,
    /// What is accessed, e.g. `in[i]` or `aos[i].y`.
    pub access: String,
    /// The instruction.
    pub instr: Instr,
    /// Notes from the input language (for example where a local array was placed).
    pub notes: Vec<Note>,
    /// The line of the CUDA source a compiler made this instruction from, where PTX or SASS says so
    /// (`.loc` directives, nvdisasm's `//## File` comments).
    pub source: Option<SourceLine>,
}

/// A line of a kernel's source file, as compiler output records it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceLine {
    /// The file, as the compiler named it.
    pub file: String,
    /// Its 1-based line.
    pub line: u32,
}

/// The register a load writes, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    /// The register that receives the data.
    pub dst: Reg,
    /// Why its value is unknown where no given array holds it (data).
    pub why: WhyId,
    /// The loaded type, which says how a given array's element becomes the register's value.
    pub elem: memory::Elem,
}

#[cfg(feature = "data")]
impl Op {
    /// The register an operation writes, and the registers its value flows from (for following which values
    /// come from given data). `None` for an operation that writes no register.
    pub fn value_flow(&self) -> Option<(Reg, [Option<Src>; 3])> {
        Some(match self {
            Op::Bin { dst, a, b, .. } => (*dst, [Some(*a), Some(*b), None]),
            Op::Index { dst, base, idx, .. } => (*dst, [Some(*base), Some(*idx), None]),
            Op::Conv { dst, a, .. } | Op::Mov { dst, a } | Op::Un { dst, a, .. } => (*dst, [Some(*a), None, None]),
            Op::Sel { dst, a, b, .. } => (*dst, [Some(*a), Some(*b), None]),
            Op::Shfl { dst, a, .. } => (*dst, [Some(*a), None, None]),
            Op::Special { dst, .. }
            | Op::Unknown { dst, .. }
            | Op::Peek { dst, .. }
            | Op::PredToReg { dst, .. }
            | Op::Eval { dst, .. }
            | Op::Table { dst, .. } => (*dst, [None; 3]),
            Op::Vote { dst: Some(dst), .. } => (*dst, [None; 3]),
            Op::Mem { data: Some(l), .. } => (l.dst, [None; 3]),
            _ => return None,
        })
    }
}

/// A lowered program.
#[derive(Clone, Debug)]
pub struct Program {
    /// The instructions; execution starts at 0 and a lane that runs past the end exits.
    pub insts: Vec<Inst>,
    /// The memory sites, in program order.
    pub sites: Vec<Site>,
    /// Registers used.
    pub n_regs: u32,
    /// Predicates used.
    pub n_preds: u32,
    /// Why values are unknown, as sentences ending a message: "data loaded from memory at 2:14".
    pub whys: Vec<String>,
    /// The reasons that are data (loaded from memory, floating-point results): a condition unknown for one of
    /// these is decided as [`Program::data_branches`] says; any other unknown condition stops the run.
    pub data_whys: std::collections::HashSet<WhyId>,
    /// Message prefixes for errors about unknown values: "the index depends on ".
    pub ctxs: Vec<String>,
    /// For each instruction, where lanes that diverge at it (a conditional branch) meet again: the first
    /// instruction of its immediate post-dominator, or [`NEVER`] when they only meet at the exit.
    pub reconverge: Vec<u32>,
    /// Notes about the whole program: which kernel of several ran, the defaults it assumed.
    pub notes: Vec<crate::model::note::Note>,
    /// The kernel's name, when the input named one.
    pub kernel: Option<String>,
    /// Every kernel the input holds, in its order: (symbol, the name users know), for choosing another.
    pub kernels: Vec<(String, String)>,
    /// The memory operations the model does not count (atomics, `ld.const`, calls): (line, operation).
    pub uncounted: Vec<(usize, String)>,
    /// What the source says a conditional branch decides, where the language said it: instruction index ->
    /// (a message prefix naming the condition, whether the condition holds in the lanes that take the branch).
    /// A branch not listed is its own condition ("the branch is taken").
    pub conditions: std::collections::HashMap<u32, (CtxId, bool)>,
    /// In which lanes a condition that depends on data is taken to hold, where what it guards moves memory.
    pub data_branches: DataBranches,
    /// The shared memory a block of the kernel has, where the language declares it (a CUDA kernel's static
    /// `__shared__` arrays, and its dynamic shared memory when the launch gives its size): a shared access
    /// outside it moves no data and is an error lane, as on the hardware, and the memory system's residency
    /// counts it. `None` where it is not known (a listing, dynamic shared memory of unknown size).
    pub shared_bytes: Option<u64>,
    /// The global arrays and pointer parameters the kernel names, where data can be given (CUDA).
    #[cfg(feature = "data")]
    pub arrays: Vec<memory::ArrayDecl>,
    /// The arrays given as data, which loads read.
    #[cfg(feature = "data")]
    pub given: Option<Rc<memory::Given>>,
    /// Each data-dependent branch's region, computed when a run first meets one.
    regions: std::cell::RefCell<std::collections::HashMap<u32, Rc<Region>>>,
}

/// In which lanes a condition that depends on data (a branch's, or a memory instruction's guard) holds, where
/// what it decides moves memory: an assumption, always stated with the results it leads to. (Where it decides
/// only values, the run needs none: both sides run as the hardware would for any data.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DataBranches {
    /// The code a condition guards runs, and a loop does not repeat (what a bounds check or a retry loop
    /// mostly does): a branch that leaves a loop is not taken when the loop is entered and is taken the next
    /// time (a loop tested at the top runs its body once), a backward branch is not taken, another forward
    /// branch is not taken, a guarded memory instruction runs and a guarded exit does not.
    #[default]
    Runs,
    /// In every lane.
    Holds,
    /// In none.
    Fails,
    /// In the lanes of the mask (bit i = lane i).
    Lanes(u32),
}

impl DataBranches {
    /// The lanes where the condition is taken to hold.
    pub fn lanes(self) -> u32 {
        match self {
            DataBranches::Runs | DataBranches::Holds => u32::MAX,
            DataBranches::Fails => 0,
            DataBranches::Lanes(m) => m,
        }
    }

    /// Reads the setting: `true`, `false` (also `all`, `none`), or a lane mask in hex or decimal.
    pub fn parse(text: &str) -> Result<DataBranches, String> {
        let t = text.trim();
        match t {
            "runs" | "default" | "" => return Ok(DataBranches::Runs),
            "true" | "all" => return Ok(DataBranches::Holds),
            "false" | "none" => return Ok(DataBranches::Fails),
            _ => {}
        }
        let digits = t.replace('_', "");
        let mask = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => digits.parse::<u32>().ok(),
        };
        match mask {
            Some(u32::MAX) => Ok(DataBranches::Holds),
            Some(0) => Ok(DataBranches::Fails),
            Some(m) => Ok(DataBranches::Lanes(m)),
            None => Err(format!(
                "data_branches is runs (the guarded code runs, loops do not repeat), true, false or a 32-bit lane mask such as 0x0000ffff (the lanes where the condition holds), not `{t}`"
            )),
        }
    }

    /// The setting's text: `true`, `false`, or the mask in hex (`0x0000ffff`).
    pub fn text(self) -> String {
        match self {
            DataBranches::Runs => "runs".into(),
            DataBranches::Holds => "true".into(),
            DataBranches::Fails => "false".into(),
            DataBranches::Lanes(m) => format!("{m:#010x}"),
        }
    }

    /// The assumption in words: "its condition holds in every lane".
    pub fn words(self) -> String {
        match self {
            DataBranches::Runs => "the code it guards runs and a loop does not repeat".into(),
            DataBranches::Holds => "its condition holds in every lane".into(),
            DataBranches::Fails => "its condition fails in every lane".into(),
            DataBranches::Lanes(m) => format!(
                "its condition holds in lanes {} and fails in the others",
                crate::model::access::LaneSet(m).ranges()
            ),
        }
    }
}

/// What runs between a conditional branch and the place its lanes meet again (both sides of it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// Nothing in it moves memory, waits at a barrier, leaves the program, stops it, or exchanges values
    /// between lanes: it only computes values, so a lane may skip it if what it writes becomes unknown.
    pub pure: bool,
    /// The registers it writes.
    pub regs: Vec<Reg>,
    /// The predicates it writes.
    pub preds: Vec<Pred>,
}

/// A data-dependent decision a run met: the instruction, whether an assumption decided it (else both sides ran
/// and the values they set became unknown), and why the condition is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataDecision {
    /// The branch or guarded instruction.
    pub at: u32,
    /// Decided by [`Program::data_branches`] (what it guards moves memory).
    pub assumed: bool,
    /// Why the condition is unknown.
    pub why: WhyId,
}

impl Program {
    /// The notes that state what a run's data-dependent decisions assumed, in program order, with lines in
    /// `source` (the text the program was lowered from).
    pub fn decision_notes(&self, decisions: &[DataDecision], source: &str) -> Vec<Note> {
        let mut ds = decisions.to_vec();
        ds.sort_by_key(|d| d.at);
        ds.dedup_by_key(|d| d.at);
        // Guarded computations (a compiler's if-conversion) are stated once per condition, with their lines.
        let guarded = |d: &DataDecision| {
            d.assumed
                && !matches!(
                    self.insts.get(d.at as usize).map(|i| &i.op),
                    Some(Op::Bra { .. } | Op::Mem { .. } | Op::Exit)
                )
        };
        let mut by_why: Vec<(WhyId, Vec<usize>)> = Vec::new();
        for d in ds.iter().filter(|d| guarded(d)) {
            let line = crate::text::line_of(source, self.insts[d.at as usize].span.start);
            match by_why.iter_mut().find(|(w, _)| *w == d.why) {
                Some((_, lines)) if !lines.contains(&line) => lines.push(line),
                Some(_) => {}
                None => by_why.push((d.why, vec![line])),
            }
        }
        ds.retain(|d| !guarded(d));
        let mut out = Vec::new();
        for (why, lines) in by_why {
            let list: Vec<String> = lines.iter().map(usize::to_string).collect();
            let text = format!(
                "The instructions on line{} {} run under a guard that depends on {}: warpscope assumed {} (--data-branches {}), as for the memory instructions under the same guard.",
                if lines.len() == 1 { "" } else { "s" },
                list.join(", "),
                self.whys.get(why as usize).map_or("data", String::as_str),
                self.data_branches.words(),
                self.data_branches.text()
            );
            out.push(Note {
                id: std::borrow::Cow::Borrowed("data-guard-assumed"),
                text,
                source: std::borrow::Cow::Borrowed("warpscope's model of data-dependent control flow"),
            });
        }
        for d in ds {
            let Some(inst) = self.insts.get(d.at as usize) else { continue };
            let line = crate::text::line_of(source, inst.span.start);
            let what = match self.conditions.get(&d.at) {
                Some(&(ctx, _)) => format!("{} on line {line}", self.ctxs[ctx as usize]),
                None if matches!(inst.op, Op::Bra { .. }) => format!("the guard of the branch on line {line}"),
                None if matches!(inst.op, Op::Exit) => format!("the guard of the exit on line {line}"),
                None => format!("the guard of the memory instruction on line {line}"),
            };
            let why = self.whys.get(d.why as usize).map_or("data", String::as_str);
            let upper_first = |w: &str| {
                let mut c = w.chars();
                c.next().map_or((String::new(), String::new()), |f| (f.to_uppercase().collect(), c.collect()))
            };
            let (id, text) = if d.assumed {
                (
                    "data-branch-assumed",
                    format!(
                        "{}{} depends on {why}. What it decides moves memory, so warpscope assumed {} (--data-branches {}; `runs`, `true`, `false` or a lane mask such as 0x0000ffff chooses another): the counts hold under that assumption.",
                        upper_first(&what).0,
                        upper_first(&what).1,
                        self.data_branches.words(),
                        self.data_branches.text()
                    ),
                )
            } else {
                (
                    "data-branch-both-ways",
                    format!(
                        "{}{} depends on {why}. What it decides only computes values: warpscope ran it as the hardware does for any data, and the values it sets are unknown from there on (none of them reaches an address).",
                        upper_first(&what).0,
                        upper_first(&what).1
                    ),
                )
            };
            out.push(Note {
                id: std::borrow::Cow::Borrowed(id),
                text,
                source: std::borrow::Cow::Borrowed("warpscope's model of data-dependent control flow"),
            });
        }
        out
    }

    /// Whether the branch at `pc` leaves a loop: it jumps forward past a backward branch whose loop holds it.
    pub fn leaves_loop(&self, pc: u32) -> bool {
        let Some(Inst { op: Op::Bra { target }, .. }) = self.insts.get(pc as usize) else { return false };
        let target = *target;
        target > pc
            && self.insts[pc as usize + 1..(target as usize).min(self.insts.len())]
                .iter()
                .any(|i| matches!(i.op, Op::Bra { target: t } if t <= pc))
    }

    /// The region of the conditional branch at `pc` (see [`Region`]).
    pub fn region(&self, pc: u32) -> Rc<Region> {
        if let Some(r) = self.regions.borrow().get(&pc) {
            return Rc::clone(r);
        }
        let r = Rc::new(self.compute_region(pc));
        self.regions.borrow_mut().insert(pc, Rc::clone(&r));
        r
    }

    fn compute_region(&self, pc: u32) -> Region {
        let n = self.insts.len() as u32;
        let stop = self.reconverge.get(pc as usize).copied().unwrap_or(NEVER);
        let mut seen = vec![false; self.insts.len()];
        let mut todo: Vec<u32> = Vec::new();
        if let Some(Inst { op: Op::Bra { target }, .. }) = self.insts.get(pc as usize) {
            todo.push(*target);
        }
        todo.push(pc + 1);
        let mut r = Region { pure: true, ..Region::default() };
        while let Some(i) = todo.pop() {
            if i >= n || i == stop || seen[i as usize] {
                continue;
            }
            seen[i as usize] = true;
            let inst = &self.insts[i as usize];
            let (reg, pred): (Option<Reg>, Option<Pred>) = match &inst.op {
                Op::Bin { dst, .. }
                | Op::Conv { dst, .. }
                | Op::Index { dst, .. }
                | Op::Mov { dst, .. }
                | Op::Sel { dst, .. }
                | Op::Special { dst, .. }
                | Op::Unknown { dst, .. }
                | Op::Peek { dst, .. }
                | Op::PredToReg { dst, .. }
                | Op::Un { dst, .. } => (Some(*dst), None),
                Op::Setp { dst, .. } | Op::PredLogic { dst, .. } => (None, Some(*dst)),
                Op::Eval { dst, pred, .. } | Op::Table { dst, pred, .. } => (Some(*dst), Some(*pred)),
                Op::Require { .. } | Op::RequirePred { .. } | Op::Nop | Op::Bra { .. } => (None, None),
                Op::Mem { .. }
                | Op::Bar
                | Op::Exit
                | Op::Trap { .. }
                | Op::Shfl { .. }
                | Op::Vote { .. }
                | Op::Aggregate { .. }
                | Op::Converged { .. } => {
                    r.pure = false;
                    (None, None)
                }
            };
            if let Some(d) = reg.filter(|d| !r.regs.contains(d)) {
                r.regs.push(d);
            }
            if let Some(d) = pred.filter(|d| !r.preds.contains(d)) {
                r.preds.push(d);
            }
            match inst.op {
                Op::Bra { target } => {
                    todo.push(target);
                    if inst.guard.is_some() {
                        todo.push(i + 1);
                    }
                }
                _ => todo.push(i + 1),
            }
        }
        r
    }
}

/// "The lanes meet again only when they exit."
pub const NEVER: u32 = u32::MAX;

/// A label: a branch target whose place is decided later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(u32);

/// Builds a program: registers, predicates, instructions, labels and sites.
#[derive(Default)]
pub struct Builder {
    insts: Vec<Inst>,
    sites: Vec<(SiteKey, Site)>,
    n_regs: u32,
    n_preds: u32,
    /// Temporaries handed out (a stack) and those free to hand out again.
    temps: Vec<Reg>,
    free: Vec<Reg>,
    whys: Vec<String>,
    data_whys: std::collections::HashSet<WhyId>,
    ctxs: Vec<String>,
    /// Where each reason and message prefix is, so that a long program's many reasons stay cheap.
    why_index: std::collections::HashMap<String, WhyId>,
    ctx_index: std::collections::HashMap<String, CtxId>,
    labels: Vec<Option<u32>>,
    /// Instructions whose target is a label: (instruction, label).
    fixups: Vec<(usize, Label)>,
    notes: Vec<crate::model::note::Note>,
    kernel: Option<String>,
    kernels: Vec<(String, String)>,
    uncounted: Vec<(usize, String)>,
    conditions: std::collections::HashMap<u32, (CtxId, bool)>,
}

/// How sites are put in program order: the languages choose keys that sort that way.
pub type SiteKey = (usize, usize);

// The builder's functions are `#[cold]` (lowering runs once per analysis; see src/lang/cuda/mod.rs).
impl Builder {
    /// An empty program.
    #[cold]
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Adds a note about the whole program (assumptions the language made, which kernel ran).
    #[cold]
    pub fn note(&mut self, note: crate::model::note::Note) {
        if !self.notes.iter().any(|n| n.id == note.id) {
            self.notes.push(note);
        }
    }

    /// Notes the memory operations the model does not count (atomics, `ld.const`), each as `(line, op)`, so
    /// that the totals say what they leave out. `what` names them (`instructions`, `operations`).
    #[cold]
    pub fn note_uncosted<'a>(
        &mut self,
        id: &'static str,
        what: &str,
        ops: impl IntoIterator<Item = &'a (usize, String)>,
    ) {
        let ops: Vec<&(usize, String)> = ops.into_iter().collect();
        self.uncounted.extend(ops.iter().map(|&x| x.clone()));
        // The same operation on the same line (a device function inlined at several calls) once, counted.
        let mut list: Vec<(String, usize)> = Vec::new();
        for (line, op) in &ops {
            let item = format!("{op} (line {line})");
            match list.iter_mut().find(|(x, _)| *x == item) {
                Some((_, n)) => *n += 1,
                None => list.push((item, 1)),
            }
        }
        let list: Vec<String> = list.into_iter().map(|(x, n)| if n == 1 { x } else { format!("{x} ×{n}") }).collect();
        if list.is_empty() {
            return;
        }
        self.note(crate::model::note::Note::new(
            id,
            format!(
                "These {what} move memory but warpscope does not count them, so the totals leave them out: {}.",
                list.join(", ")
            ),
            "the model reference, docs/model.md#global-memory (it costs loads, stores, atomics and constant loads)",
        ));
    }

    /// Whether the program so far has a load (a read of global, shared or local memory).
    #[cold]
    pub fn has_loads(&self) -> bool {
        self.sites.iter().any(|(_, s)| !s.instr.base.is_store())
    }

    /// Names the kernel the program is.
    #[cold]
    pub fn set_kernel(&mut self, name: String) {
        self.kernel = Some(name);
    }

    /// Lists the input's kernels (symbol, shown name), for choosing another.
    #[cold]
    pub fn set_kernels(&mut self, kernels: Vec<(String, String)>) {
        self.kernels = kernels;
    }

    /// A new register.
    #[cold]
    pub fn reg(&mut self) -> Reg {
        self.n_regs += 1;
        self.n_regs - 1
    }

    /// How many registers were handed out so far (the next one's number).
    pub fn reg_count(&self) -> Reg {
        self.n_regs
    }

    /// How many predicates were handed out so far (the next one's number).
    pub fn pred_count(&self) -> Pred {
        self.n_preds
    }

    /// A register for a temporary value: it can be handed out again after [`Builder::release`].
    #[cold]
    pub fn temp(&mut self) -> Reg {
        let r = match self.free.pop() {
            Some(r) => r,
            None => self.reg(),
        };
        self.temps.push(r);
        r
    }

    /// A new predicate.
    #[cold]
    pub fn pred(&mut self) -> Pred {
        self.n_preds += 1;
        self.n_preds - 1
    }

    /// Whether `r` was handed out as a temporary (and is still in use).
    #[cold]
    pub fn is_temp(&self, r: Reg) -> bool {
        self.temps.contains(&r)
    }

    /// A mark in the temporaries: those handed out after it can be released together (the temporaries of a
    /// statement that no later code reads).
    #[cold]
    pub fn temps_mark(&self) -> usize {
        self.temps.len()
    }

    /// Releases the temporaries handed out since `mark`.
    #[cold]
    pub fn release(&mut self, mark: usize) {
        while self.temps.len() > mark {
            if let Some(r) = self.temps.pop() {
                self.free.push(r);
            }
        }
    }

    /// A reason a value may be unknown.
    #[cold]
    pub fn why(&mut self, text: impl Into<String>) -> WhyId {
        let text = text.into();
        if let Some(&i) = self.why_index.get(&text) {
            return i;
        }
        let i = self.whys.len() as WhyId;
        self.why_index.insert(text.clone(), i);
        self.whys.push(text);
        i
    }

    /// A reason that is data the program does not know (a loaded value, a floating-point result): a branch
    /// or guard that depends on it is decided by the data-branch assumption instead of stopping the run.
    #[cold]
    pub fn data_why(&mut self, text: impl Into<String>) -> WhyId {
        let w = self.why(text);
        self.data_whys.insert(w);
        w
    }

    /// A message prefix.
    #[cold]
    pub fn ctx(&mut self, text: impl Into<String>) -> CtxId {
        let text = text.into();
        if let Some(&i) = self.ctx_index.get(&text) {
            return i;
        }
        let i = self.ctxs.len() as CtxId;
        self.ctx_index.insert(text.clone(), i);
        self.ctxs.push(text);
        i
    }

    /// A memory site; `key` orders sites for display.
    #[cold]
    pub fn site(&mut self, key: SiteKey, site: Site) -> SiteId {
        self.sites.push((key, site));
        (self.sites.len() - 1) as SiteId
    }

    /// A site added before, to add notes to it.
    pub fn site_mut(&mut self, id: SiteId) -> Option<&mut Site> {
        self.sites.get_mut(id as usize).map(|(_, s)| s)
    }

    /// Appends an instruction.
    #[cold]
    pub fn emit(&mut self, op: Op, guard: Option<PredRef>, span: Span) {
        self.insts.push(Inst { op, guard, span });
    }

    /// `a op b` at width `w` into a new temporary, under `guard`; folded to a constant when both are constants
    /// (and the operation is defined on them).
    #[cold]
    pub fn bin(&mut self, op: BinOp, w: Width, a: Src, b: Src, guard: Option<PredRef>, span: Span) -> Src {
        if let (Src::Imm(x), Src::Imm(y)) = (a, b) {
            if let Some(v) = exec::bin(op, w, x, y) {
                return Src::Imm(v);
            }
        }
        let d = self.temp();
        self.emit(Op::Bin { op, w, dst: d, a, b }, guard, span);
        Src::Reg(d)
    }

    /// The low `bits` bits of `a`, sign- or zero-extended, into a new temporary (a constant stays one).
    #[cold]
    pub fn conv(&mut self, a: Src, bits: u8, signed: bool, guard: Option<PredRef>, span: Span) -> Src {
        if bits >= 64 {
            return a;
        }
        if let Src::Imm(v) = a {
            return Src::Imm(exec::conv(v, bits, signed));
        }
        let d = self.temp();
        self.emit(Op::Conv { dst: d, a, bits, signed }, guard, span);
        Src::Reg(d)
    }

    /// A new temporary that is unknown for the reason `why`.
    #[cold]
    pub fn unknown(&mut self, why: String, guard: Option<PredRef>, span: Span) -> Src {
        let w = self.why(why);
        let d = self.temp();
        self.emit(Op::Unknown { dst: d, why: w }, guard, span);
        Src::Reg(d)
    }

    /// The index the next instruction will have.
    #[cold]
    pub fn here(&self) -> u32 {
        self.insts.len() as u32
    }

    /// The number of instructions so far.
    #[cold]
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// True when no instruction was emitted.
    #[cold]
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    /// If the last instruction computed `from` (a temporary nothing else reads) and no label points past it,
    /// makes it write `to` instead and returns true: `x = a + b` then needs no copy.
    #[cold]
    pub fn retarget_last(&mut self, from: Reg, to: Reg) -> bool {
        let here = self.insts.len() as u32;
        if self.labels.contains(&Some(here)) || !self.temps.contains(&from) {
            return false;
        }
        let Some(last) = self.insts.last_mut() else { return false };
        let dst = match &mut last.op {
            Op::Bin { dst, .. }
            | Op::Conv { dst, .. }
            | Op::Index { dst, .. }
            | Op::Mov { dst, .. }
            | Op::Sel { dst, .. }
            | Op::Special { dst, .. }
            | Op::Unknown { dst, .. }
            | Op::PredToReg { dst, .. } => dst,
            _ => return false,
        };
        if *dst != from || last.guard.is_some() {
            return false;
        }
        *dst = to;
        true
    }

    /// A label to be placed later.
    #[cold]
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label((self.labels.len() - 1) as u32)
    }

    /// Places `l` at the next instruction.
    #[cold]
    pub fn place(&mut self, l: Label) {
        if let Some(slot) = self.labels.get_mut(l.0 as usize) {
            *slot = Some(self.insts.len() as u32);
        }
    }

    /// A branch to `l` for the lanes where `guard` holds (all active lanes when `None`).
    #[cold]
    pub fn bra(&mut self, l: Label, guard: Option<PredRef>, span: Span) {
        self.fixups.push((self.insts.len(), l));
        self.emit(Op::Bra { target: u32::MAX }, guard, span);
    }

    /// The instruction emitted last (a language may amend it).
    #[cold]
    pub fn last_mut(&mut self) -> Option<&mut Inst> {
        self.insts.last_mut()
    }

    /// Says what the branch just emitted decides in the source: `what` names its condition ("the condition
    /// of the `if` at 12:5"), and `holds_when_taken` whether the condition holds in the lanes that branch (an
    /// `if` branches around its body where it fails). Messages and the data-branch assumption use it.
    #[cold]
    pub fn describe_branch(&mut self, what: &str, holds_when_taken: bool) {
        let Some(at) = self.insts.len().checked_sub(1) else { return };
        if matches!(self.insts[at].op, Op::Bra { .. }) {
            let ctx = self.ctx(what.to_string());
            self.conditions.insert(at as u32, (ctx, holds_when_taken));
        }
    }

    /// A branch to an instruction index.
    #[cold]
    pub fn bra_to(&mut self, target: u32, guard: Option<PredRef>, span: Span) {
        self.emit(Op::Bra { target }, guard, span);
    }

    /// Finishes the program: resolves labels, orders the sites, and computes where diverged lanes meet again.
    #[cold]
    pub fn finish(mut self) -> Program {
        for (at, l) in std::mem::take(&mut self.fixups) {
            let target = self.labels.get(l.0 as usize).copied().flatten().unwrap_or(self.insts.len() as u32);
            if let Some(Inst { op: Op::Bra { target: t }, .. }) = self.insts.get_mut(at) {
                *t = target;
            }
        }
        // Sites in display order; memory operations are renumbered to match.
        // Sorted as (key, index) pairs of the type global coalescing sorts, so the binary has one sort for
        // both (the page's size budget). A key only orders: its parts are capped at 2^32 - 1, and equal
        // keys keep creation order.
        let cap = |x: usize| (x as u64).min(u64::from(u32::MAX));
        let mut keyed: Vec<(u64, usize)> =
            self.sites.iter().enumerate().map(|(i, (k, _))| ((cap(k.0) << 32) | cap(k.1), i)).collect();
        keyed.sort_unstable();
        let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
        let mut new_id = vec![0u32; self.sites.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = new as u32;
        }
        for inst in &mut self.insts {
            if let Op::Mem { site, .. } = &mut inst.op {
                *site = new_id[*site as usize];
            }
        }
        let mut sites: Vec<Option<Site>> = self.sites.into_iter().map(|(_, s)| Some(s)).collect();
        let sites: Vec<Site> = order.iter().filter_map(|&i| sites[i].take()).collect();
        let reconverge = reconverge::reconvergence(&self.insts);
        Program {
            insts: self.insts,
            sites,
            n_regs: self.n_regs,
            n_preds: self.n_preds,
            whys: self.whys,
            data_whys: self.data_whys,
            ctxs: self.ctxs,
            reconverge,
            notes: self.notes,
            kernel: self.kernel,
            kernels: self.kernels,
            uncounted: self.uncounted,
            conditions: self.conditions,
            data_branches: DataBranches::default(),
            shared_bytes: None,
            #[cfg(feature = "data")]
            arrays: Vec::new(),
            #[cfg(feature = "data")]
            given: None,
            regions: Default::default(),
        }
    }
}

impl Program {
    /// The program as text, one instruction a line (`12: @!p3 bra 20`): what the languages lowered, for
    /// tests and for looking.
    pub fn listing(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let src = |s: &Src| match s {
            Src::Reg(r) => format!("r{r}"),
            Src::Imm(v) => format!("{v:#x}"),
        };
        let pred = |p: &PredRef| match p.idx {
            None => {
                if p.neg {
                    "!pT".to_string()
                } else {
                    "pT".to_string()
                }
            }
            Some(i) => format!("{}p{i}", if p.neg { "!" } else { "" }),
        };
        for (k, inst) in self.insts.iter().enumerate() {
            let guard = inst.guard.map(|g| format!("@{} ", pred(&g))).unwrap_or_default();
            let body = match &inst.op {
                Op::Bin { op, w, dst, a, b } => format!("r{dst} = {op:?}.{} {}, {}", w.bits(), src(a), src(b)),
                Op::Conv { dst, a, bits, signed } => {
                    format!("r{dst} = {}{bits} {}", if *signed { "sext" } else { "zext" }, src(a))
                }
                Op::Mov { dst, a } => format!("r{dst} = {}", src(a)),
                Op::Sel { dst, p, a, b } => format!("r{dst} = {} ? {} : {}", pred(p), src(a), src(b)),
                Op::Special { dst, which } => format!("r{dst} = {which:?}"),
                Op::Unknown { dst, why } => format!("r{dst} = unknown({})", self.whys[*why as usize]),
                Op::Peek { dst, addr, .. } => format!("r{dst} = peek [r{addr}]"),
                Op::Setp { dst, cmp, signed, w, a, b } => {
                    format!("p{dst} = {cmp:?}.{}{} {}, {}", if *signed { "s" } else { "u" }, w.bits(), src(a), src(b))
                }
                Op::PredLogic { dst, op, a, b } => format!("p{dst} = {op:?} {}, {}", pred(a), pred(b)),
                Op::PredToReg { dst, p } => format!("r{dst} = {}", pred(p)),
                Op::Require { a, .. } => format!("require {}", src(a)),
                Op::RequirePred { p, .. } => format!("require p{p}"),
                Op::Eval { dst, pred: p, .. } => format!("r{dst}, p{p} = eval"),
                Op::Table { dst, pred: p, .. } => format!("r{dst}, p{p} = table"),
                Op::Mem { site, addr, data, .. } => match data {
                    Some(l) => format!("r{} = mem site{site} [r{addr}]", l.dst),
                    None => format!("mem site{site} [r{addr}]"),
                },
                Op::Index { dst, base, idx, bits, signed, scale } => format!(
                    "r{dst} = index {} + {}{bits} {} * {scale}",
                    src(base),
                    if *signed { "sext" } else { "zext" },
                    src(idx)
                ),
                Op::Converged { dst } => format!("p{dst} = converged"),
                Op::Aggregate { dst, addr, val } => format!("p{dst} = aggregate r{addr}, {}", src(val)),
                Op::Bra { target } => format!("bra {target}"),
                Op::Exit => "exit".into(),
                Op::Bar => "bar".into(),
                Op::Trap { .. } => "trap".into(),
                Op::Un { f, dst, a } => format!("r{dst} = {f:?} {}", src(a)),
                Op::Shfl { mode, dst, a, b, c, .. } => {
                    format!("r{dst} = shfl.{mode:?} {}, {}, {}", src(a), src(b), src(c))
                }
                Op::Vote { all, p, .. } => format!("vote.{} {}", if *all { "all" } else { "any" }, pred(p)),
                Op::Nop => "nop".into(),
            };
            let _ = writeln!(out, "{k}: {guard}{body}");
        }
        out
    }
}
