//! Local memory: per-thread addresses interleaved across the warp.
//!
//! "Local memory is organized such that consecutive 32-bit words are accessed by consecutive thread IDs"
//! (CUDA Programming Guide, Local Memory). A lane's per-thread address `a` of a 32-bit word lives at
//! `((a >> 2) * 32 + lane) * 4 + (a & 3)` in the local backing store. The layout of 64- and 128-bit values is
//! not documented: warpscope interleaves at the access width and says so in a model note.

/// Where the interleaved local backing store starts (any 128-byte aligned value gives the same counts).
pub const LOCAL_STORE_BASE: u64 = 0;

/// The interleaved backing-store address of a lane's aligned per-thread local address.
pub fn interleave(offset: u64, lane: usize, size_bytes: u32) -> u64 {
    // The unit is 4, 8 or 16 bytes: shifts and masks instead of divisions.
    let shift = size_bytes.max(4).trailing_zeros();
    let unit = 1u64 << shift;
    LOCAL_STORE_BASE + (((offset >> shift) * 32 + lane as u64) << shift) + (offset & (unit - 1))
}
