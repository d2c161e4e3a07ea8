//! The memory instruction: which space, load or store, width, cache operator, and the per-lane addresses.
//!
//! Instructions are parsed once, here, from SASS mnemonics (`LDG.E.CG.64`, `LDS.U.128`, `ST.E.64`, ...) as
//! the seeds write them. After parsing nothing in the engine can fail.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The number of lanes in a warp on every compute capability.
pub const WARP_LANES: usize = 32;

/// The mnemonic without modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Base {
    /// Load from the global window (`LDG`).
    Ldg,
    /// Store to the global window (`STG`).
    Stg,
    /// Generic load: the address picks global, shared or local memory (`LD`).
    Ld,
    /// Generic store (`ST`).
    St,
    /// Load within the shared window (`LDS`).
    Lds,
    /// Store within the shared window (`STS`).
    Sts,
    /// Load within the local window (`LDL`).
    Ldl,
    /// Store within the local window (`STL`).
    Stl,
    /// `ldmatrix`: each lane of the first 8, 16 or 32 gives one 16-byte row of an 8x8 matrix of 16-bit
    /// elements in shared memory (`LDSM.16.M88.4`, CC 7.5+).
    Ldsm,
    /// `stmatrix`: the store form of [`Base::Ldsm`] (`STSM.16.M88.4`, CC 9.0+).
    Stsm,
    /// `cp.async`: each lane copies 4, 8 or 16 bytes from global to shared memory in one instruction
    /// (`LDGSTS`, CC 8.0+). Its address is the shared destination; the global source is a second operand.
    Ldgsts,
    /// A global atomic whose old value is used (`ATOMG`; PTX `atom.global`): a read-modify-write performed
    /// in L2 (docs/model.md#atomics).
    Atomg,
    /// A generic atomic (`ATOM`; PTX `atom` without a space): the address picks global or shared memory.
    Atom,
    /// A global reduction, an atomic whose old value is not used (`RED`, `REDG`; PTX `red`, or an `atom`
    /// whose result ptxas found unused).
    Red,
    /// A shared-memory atomic (`ATOMS`, CC 5.0+; `ATOMS.POPC.INC` for `atomicAdd(&s[i], 1)`).
    Atoms,
    /// A constant-bank load at a per-thread offset (`LDC Rd, c[bank][Ra + imm]`; PTX `ld.const`, CUDA
    /// `__constant__` arrays indexed per thread): served by the constant cache, one pass per distinct address
    /// (docs/model.md#constant-memory). Its addresses are offsets in the constant bank.
    Ldc,
}

impl Base {
    /// True for stores.
    pub fn is_store(self) -> bool {
        matches!(self, Base::Stg | Base::St | Base::Sts | Base::Stl | Base::Stsm)
    }

    /// True for atomics and reductions (docs/model.md#atomics).
    pub fn is_atomic(self) -> bool {
        matches!(self, Base::Atomg | Base::Atom | Base::Red | Base::Atoms)
    }

    /// True for a constant-bank load (docs/model.md#constant-memory): not L1/TEX traffic.
    pub fn is_constant(self) -> bool {
        self == Base::Ldc
    }

    /// True for what writes memory: stores, atomics and reductions.
    pub fn writes(self) -> bool {
        self.is_store() || self.is_atomic()
    }

    /// True for `ldmatrix` / `stmatrix`: one phase per 8x8 matrix.
    pub fn is_matrix(self) -> bool {
        matches!(self, Base::Ldsm | Base::Stsm)
    }

    /// The space the mnemonic names, or `None` for the generic `LD`/`ST`.
    pub fn fixed_space(self) -> Option<Space> {
        match self {
            // A constant load is costed apart (docs/model.md#constant-memory); its offsets are checked like global addresses.
            Base::Ldg | Base::Stg | Base::Atomg | Base::Red | Base::Ldc => Some(Space::Global),
            Base::Lds | Base::Sts | Base::Ldsm | Base::Stsm | Base::Ldgsts | Base::Atoms => Some(Space::Shared),
            Base::Ldl | Base::Stl => Some(Space::Local),
            Base::Ld | Base::St | Base::Atom => None,
        }
    }

