//! Arrays given as data (docs/model.md#kernels-on-data): where each sits in global memory, its element type and
//! its bytes, so that a load from one returns its element.
//!
//! Given arrays are the launch's inputs. A load inside one reads its element; a load past its end (inside the
//! region the array's base opens, up to the next array's default base) is an error that names the array, the
//! element and the thread; a store or an atomic into one is an error too, since the values a kernel writes are
//! not followed yet (a later load would read the old element). Loads anywhere else keep the rules of a launch
//! without data: their values are unknown. A load of several elements (a PTX vector, a SASS register pair)
//! reads its first through the memory instruction and the others as parts at their addresses
//! ([`Builder::part_addresses`], [`Builder::load_parts`]).

use super::{BinOp, Builder, Inst, Load, Op, PredRef, Reg, Src, WhyId, Width};
use crate::text::Span;
use std::sync::Arc;

/// An element type, as the kernel declares the pointer or array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// An integer of 1, 2, 4 or 8 bytes.
    Int {
        /// Bytes.
        bytes: u8,
        /// Signed.
        signed: bool,
    },
    /// A floating-point number of 2, 4 or 8 bytes.
    Float {
        /// Bytes.
        bytes: u8,
    },
    /// A pointer (8 bytes).
    Ptr,
    /// A struct or vector type: not given as data.
    Other,
}

impl Elem {
    /// Bytes per element (`None` for [`Elem::Other`]).
    pub fn bytes(self) -> Option<u32> {
        match self {
            Elem::Int { bytes, .. } | Elem::Float { bytes } => Some(u32::from(bytes)),
            Elem::Ptr => Some(8),
            Elem::Other => None,
        }
    }

    /// numpy's name for it (`int32`, `uint8`, `float32`), or `pointer`.
    pub fn name(self) -> String {
        match self {
            Elem::Int { bytes, signed } => format!("{}int{}", if signed { "" } else { "u" }, u32::from(bytes) * 8),
            Elem::Float { bytes } => format!("float{}", u32::from(bytes) * 8),
            Elem::Ptr => "pointer".into(),
            Elem::Other => "a struct or vector".into(),
        }
    }

    /// The element type a pointer parameter points to, from its C type as a demangler spells it
    /// (`unsigned char const*`, `float4*`, `int const* restrict`): vector types hold their scalars (`uint4` is
    /// `uint32`s), a pointer to a pointer holds pointers; `None` for another type (a struct) or not a pointer.
    pub fn of_pointer(ty: &str) -> Option<Elem> {
        let spaced = ty.replace('*', " * ").replace('&', " & ");
        let mut words: Vec<&str> = spaced
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict__" | "__restrict"))
            .collect();
        if !matches!(words.pop(), Some("*" | "&")) {
            return None;
        }
        if matches!(words.last(), Some(&"*" | &"&")) {
            return Some(Elem::Ptr);
        }
        let t = words.join(" ");
        let int = |bytes, signed| Some(Elem::Int { bytes, signed });
        // CUDA's vector types (char4, uint2, float4, longlong2, __half2 ...) hold their scalars one after another.
        let (scalar, vector) = match t.strip_suffix(['1', '2', '3', '4']) {
            Some(s) if t != "__nv_bfloat16" => (s, true),
            _ => (t.as_str(), false),
        };
        match (scalar, vector) {
            ("char" | "signed char", false) | ("char", true) => int(1, true),
            ("unsigned char" | "bool", false) | ("uchar", true) => int(1, false),
            ("short", _) => int(2, true),
            ("unsigned short", false) | ("ushort", true) => int(2, false),
            ("int", _) => int(4, true),
            ("unsigned int", false) | ("uint", true) => int(4, false),
            ("long" | "long long", false) | ("long" | "longlong", true) => int(8, true),
            ("unsigned long" | "unsigned long long", false) | ("ulong" | "ulonglong", true) => int(8, false),
            ("float", _) => Some(Elem::Float { bytes: 4 }),
            ("double", _) => Some(Elem::Float { bytes: 8 }),
            ("__half" | "half" | "__nv_bfloat16", false) | ("__half" | "__nv_bfloat16", true) => {
                Some(Elem::Float { bytes: 2 })
            }
            _ => None,
        }
    }

