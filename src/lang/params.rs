//! Kernel parameters: their layout, where each architecture keeps them, and the values a pasted kernel runs
//! with when the user gives none.
//!
//! A SASS listing names its kernels by their mangled symbols (`_Z9vectorAddPKfS0_Pfi`), which carry the
//! parameter types; the parameters sit in constant bank 0 in that order with C alignment, from an offset that
//! depends on the architecture. Defaults (docs/model.md#kernel-parameters): each pointer its own 256-byte-aligned base, as
//! `cudaMalloc` gives, and each integer the launch's thread count. Other parameters (floating point, structs)
//! have no default: an address or branch that depends on one is an error that names it.

use crate::program::launch::Launch;

/// First cudaMalloc-like base address for global arrays (CUDA) and pointer parameters (PTX, SASS); each
/// further one starts [`GLOBAL_STRIDE`] later, so every language gives the same kernel the same addresses.
pub const GLOBAL_BASE: u64 = 0x7000_0000_0000;
/// Distance between the base addresses of successive global arrays: 256 MB.
pub const GLOBAL_STRIDE: u64 = 0x1000_0000;

/// The first global base a pointer parameter gets by default.
pub const POINTER_BASE: u64 = GLOBAL_BASE;

/// What kind of value a parameter holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A pointer (or reference).
    Pointer,
    /// An integer (or `bool`), signed or not.
    Int {
        /// Signed.
        signed: bool,
    },
    /// Anything else (floating point, a struct): no default.
    Other,
}

/// How PTX and SASS name a kernel's pointer parameters where data is given (docs/model.md#kernels-on-data),
/// added to the hint of a message that meets data.
pub const PARAM_NAMES: &str = ", a pointer parameter's NAME being param_0, param_1 ...";

/// One parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// 0-based position.
    pub index: usize,
    /// The type as the demangler spells it (`float const*`, `unsigned int`).
    pub ty: String,
    /// Bytes from the first parameter.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Its kind.
    pub kind: Kind,
}

pub use crate::model::arch::param_base;

/// Size and alignment of a parameter type, and its kind, from the demangled spelling; `None` for a type
/// whose layout is not known here (a struct or vector type passed by value).
fn layout(ty: &str) -> Option<(u32, Kind)> {
    let t = ty.trim();
    if t.ends_with('*') || t.ends_with('&') {
        return Some((8, Kind::Pointer));
    }
    // Qualifiers do not change the layout.
    let words: Vec<&str> = t.split_whitespace().filter(|w| !matches!(*w, "const" | "volatile")).collect();
    let signed = !words.contains(&"unsigned");
    let base: Vec<&str> = words.iter().copied().filter(|w| !matches!(*w, "unsigned" | "signed")).collect();
    let int = |bytes: u32| Some((bytes, Kind::Int { signed }));
    match base.as_slice() {
        ["bool"] => Some((1, Kind::Int { signed: false })),
        ["char"] => int(1),
        ["short"] => int(2),
        ["int"] | [] => int(4),
        ["long"] | ["long", "long"] | ["__int64"] => int(8),
        ["__int128"] => int(16),
        ["wchar_t"] => int(4),
        ["char16_t"] => Some((2, Kind::Int { signed: false })),
        ["char32_t"] => Some((4, Kind::Int { signed: false })),
        ["float"] => Some((4, Kind::Other)),
        ["double"] => Some((8, Kind::Other)),
        ["__half"] | ["half"] | ["__nv_bfloat16"] => Some((2, Kind::Other)),
        _ => None,
    }
}