    /// The SASS mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            Base::Ldg => "LDG",
            Base::Stg => "STG",
            Base::Ld => "LD",
            Base::St => "ST",
            Base::Lds => "LDS",
            Base::Sts => "STS",
            Base::Ldl => "LDL",
            Base::Stl => "STL",
            Base::Ldsm => "LDSM",
            Base::Stsm => "STSM",
            Base::Ldgsts => "LDGSTS",
            Base::Atomg => "ATOMG",
            Base::Atom => "ATOM",
            Base::Red => "RED",
            Base::Atoms => "ATOMS",
            Base::Ldc => "LDC",
        }
    }

    /// The PTX instruction it implements (`ld`, `ldmatrix`, `cp.async`, ...).
    pub fn ptx_name(self) -> &'static str {
        match self {
            Base::Ldsm => "ldmatrix",
            Base::Stsm => "stmatrix",
            Base::Ldgsts => "cp.async",
            Base::Red => "red",
            Base::Atomg | Base::Atom | Base::Atoms => "atom",
            b if b.is_store() => "st",
            _ => "ld",
        }
    }

    /// The first compute capability that has the instruction, for those not on every CC warpscope knows:
    /// `ldmatrix` from 7.5, `cp.async` from 8.0, `stmatrix` from 9.0 (PTX ISA, "ldmatrix", "cp.async",
    /// "stmatrix": target ISA notes).
    pub fn first_cc(self) -> Option<crate::model::arch::Cc> {
        use crate::model::arch::Cc;
        match self {
            Base::Ldsm => Some(Cc::new(7, 5)),
            Base::Ldgsts => Some(Cc::new(8, 0)),
            Base::Stsm => Some(Cc::new(9, 0)),
            // Native shared atomics from Maxwell; 2.x and 3.x lock and retry with LDSLK/STSCUL (docs/model.md#atomics).
            Base::Atoms => Some(Cc::new(5, 0)),
            _ => None,
        }
    }
}

/// A memory space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    /// Device memory through L2 (and L1 where the CC caches it).
    Global,
    /// Per-block on-chip shared memory, organised in banks.
    Shared,
    /// Per-thread memory, interleaved across the warp and stored like global memory.
    Local,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
        })
    }
}

/// A cache operator from the instruction references' syntax (`.cop`). Loads and stores have different sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CacheOp {
    /// `.CA`: cache at all levels (the load default). `.CS` maps to it.
    Ca,
    /// `.CG`: cache in L2 and below, not L1. `.LU` on LDG maps to it.
    Cg,
    /// `.CS`: streaming (stores; on loads it maps to `.CA`).
    Cs,
    /// `.LU`: last use.
    Lu,
    /// `.CV`: volatile, fetch again.
    Cv,
    /// `.CI`: inconsistent (read-only, non-coherent) data. SASS `.CONSTANT` means the same.
    Ci,
    /// `.WB`: write back (the store default).
    Wb,
    /// `.WT`: write through.
    Wt,
}

impl CacheOp {
    /// True for the operators that keep a load out of L1 whatever the L1 choice: `.CG` and `.CV`.
    pub fn bypasses_l1(self) -> bool {
        matches!(self, CacheOp::Cg | CacheOp::Cv)
    }
}

/// A parsed memory instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instr {
    /// The mnemonic.
    pub base: Base,
    /// `.E`: a 64-bit address held in two registers.
    pub extended: bool,
    /// The cache operator as written (defaults: `.CA` for loads, `.WB` for stores).
    pub cop: CacheOp,
    /// Access size in bytes: 1, 2, 4, 8 or 16.
    pub size_bytes: u32,
    /// `.U` (LDS) or `.U.128` (LDG): the uniform-address hint.
    pub uniform_hint: bool,
    /// For `LDSM`/`STSM`: how many 8x8 matrices (1, 2 or 4); 0 for every other instruction.
    #[serde(default)]
    pub matrices: u8,
    /// For `LDSM`/`STSM`: `.MT88`, the transposing form (the same rows are read; only the registers differ).
    #[serde(default)]
    pub trans: bool,
    /// For atomics: the operation (`ADD`, `CAS`, `POPC.INC`, ...); empty for every other instruction.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub atomic_op: String,
    /// The mnemonic as the user wrote it, upper-cased.
    pub text: String,
}

/// An error in an instruction mnemonic, with the 0-based byte column where it starts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OpError {
    /// What is wrong.
    pub message: String,
    /// Byte offset of the offending part in the mnemonic.
    pub column: usize,
    /// Length of the offending part (at least 1).
    pub len: usize,
}

