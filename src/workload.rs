//! The benchmark workload: a whole grid of 1,048,576 threads as 32,768 warp-level instructions, a fixed mix
//! of patterns (coalesced, strided and random global loads, shared loads with bank conflicts), generated
//! deterministically so native and browser runs measure exactly the same work.
//!
//! May import: `text`, `model`, `program`, `lang`, `analysis`, `scenario`, `teach` (the SGEMM preset).

use crate::model::access::{Instr, WarpAddrs, WARP_LANES};
use crate::model::arch::Cc;
use crate::model::cost::Config;
use crate::model::count::count;

/// Warps in the workload (1,048,576 threads).
pub const WARPS: usize = 32_768;

/// The workload: four instructions and, for each warp, which instruction and its addresses.
pub struct Workload {
    /// LDG.E.32, LDG.E.64, LDG.E.32 (random), LDS.32.
    pub instrs: [Instr; 4],
    /// (instruction index, addresses) per warp.
    pub warps: Vec<(u8, WarpAddrs)>,
}

/// Builds the workload (xorshift with a fixed seed: no randomness from outside).
pub fn grid() -> Workload {
    let parse = |t: &str| Instr::parse(t).unwrap_or_else(|_| unreachable!("valid mnemonic {t}"));
    let instrs = [parse("LDG.E.32"), parse("LDG.E.64"), parse("LDG.E.32"), parse("LDS.32")];
    let mut s: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut warps = Vec::with_capacity(WARPS);
    for w in 0..WARPS as u64 {
        let kind = (w % 4) as u8;
        let base = 0x7000_0000_0000 + w * 4096;
        let mut a = [None; WARP_LANES];
        for (lane, slot) in a.iter_mut().enumerate() {
            let l = lane as u64;
            *slot = Some(match kind {
                // Coalesced, with every 16th warp misaligned by a word.
                0 => base + 4 * l + if w % 64 == 0 { 4 } else { 0 },
                // 8-byte loads with a stride of 2, 3 or 4 elements.
                1 => base + 8 * l * (2 + w % 3),
                // Random words in a 64 MB range.
                2 => 0x7000_0000_0000 + (next() % (64 << 20)) / 4 * 4,
                // Shared: strides of 1 to 32 words (conflict-free to 32-way).
                _ => 4 * l * (1 + w % 32),
            });
        }
        warps.push((kind, WarpAddrs(a)));
    }
    Workload { instrs, warps }
}

/// The physical floor: one plain pass over the same address buffer (a checksum, so it cannot be skipped).
pub fn floor(w: &Workload) -> u64 {
    let mut sum = 0u64;
    for (_, warp) in &w.warps {
        for a in warp.0.iter().flatten() {
            sum = sum.wrapping_add(*a);
        }
    }
    sum
}

/// The engine over the whole workload with the fast path: total sectors plus wavefronts (a checksum).
pub fn engine(cc: Cc, w: &Workload) -> u64 {
    let cfg = Config::default();
    let mut total = 0u64;
    for (k, warp) in &w.warps {
        let c = count(cc, &w.instrs[*k as usize], warp, None, &cfg).sums();
        total += u64::from(c.sectors) + u64::from(c.wavefronts);
    }
    total
}

/// The tiled SGEMM block the speed targets are stated for: the `sgemm-tiled` preset (TILE 32, block 32x32)
/// with `N` set, whole grid or one block. 2.2 million memory accesses per block at N = 1024.
pub fn sgemm(n: u32, grid: u32) -> crate::scenario::Scenario {
    let p = crate::teach::presets::find("sgemm-tiled").unwrap_or_else(|| unreachable!("the preset exists"));
    let mut sc = p.scenario();
    sc.sets = vec![format!("N={n}")];
    sc.grid = crate::program::launch::Dim3 { x: grid, y: grid, z: 1 };
    sc
}

/// Runs [`sgemm`] and returns a checksum of its totals (so nothing is optimised away), or the error text.
pub fn run_sgemm(n: u32, grid: u32) -> Result<u64, String> {
    let r = sgemm(n, grid).run().map_err(|e| e.error.message)?;
    Ok(r.instructions.iter().map(|i| i.warps + i.memory.as_ref().map_or(0, |m| m.sectors)).sum())
}
