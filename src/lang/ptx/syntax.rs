//! The PTX syntax tree: a module's kernels (`.entry`) and functions (`.func`) with their parameters, its
//! variables, and each function's body as a list of statements (declarations, labels, instructions with their
//! operands). What the parser makes and the lowering reads; nothing here reads text or knows what an
//! instruction means.
//!
//! May import: nothing but `crate::text` (`lang::Span`) and the standard library.

use crate::lang::Span;

/// An operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Opnd {
    /// A register or special register, or a symbol (variable, parameter, label, function): `%r1`, `%tid.x`,
    /// `tile`, `$L__BB0_2`. `!%p` sets `neg`.
    Name {
        /// The name.
        name: String,
        /// Written `!name`.
        neg: bool,
    },
    /// `name+off`: a symbol's address plus bytes.
    NameOff(String, i64),
    /// An integer.
    Imm(u64),
    /// A float literal's bits.
    Float(u64, bool),
    /// `[base]`, `[base+off]`, `[off]`.
    Addr {
        /// The register or symbol, if any.
        base: Option<String>,
        /// Bytes added.
        off: i64,
    },
    /// `{a, b, ...}`: a vector.
    Vec(Vec<Opnd>),
    /// `(a, b, ...)`: a call's argument or return list.
    List(Vec<Opnd>),
    /// `p|q`: setp's two destinations.
    Pair(String, String),
    /// `_`: the sink.
    Sink,
}

/// An instruction.
#[derive(Clone, Debug)]
pub struct Inst {
    /// `@p` / `@!p`.
    pub guard: Option<(String, bool)>,
    /// The opcode with its modifiers, split at dots: `["ld", "global", "f32"]`.
    pub parts: Vec<String>,
    /// The operands and their spans.
    pub ops: Vec<(Opnd, Span)>,
    /// The whole instruction.
    pub span: Span,
    /// The opcode's span.
    pub op_span: Span,
    /// 1-based line.
    pub line: usize,
    /// The source line of the `.loc` directive before it: (file number, line), line > 0.
    pub loc: Option<(u32, u32)>,
}

impl Inst {
    /// The opcode as written: `ld.global.f32`.
    pub fn opcode(&self) -> String {
        self.parts.join(".")
    }

    /// Whether a modifier is present.
    pub fn has(&self, m: &str) -> bool {
        self.parts[1..].iter().any(|p| p == m)
    }
}

/// A state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `.reg`
    Reg,
    /// `.global`
    Global,
    /// `.shared`
    Shared,
    /// `.local`
    Local,
    /// `.const`
    Const,
    /// `.param`
    Param,
}

/// One declared name: `%r<13>` (a range), `tile[4096]` or `x`.
#[derive(Clone, Debug)]
pub struct Declared {
    /// The name (the range's prefix for `%r<13>`).
    pub name: String,
    /// `%r<13>`: 13 registers `%r0`..`%r12`.
    pub range: Option<u32>,
    /// Elements, the product of `[N]` (`Some(0)` for `[]`, an unsized extern array).
    pub elems: Option<u64>,
    /// Where it is.
    pub span: Span,
}

/// A declaration: `.reg .b32 %r<13>;`, `.shared .align 4 .b8 tile[4096];`, `.param .u64 p`.
#[derive(Clone, Debug)]
pub struct Decl {
    /// The state space.
    pub space: Space,
    /// `.extern`.
    pub is_extern: bool,
    /// `.align N`.
    pub align: Option<u64>,
    /// The element type (`b32`, `pred`, `u64`...), without its dot.
    pub ty: String,
    /// `.v2` / `.v4`.
    pub vec: u32,
    /// `.ptr` (on a parameter: it holds a pointer).
    pub ptr: bool,
    /// The names.
    pub names: Vec<Declared>,
    /// Where it is.
    pub span: Span,
}

impl Decl {
    /// Bytes per element.
    pub fn elem_bytes(&self) -> u64 {
        type_bits(&self.ty).map_or(1, |b| u64::from(b.div_ceil(8))) * u64::from(self.vec.max(1))
    }
}

/// Bits of a PTX type name (`u32` -> 32, `pred` -> 1).
pub fn type_bits(ty: &str) -> Option<u32> {
    Some(match ty {
        "pred" => 1,
        "b8" | "u8" | "s8" => 8,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 16,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 32,
        "b64" | "u64" | "s64" | "f64" => 64,
        "b128" => 128,
        _ => return None,
    })
}

/// A statement of a function body.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// A declaration inside the body.
    Decl(Decl),
    /// `NAME:`
    Label(String, Span),
    /// An instruction.
    Inst(Inst),
}

/// A kernel or function.
#[derive(Clone, Debug)]
pub struct Func {
    /// Its symbol.
    pub name: String,
    /// `.entry` (a kernel) rather than `.func`.
    pub entry: bool,
    /// Parameters.
    pub params: Vec<Decl>,
    /// Return parameters (`.func (.param .b32 r) f`).
    pub rets: Vec<Decl>,
    /// The body, `None` for a declaration (`.extern .func vprintf(...)`).
    pub body: Option<Vec<Stmt>>,
    /// The name's span.
    pub span: Span,
}

/// A whole PTX module.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// The SM number of `.target sm_80`.
    pub target: Option<u32>,
    /// Module-scope variables.
    pub vars: Vec<Decl>,
    /// Functions and kernels, in file order.
    pub funcs: Vec<Func>,
    /// The `.file` directives: (number, name).
    pub files: Vec<(u32, String)>,
}