impl Instr {
    /// The size modifier a SASS memory mnemonic writes for `bytes` per lane, the one [`Instr::parse`] reads
    /// back: `U8`/`S8` and `U16`/`S16` (signed loads sign-extend; a store writes the low bytes and has no
    /// signedness), `32`, `64`, `128`; None for a size SASS does not move.
    pub fn size_modifier(bytes: u32, signed: bool) -> Option<&'static str> {
        Some(match (bytes, signed) {
            (1, true) => "S8",
            (1, false) => "U8",
            (2, true) => "S16",
            (2, false) => "U16",
            (4, _) => "32",
            (8, _) => "64",
            (16, _) => "128",
            _ => return None,
        })
    }

    /// Parses a SASS memory mnemonic with its modifiers, for example `LDG.E.CG.64` or `LDS.U.128`.
    ///
    /// Modifiers that do not change what warpscope counts (`.SYS`, `.GPU`, `.STRONG`, eviction hints, ...)
    /// are accepted so that text copied from `cuobjdump -sass` works.
    pub fn parse(text: &str) -> Result<Instr, OpError> {
        let upper = text.trim().to_ascii_uppercase();
        let lead = text.len() - text.trim_start().len();
        let mut parts = Vec::new();
        let mut start = 0usize;
        for piece in upper.split('.') {
            parts.push((start + lead, piece));
            start += piece.len() + 1;
        }
        let Some(&(_, head)) = parts.first() else {
            return Err(OpError { message: "empty instruction".into(), column: 0, len: 1 });
        };
        let base = match head {
            "LDG" => Base::Ldg,
            "STG" => Base::Stg,
            "LD" => Base::Ld,
            "ST" => Base::St,
            "LDS" => Base::Lds,
            "STS" => Base::Sts,
            "LDL" => Base::Ldl,
            "STL" => Base::Stl,
            "LDSM" => Base::Ldsm,
            "STSM" => Base::Stsm,
            "LDGSTS" => Base::Ldgsts,
            "ATOMG" => Base::Atomg,
            "ATOM" => Base::Atom,
            "RED" | "REDG" => Base::Red,
            "ATOMS" => Base::Atoms,
            "LDC" => Base::Ldc,
            "" => return Err(OpError { message: "empty instruction".into(), column: lead, len: 1 }),
            other => {
                return Err(OpError {
                    message: format!(
                        "`{other}` is not a memory instruction warpscope knows (LDG, STG, LD, ST, LDS, STS, LDL, STL, LDSM, STSM, LDGSTS, ATOMG, ATOM, RED, REDG, ATOMS, LDC)"
                    ),
                    column: lead,
                    len: other.len().max(1),
                })
            }
        };
        let store = base.is_store();
        let mut instr = Instr {
            base,
            extended: false,
            cop: if store { CacheOp::Wb } else { CacheOp::Ca },
            size_bytes: 4,
            uniform_hint: false,
            matrices: 0,
            trans: false,
            atomic_op: String::new(),
            text: upper.clone(),
        };
        if base.is_matrix() {
            return parse_matrix(instr, &parts);
        }
        if base.is_atomic() {
            return parse_atomic(instr, &parts);
        }
        let mut seen_cop: Option<usize> = None;
        let mut seen_size: Option<usize> = None;
        let mut i = 1;
        while i < parts.len() {
            let (col, m) = parts[i];
            let err = |message: String| OpError { message, column: col, len: m.len().max(1) };
            let window = matches!(base, Base::Lds | Base::Sts | Base::Ldl | Base::Stl | Base::Ldc);
            let cop = match (m, store) {
                ("CA", false) => Some(CacheOp::Ca),
                ("CG", _) => Some(CacheOp::Cg),
                ("CS", _) => Some(CacheOp::Cs),
                ("LU", false) => Some(CacheOp::Lu),
                ("CV", false) => Some(CacheOp::Cv),
                ("CI", false) | ("CONSTANT", false) => Some(CacheOp::Ci),
                ("WB", true) => Some(CacheOp::Wb),
                ("WT", true) => Some(CacheOp::Wt),
                _ => None,
            };
            if let Some(cop) = cop {
                if matches!(base, Base::Lds | Base::Sts) {
                    return Err(err(format!("shared-memory instructions take no cache operator, found `.{m}`")));
                }
                if base == Base::Ldc {
                    return Err(err(format!("LDC takes no cache operator, found `.{m}`")));
                }
                if base == Base::Ldgsts && !matches!(cop, CacheOp::Ca | CacheOp::Cg) {
                    return Err(err(format!("LDGSTS takes .CA or .BYPASS (cp.async.cg), not `.{m}`")));
                }
                if base == Base::Ldl && cop == CacheOp::Cg {
                    return Err(err("LDL takes .CA, .CS, .LU, .CV or .CI, not `.CG`".into()));
                }
                if let Some(prev) = seen_cop {
                    return Err(err(format!("a second cache operator `.{m}` (the first is at column {})", prev + 1)));
                }
                seen_cop = Some(col);
                instr.cop = cop;
                i += 1;
                continue;
            }
            let size = match m {
                "U8" | "S8" => Some(1),
                "8" if store => Some(1),
                "U16" | "S16" => Some(2),
                "16" if store => Some(2),
                "32" => Some(4),
                "64" => Some(8),
                "128" => Some(16),
                _ => None,
            };
            if let Some(size) = size {
                if let Some(prev) = seen_size {
                    return Err(err(format!("a second size `.{m}` (the first is at column {})", prev + 1)));
                }
                seen_size = Some(col);
                instr.size_bytes = size;
                i += 1;
                continue;
            }
            match m {
                "E" if window => {
                    return Err(err(format!(
                        "`.E` (64-bit address) does not apply to {}: it addresses a 16 MB window",
                        base.name()
                    )));
                }
                "E" => instr.extended = true,
                // LDGSTS.BYPASS is cp.async.cg: the global read keeps out of L1.
                "BYPASS" if base == Base::Ldgsts => instr.cop = CacheOp::Cg,
                // A source size in another operand: fewer bytes read than written.
                "ZFILL" if base == Base::Ldgsts => {
                    return Err(err("LDGSTS.ZFILL reads fewer bytes than it copies (the rest is zero-filled): warpscope does not model it and refuses it rather than count the full copy".into()))
                }
                // `.U` on LDS is the uniform hint; on LDG it only appears as `.U.128`.
                "U" if base == Base::Lds => instr.uniform_hint = true,
                "U" if base == Base::Ldg && parts.get(i + 1).map(|p| p.1) == Some("128") => {
                    instr.uniform_hint = true;
                }
                // Memory-ordering scopes, eviction-priority and L2-prefetch hints from current SASS: accepted,
                // they do not change which bytes move.
                "SYS" | "GPU" | "CTA" | "SM" | "STRONG" | "WEAK" | "MMIO" | "EF" | "EN" | "EL" | "LTC64B" | "LTC128B"
                | "LTC256B" | "ZFILL" | "NA" | "PRIVATE" | "BYPASS" => {}
                // LDC's index-clamping modes (`.IL`, `.IS`, `.ISL`) change no address warpscope counts.
                "IL" | "IS" | "ISL" if base == Base::Ldc => {}
                "" => return Err(err("empty modifier (two dots in a row or a trailing dot)".into())),
                _ => {
                    return Err(err(format!(
                        "unknown modifier `.{m}` for {} (sizes: .U8 .S8 .U16 .S16 .32 .64 .128; cache operators: {})",
                        base.name(),
                        if store { ".WB .CG .CS .WT" } else { ".CA .CG .CS .LU .CV .CI" }
                    )))
                }
            }
            i += 1;
        }
        Ok(instr)
    }

    /// For `LDSM`/`STSM`, the lanes that give row addresses (threads 0-7 for one matrix, 0-15 for two, all
    /// 32 for four: the PTX ISA, "ldmatrix"); every lane for other instructions.
    pub fn lane_mask(&self) -> u32 {
        match self.matrices {
            1 => 0xFF,
            2 => 0xFFFF,
            _ => u32::MAX,
        }
    }

    /// The same instruction moving `bytes` (4, 8 or 16) per lane: its size modifier replaced, or added
    /// where it had none (`LDG.E.32` -> `LDG.E.128`). `None` for a size the instruction cannot take.
    pub fn with_size(&self, bytes: u32) -> Option<Instr> {
        let suffix = match bytes {
            4 => "32",
            8 => "64",
            16 => "128",
            _ => return None,
        };
        let is_size = |m: &str| matches!(m, "U8" | "S8" | "U16" | "S16" | "8" | "16" | "32" | "64" | "128");
        let mut parts: Vec<&str> = self.text.split('.').collect();
        match parts.iter().skip(1).position(|m| is_size(m)) {
            Some(k) => parts[k + 1] = suffix,
            None => parts.push(suffix),
        }
        Instr::parse(&parts.join(".")).ok().filter(|i| i.size_bytes == bytes)
    }

    /// Bits in the address operand: 64 with `.E`, else 32 (always 32 for the shared destination of `LDGSTS`,
    /// whose `.E` is its global source's: [`Instr::source_address_bits`]).
    pub fn address_bits(&self) -> u32 {
        if self.extended && self.base != Base::Ldgsts {
            64
        } else {
            32
        }
    }

    /// Bits in `LDGSTS`'s global source address: 64 with `.E`, else 32.
    pub fn source_address_bits(&self) -> u32 {
        if self.extended {
            64
        } else {
            32
        }
    }

    /// True for stores.
    pub fn is_store(&self) -> bool {
        self.base.is_store()
    }

    /// `ATOMS.POPC.INC`: the whole warp's increments of one word done as one (docs/model.md#atomics: it "counts each
    /// word once").
    pub fn is_popc_inc(&self) -> bool {
        self.atomic_op == "POPC.INC"
    }

    /// For `LDGSTS`, its global side as a global load of the same width and cache operator (docs/model.md#asynchronous-copies:
    /// "cost the global side as a global load of that width"); the text stays the instruction's.
    pub fn copy_source(&self) -> Instr {
        Instr { base: Base::Ldg, ..self.clone() }
    }

    /// The cache operator after the seeds' aliases: on loads `.CS` maps to `.CA`, and on LDG `.LU` maps to
    /// `.CG` (the LDG instruction reference).
    pub fn effective_cop(&self) -> CacheOp {
        match (self.base, self.cop) {
            (b, CacheOp::Cs) if !b.is_store() => CacheOp::Ca,
            (Base::Ldg, CacheOp::Lu) => CacheOp::Cg,
            (_, c) => c,
        }
    }
}