/// Splits a demangled parameter list at top-level commas.
fn split_top(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in list.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = list[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// A kernel's name and parameters, from its mangled symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The demangled name without its parameter list (`reduce4<int, (unsigned int)256>`).
    pub name: String,
    /// The parameters whose layout is known, in order: the list stops at the first whose layout is not.
    pub params: Vec<Param>,
    /// The first parameter whose layout is not known (its type), if any.
    pub unknown_layout: Option<(usize, String)>,
}

/// `symbol` demangled by cpp_demangle.
pub fn demangle_symbol(symbol: &str) -> Option<String> {
    cpp_demangle::Symbol::new(symbol).ok()?.demangle().ok()
}

#[cfg(not(target_arch = "wasm32"))]
fn demangle(symbol: &str) -> Option<String> {
    demangle_symbol(symbol)
}

// The page's analysis workers carry no demangler (their size budget): they learn names from the page, which
// has them demangled by the `warpscope-demangle` worker, and list the symbols they needed but did not know.
#[cfg(target_arch = "wasm32")]
thread_local! {
    static NAMES: std::cell::RefCell<std::collections::HashMap<String, String>> = Default::default();
    static MISSING: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(target_arch = "wasm32")]
fn demangle(symbol: &str) -> Option<String> {
    NAMES.with(|n| match n.borrow().get(symbol) {
        Some(t) => Some(t.clone()).filter(|t| !t.is_empty()),
        None => {
            MISSING.with(|m| {
                let mut m = m.borrow_mut();
                if !m.iter().any(|s| s == symbol) {
                    m.push(symbol.to_string());
                }
            });
            None
        }
    })
}

/// Names demangled elsewhere (mangled, demangled; an empty one when the demangler could not read it).
pub fn learn_names(pairs: &[(String, String)]) {
    #[cfg(target_arch = "wasm32")]
    NAMES.with(|n| {
        let mut n = n.borrow_mut();
        for (k, v) in pairs {
            // A name once read stays read.
            let slot = n.entry(k.clone()).or_default();
            if slot.is_empty() {
                slot.clone_from(v);
            }
        }
    });
    #[cfg(not(target_arch = "wasm32"))]
    let _ = pairs;
}

/// The mangled symbols asked for since the last call and not known (always none natively).
pub fn take_missing() -> Vec<String> {
    #[cfg(target_arch = "wasm32")]
    return MISSING.with(|m| std::mem::take(&mut *m.borrow_mut()));
    #[cfg(not(target_arch = "wasm32"))]
    Vec::new()
}

/// Whether kernel names can be demangled here: natively always; in the page, when the page gave the names.
pub const CAN_DEMANGLE: bool = cfg!(not(target_arch = "wasm32"));

/// Demangles `symbol` (`_Z9vectorAddPKfS0_Pfi`) and lays out its parameters; `None` when the name is not a
/// mangled C++ function (an `extern "C"` kernel carries no types).
pub fn signature(symbol: &str) -> Option<Signature> {
    if !symbol.starts_with("_Z") {
        return None;
    }
    let text = demangle(symbol)?;
    // The parameter list is the last top-level parenthesised group.
    let close = text.rfind(')')?;
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in text[..=close].char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let head = text[..open].trim();
    // Templates spell the return type first: `void reduce4<int, 256u>`.
    let name = head.strip_prefix("void ").unwrap_or(head).to_string();
    let list = &text[open + 1..close];
    let mut params = Vec::new();
    let mut unknown_layout = None;
    let mut offset = 0u32;
    for (index, ty) in split_top(list).into_iter().enumerate() {
        if ty == "void" {
            continue;
        }
        match layout(ty) {
            Some((size, kind)) => {
                offset = offset.div_ceil(size) * size;
                params.push(Param { index, ty: ty.to_string(), offset, size, kind });
                offset += size;
            }
            None => {
                unknown_layout = Some((index, ty.to_string()));
                break;
            }
        }
    }
    Some(Signature { name, params, unknown_layout })
}

/// The name users know: demangled (`reduce4<int, (unsigned int)256>`), else the symbol as written.
pub fn shown(symbol: &str) -> String {
    signature(symbol).map_or_else(|| symbol.to_string(), |s| s.name)
}

/// `reduce4<int,256>` and `reduce4<int, (unsigned int)256>` compare equal: casts, spaces and `u` suffixes go.
fn squash(t: &str) -> String {
    let no_casts = t.replace("(unsigned int)", "").replace("(int)", "").replace("(unsigned long)", "");
    let chars: Vec<char> = no_casts.chars().filter(|c| !c.is_whitespace()).collect();
    // An unsigned literal's `u` (`256u`) goes; a `u` in a name stays.
    (0..chars.len())
        .filter(|&i| !(chars[i] == 'u' && i > 0 && chars[i - 1].is_ascii_digit()))
        .map(|i| chars[i])
        .collect()
}

/// Which of the kernels `symbols` (mangled or plain) the user means by `wanted`: the symbol itself, its
/// demangled name, or the bare name when only one kernel has it.
pub fn find_kernel(wanted: &str, symbols: &[&str]) -> Option<usize> {
    let w = squash(wanted);
    if let Some(i) = symbols.iter().position(|s| *s == wanted || squash(&shown(s)) == w) {
        return Some(i);
    }
    let bare: Vec<usize> =
        (0..symbols.len()).filter(|&i| squash(&shown(symbols[i])).split('<').next() == Some(w.as_str())).collect();
    match bare.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// The default value of each parameter that has one: pointers get successive bases, integers the launch's
/// thread count.
pub fn defaults(params: &[Param], launch: &Launch) -> Vec<Option<u64>> {
    let threads = u64::from(launch.threads()) * launch.grid.volume();
    let mut pointers = 0u64;
    params
        .iter()
        .map(|p| match p.kind {
            Kind::Pointer => {
                let v = POINTER_BASE + pointers * GLOBAL_STRIDE;
                pointers += 1;
                Some(v)
            }
            Kind::Int { .. } => Some(if p.size < 8 { threads & ((1u64 << (8 * p.size)) - 1) } else { threads }),
            Kind::Other => None,
        })
        .collect()
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn layouts_follow_c_alignment() {
        // The offsets ptxas records for `k(const float*, float*, int, char, double, short, long long)` in
        // EIATTR_KPARAM_INFO: 0x0, 0x8, 0x10, 0x14, 0x18, 0x20, 0x28.
        let s = signature("_Z1kPKfPficdsx").expect("mangled");
        let offs: Vec<u32> = s.params.iter().map(|p| p.offset).collect();
        assert_eq!(offs, [0x0, 0x8, 0x10, 0x14, 0x18, 0x20, 0x28]);
        assert_eq!(s.name, "k");
        let s = signature("_Z7reduce6IiLj256ELb1EEvPT_S1_j").expect("mangled");
        assert_eq!(s.name, "reduce6<int, (unsigned int)256, true>");
        assert_eq!(s.params.len(), 3);
        assert_eq!(s.params[2].kind, Kind::Int { signed: false });
        let s = signature("_Z3fooP6float4S_").expect("mangled");
        assert_eq!(s.params.len(), 1);
        assert_eq!(s.unknown_layout, Some((1, "float4".to_string())));
        assert_eq!(signature("vectorAdd"), None);
    }
}

/// Parses `c[0x0][0x160]` or `c[0][4]` into (bank, offset).
pub fn parse_cbank(text: &str) -> Option<(u32, u32)> {
    let t = text.trim();
    let rest = t.strip_prefix('c').or_else(|| t.strip_prefix('C'))?.trim_start();
    let rest = rest.strip_prefix('[')?;
    let (bank, rest) = rest.split_once(']')?;
    let rest = rest.trim_start().strip_prefix('[')?;
    let (off, tail) = rest.split_once(']')?;
    if !tail.trim().is_empty() {
        return None;
    }
    Some((parse_u32(bank.trim())?, parse_u32(off.trim())?))
}

/// Bytes in one constant bank: the CUDA C++ Programming Guide's "constant memory size" is 64 KB, and SASS
/// offsets address one bank.
pub const CBANK_BYTES: u32 = 0x1_0000;

/// Refuses a constant-bank offset past the bank (a typo such as `c[0x0][0x1600]0`).
pub fn check_cbank(bank: u32, offset: u32) -> Result<(), String> {
    if offset >= CBANK_BYTES {
        return Err(format!(
            "c[{bank:#x}][{offset:#x}]: offset {offset:#x} is past the end of the 64 KB constant bank (at most {:#x})",
            CBANK_BYTES - 4
        ));
    }
    Ok(())
}

/// The `--set` key of a constant-bank word.
pub fn cbank_key(bank: u32, offset: u32) -> String {
    format!("c[{bank:#x}][{offset:#x}]")
}

/// A 32-bit number, decimal or 0x hex, negative ones as their two's complement.
pub fn parse_u32(t: &str) -> Option<u32> {
    let t = t.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim()),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None => t.parse::<u64>().ok()?,
    };
    if v > u64::from(u32::MAX) {
        return None;
    }
    Some(if neg { (v as u32).wrapping_neg() } else { v as u32 })
}