    /// The register value of an element's little-endian bytes: integers sign- or zero-extended to 64 bits as
    /// the machine's conversions extend them, pointers as they are; `None` for a floating-point element, whose
    /// value the machine does not follow.
    pub fn value(self, raw: &[u8]) -> Option<u64> {
        let mut b = [0u8; 8];
        let n = raw.len().min(8);
        b[..n].copy_from_slice(&raw[..n]);
        let v = u64::from_le_bytes(b);
        match self {
            Elem::Int { bytes, signed } => {
                let k = 64 - 8 * u32::from(bytes).min(8);
                Some(if signed { (((v << k) as i64) >> k) as u64 } else { (v << k) >> k })
            }
            Elem::Ptr => Some(v),
            Elem::Float { .. } | Elem::Other => None,
        }
    }
}

/// A global array or pointer the kernel names, where data can be given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayDecl {
    /// Its name in the source.
    pub name: String,
    /// Its base address in this launch.
    pub base: u64,
    /// Its element type.
    pub elem: Elem,
}

/// One given array.
#[derive(Clone, Debug)]
pub struct GivenArray {
    /// The name in the source.
    pub name: String,
    /// Where it starts.
    pub base: u64,
    /// Bytes from `base` that belong to it: reads in `base + len..base + region` are past its end.
    pub region: u64,
    /// The element type.
    pub elem: Elem,
    /// Its contents, little-endian.
    pub bytes: Arc<[u8]>,
    /// Where the contents came from, for the result's notes: `uniform(0, 256, n=1024, seed=1)`, `ids.npy`.
    pub origin: String,
}

impl GivenArray {
    /// Elements.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64 / u64::from(self.elem.bytes().unwrap_or(1))
    }

    /// True when it has no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// What an access of `bytes` bytes at an address finds.
#[derive(Clone, Copy, Debug)]
pub enum Found<'a> {
    /// Inside a given array, this many bytes from its base.
    In(&'a GivenArray, u64),
    /// Past the end of a given array, this many bytes from its base.
    Past(&'a GivenArray, u64),
    /// In no given array.
    Nowhere,
}

/// The arrays given to a launch.
#[derive(Clone, Debug, Default)]
pub struct Given {
    /// The arrays, by base address.
    pub arrays: Vec<GivenArray>,
}

impl Given {
    /// Where `bytes` bytes at `addr` fall.
    pub fn find(&self, addr: u64, bytes: u64) -> Found<'_> {
        for a in &self.arrays {
            let Some(off) = addr.checked_sub(a.base) else { continue };
            if off >= a.region {
                continue;
            }
            return if off.saturating_add(bytes) <= a.bytes.len() as u64 {
                Found::In(a, off)
            } else {
                Found::Past(a, off)
            };
        }
        Found::Nowhere
    }

    /// One line per array for the result's notes: `col (int32, 4,096 elements: col.npy)`.
    pub fn describe(&self) -> String {
        self.arrays
            .iter()
            .map(|a| format!("`{}` ({}, {} elements: {})", a.name, a.elem.name(), a.len(), a.origin))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Loads of several elements: the later ones read as parts of given data.
impl Builder {
    /// The addresses `addr + k * stride`, k from 1 to `n - 1`, in temporaries: where a load's elements after
    /// its first are read as parts ([`Builder::load_parts`]). Taken before the load, which may overwrite `addr`.
    #[cold]
    pub fn part_addresses(&mut self, addr: Reg, n: usize, stride: u64, guard: Option<PredRef>, span: Span) -> Vec<Reg> {
        (1..n as u64)
            .map(|k| {
                let at = self.temp();
                let op = Op::Bin { op: BinOp::Add, w: Width::W64, dst: at, a: Src::Reg(addr), b: Src::Imm(k * stride) };
                self.emit(op, guard, span);
                at
            })
            .collect()
    }

    /// The memory instruction just emitted loads `regs` (each with why it is unknown where no given array
    /// holds it): the first through the instruction itself, the others as parts at `parts`
    /// ([`Builder::part_addresses`]), each an `elem` (docs/model.md#kernels-on-data).
    #[cold]
    pub fn load_parts(&mut self, regs: &[(Reg, WhyId)], parts: &[Reg], elem: Elem, guard: Option<PredRef>, span: Span) {
        if let (Some(&(dst, why)), Some(Inst { op: Op::Mem { data, .. }, .. })) = (regs.first(), self.insts.last_mut())
        {
            *data = Some(Load { dst, why, elem });
        }
        for (&(dst, why), &addr) in regs.iter().skip(1).zip(parts) {
            self.emit(Op::Peek { dst, addr, elem, why }, guard, span);
        }
    }
}