/// The modifiers of `LDSM`/`STSM`: `.16` (16-bit elements), `.M88` or `.MT88` (transposed), and `.2` or
/// `.4` matrices (one without). Each lane's address is a 16-byte row.
fn parse_matrix(mut instr: Instr, parts: &[(usize, &str)]) -> Result<Instr, OpError> {
    instr.size_bytes = 16;
    instr.matrices = 1;
    let mut shape = None;
    for &(col, m) in &parts[1..] {
        let err = |message: String| OpError { message, column: col, len: m.len().max(1) };
        match m {
            "16" | "B16" => {}
            "M88" | "MT88" if shape.is_none() => {
                shape = Some(col);
                instr.trans = m == "MT88";
            }
            "M88" | "MT88" => return Err(err(format!("a second shape `.{m}`"))),
            "2" | "X2" if shape.is_some() => instr.matrices = 2,
            "4" | "X4" if shape.is_some() => instr.matrices = 4,
            "1" | "X1" if shape.is_some() => instr.matrices = 1,
            "SYNC" | "ALIGNED" | "SHARED" | "CTA" => {}
            "" => return Err(err("empty modifier (two dots in a row or a trailing dot)".into())),
            _ => {
                return Err(err(format!(
                    "unknown modifier `.{m}` for {} (write {0}.16.M88, {0}.16.MT88, then .2 or .4 for two or four matrices)",
                    instr.base.name()
                )))
            }
        }
    }
    if shape.is_none() {
        let end = parts.last().map_or(0, |(c, m)| c + m.len());
        return Err(OpError {
            message: format!("{} needs its shape: .M88 (or .MT88, transposed), as in {0}.16.M88.4", instr.base.name()),
            column: end,
            len: 1,
        });
    }
    Ok(instr)
}

/// The operations of `ATOM`, `ATOMG`, `ATOMS`, `RED` and `REDG` (the PTX ISA's `atom`/`red` operations as
/// SASS spells them).
const ATOMIC_OPS: [&str; 14] =
    ["ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS", "CAST", "POPC", "SAFEADD", "ARRIVE"];

/// The modifiers of an atomic: its operation, the operand type (which gives the size: `.64`, `.U64`, `.F64`
/// are 8 bytes, `.128` 16, the rest 4), `.E`, and memory-ordering scopes that move no other bytes.
fn parse_atomic(mut instr: Instr, parts: &[(usize, &str)]) -> Result<Instr, OpError> {
    let mut op: Vec<&str> = Vec::new();
    for &(col, m) in &parts[1..] {
        let err = |message: String| OpError { message, column: col, len: m.len().max(1) };
        match m {
            "E" if instr.base == Base::Atoms => {
                return Err(err("`.E` (64-bit address) does not apply to ATOMS: it addresses the shared window".into()))
            }
            "E" => instr.extended = true,
            _ if ATOMIC_OPS.contains(&m) => op.push(m),
            // `POPC.INC`, `CAS.SPIN` (Maxwell's compare-and-swap loops), `CAST.SPIN`.
            "INC" | "SPIN" if !op.is_empty() => op.push(m),
            "64" | "U64" | "S64" | "F64" => instr.size_bytes = 8,
            "128" => instr.size_bytes = 16,
            "32" | "U32" | "S32" | "F32" | "F16X2" | "BF16X2" => instr.size_bytes = 4,
            "F16" | "BF16" => instr.size_bytes = 2,
            "FTZ" | "RN" | "RZ" | "SYS" | "GPU" | "CTA" | "SM" | "STRONG" | "WEAK" | "MMIO" | "EF" | "EN" | "EL"
            | "PACKED" | "NOFTZ" | "PRIVATE" | "VSM" => {}
            "" => return Err(err("empty modifier (two dots in a row or a trailing dot)".into())),
            _ => {
                return Err(err(format!(
                    "unknown modifier `.{m}` for {} (operations: {}; types .32 .64 .U64 .S32 .F32 .F64 .128)",
                    instr.base.name(),
                    ATOMIC_OPS.map(|o| format!(".{o}")).join(" ")
                )))
            }
        }
    }
    instr.atomic_op = if op.is_empty() { "ADD".into() } else { op.join(".") };
    Ok(instr)
}

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The set of lanes of one warp, as a 32-bit mask (bit i = lane i). Serialised as a list of lane numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaneSet(pub u32);

impl LaneSet {
    /// All 32 lanes.
    pub const ALL: LaneSet = LaneSet(u32::MAX);

    /// Lanes `first..=last`.
    pub fn range(first: u32, last: u32) -> LaneSet {
        let mut m = 0u32;
        for l in first..=last.min(31) {
            m |= 1 << l;
        }
        LaneSet(m)
    }

    /// Adds a lane.
    pub fn insert(&mut self, lane: usize) {
        self.0 |= 1 << lane;
    }

    /// True if the lane is in the set.
    pub fn contains(self, lane: usize) -> bool {
        lane < WARP_LANES && self.0 & (1 << lane) != 0
    }

    /// Number of lanes in the set.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// True when no lane is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The lanes, lowest first.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..WARP_LANES).filter(move |&l| self.contains(l))
    }

    /// The set written as ranges: `0-15, 20, 22-23`.
    pub fn ranges(self) -> String {
        crate::text::ranges(self.iter())
    }

    /// The lanes of request or phase `index` when a warp is split into groups of `lanes_per_group`.
    pub fn group(index: u32, lanes_per_group: u32) -> LaneSet {
        let first = index * lanes_per_group;
        LaneSet::range(first, first + lanes_per_group - 1)
    }

    /// The set as a phrase: `lane 3` or `lanes 0-7, 9`.
    pub fn phrase(self) -> String {
        crate::text::lanes_phrase(self.iter())
    }
}

impl Serialize for LaneSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|l| l as u32))
    }
}

impl<'de> serde::Deserialize<'de> for LaneSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<LaneSet, D::Error> {
        let lanes: Vec<u32> = Vec::deserialize(d)?;
        let mut s = LaneSet::default();
        for l in lanes {
            if l as usize >= WARP_LANES {
                return Err(serde::de::Error::custom(format!("lane {l} is not a lane of a warp (0..31)")));
            }
            s.insert(l as usize);
        }
        Ok(s)
    }
}

/// One warp's addresses: `None` for an inactive lane. Values are byte addresses in the operand's own space
/// (a generic or global address, or an offset within the shared or local window).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpAddrs(pub [Option<u64>; WARP_LANES]);

impl WarpAddrs {
    /// Builds the addresses from a function of the lane, keeping only the lanes in `mask`.
    pub fn from_fn(mask: LaneSet, mut f: impl FnMut(usize) -> u64) -> WarpAddrs {
        let mut a = [None; WARP_LANES];
        for (lane, slot) in a.iter_mut().enumerate() {
            if mask.contains(lane) {
                *slot = Some(f(lane));
            }
        }
        WarpAddrs(a)
    }

    /// The active lanes.
    pub fn mask(&self) -> LaneSet {
        let mut m = LaneSet::default();
        for (lane, a) in self.0.iter().enumerate() {
            if a.is_some() {
                m.insert(lane);
            }
        }
        m
    }
}

/// A warp-level instruction's second operand, besides its addresses: none, the explicit `Plg` predicate of a
/// generic LD/ST (the lanes whose Plg is true, "local or global"), or the global source addresses of a
/// `cp.async` (`LDGSTS`), whose own addresses are the shared destinations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Second<'a> {
    /// Nothing.
    #[default]
    None,
    /// The lanes whose `Plg` is true.
    Plg(u32),
    /// Each lane's global source address, and the lanes that read it (a `cp.async` whose src-size is 0 reads
    /// nothing and zero-fills its shared destination).
    Src(&'a [u64; WARP_LANES], u32),
}

impl Second<'_> {
    /// The `Plg` lanes, if that is what this is.
    pub fn plg(self) -> Option<u32> {
        match self {
            Second::Plg(p) => Some(p),
            _ => None,
        }
    }
}

/// One space's active lanes of a warp issue, compacted: lane numbers in ascending order and each lane's
/// aligned address. A fixed-size array, so costing an issue allocates nothing.
#[derive(Clone, Copy, Debug)]
pub struct Lanes {
    /// The lanes, ascending.
    pub lane: [u8; WARP_LANES],
    /// Each lane's address.
    pub addr: [u64; WARP_LANES],
    /// How many lanes.
    pub n: usize,
}

impl Lanes {
    /// No lanes.
    pub const EMPTY: Lanes = Lanes { lane: [0; WARP_LANES], addr: [0; WARP_LANES], n: 0 };

    /// Adds a lane (lanes must come in ascending order).
    pub fn push(&mut self, lane: usize, addr: u64) {
        self.lane[self.n] = lane as u8;
        self.addr[self.n] = addr;
        self.n += 1;
    }

    /// The lanes as a set.
    pub fn set(&self) -> LaneSet {
        let mut s = LaneSet::default();
        for &l in &self.lane[..self.n] {
            s.insert(usize::from(l));
        }
        s
    }

    /// (lane, address) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.lane[..self.n].iter().zip(&self.addr[..self.n]).map(|(&l, &a)| (usize::from(l), a))
    }

    /// Each lane's address or `None`, as [`WarpAddrs`] holds them.
    pub fn to_options(&self) -> [Option<u64>; WARP_LANES] {
        let mut out = [None; WARP_LANES];
        for (l, a) in self.iter() {
            out[l] = Some(a);
        }
        out
    }
}

// Generic addressing: where the shared and local windows sit. The engine classifies lanes by them, and the
// languages that model generic addresses (PTX cvta, SASS LEA.HI's Plg) test against the same windows.

/// Bytes in the shared and in the local window (the LDL/LDS instruction reference: "Each
/// address window is 16 MB in size").
pub const WINDOW_BYTES: u64 = 16 << 20;
/// Default generic address of the shared window (docs/model.md#alignment-and-windows: high in the generic space, so small example
/// addresses are global).
pub const DEFAULT_SHARED_WINDOW: u64 = 0x0000_7F00_0000_0000;
/// Default generic address of the local window.
pub const DEFAULT_LOCAL_WINDOW: u64 = 0x0000_7F00_0100_0000;

/// Where the shared and local windows sit in the generic address space, and how much of each is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Windows {
    /// Generic address of the start of the shared window.
    pub shared_base: u64,
    /// Generic address of the start of the local window.
    pub local_base: u64,
    /// Shared bytes allocated per block; lanes past it are error lanes. `None`: the whole window.
    pub shared_alloc_bytes: Option<u64>,
    /// Local bytes allocated per thread; lanes past it are error lanes. `None`: the whole window.
    pub local_alloc_bytes: Option<u64>,
}

impl Default for Windows {
    fn default() -> Windows {
        Windows {
            shared_base: DEFAULT_SHARED_WINDOW,
            local_base: DEFAULT_LOCAL_WINDOW,
            shared_alloc_bytes: None,
            local_alloc_bytes: None,
        }
    }
}
