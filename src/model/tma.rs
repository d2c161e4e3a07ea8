//! TMA box copies (PTX `cp.async.bulk.tensor`, SASS `UTMALDG`): one thread asks the tensor memory
//! accelerator to move a whole box of a tensor between global and shared memory (docs/model.md#asynchronous-copies). The box, the
//! tensor's row pitch and the swizzle mode come from the tensor map the host encoded
//! (`cuTensorMapEncodeTiled`), not from the instruction, so they are given here as a [`BoxCopy`].
//!
//! The global side is costed in the lines and 32-byte sectors the box's rows cover; the shared side is the
//! layout the swizzle mode produces: where each 16-byte chunk of each box row lands, and in which bank
//! group (docs/model.md#swizzles: 128B = `Swizzle<3,4,3>` on byte addresses, 64B = `Swizzle<2,4,3>`, 32B = `Swizzle<1,4,3>`).
//! The copy's shared writes are not LSU wavefronts and are not costed in banks.

use serde::{Deserialize, Serialize};

/// A TMA swizzle mode (`CUtensorMapSwizzle`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TmaSwizzle {
    /// `CU_TENSOR_MAP_SWIZZLE_NONE`: rows stored as they are.
    #[default]
    #[serde(rename = "none")]
    None,
    /// `CU_TENSOR_MAP_SWIZZLE_32B`.
    #[serde(rename = "32B")]
    B32,
    /// `CU_TENSOR_MAP_SWIZZLE_64B`.
    #[serde(rename = "64B")]
    B64,
    /// `CU_TENSOR_MAP_SWIZZLE_128B`.
    #[serde(rename = "128B")]
    B128,
}

impl TmaSwizzle {
    /// The swizzle's span in bytes (the most bytes an inner box row may hold), 0 for none.
    pub fn span(self) -> u64 {
        match self {
            TmaSwizzle::None => 0,
            TmaSwizzle::B32 => 32,
            TmaSwizzle::B64 => 64,
            TmaSwizzle::B128 => 128,
        }
    }

    /// The byte pattern's period: the alignment the shared tile needs (1024 bytes for 128B: docs/model.md#swizzles).
    pub fn period(self) -> u64 {
        self.span() * 8
    }

    /// The swizzled shared byte offset: CuTe `Swizzle<B,4,3>` with B = 1, 2, 3 for 32B, 64B, 128B.
    pub fn apply(self, offset: u64) -> u64 {
        let bits = match self {
            TmaSwizzle::None => return offset,
            TmaSwizzle::B32 => 1,
            TmaSwizzle::B64 => 2,
            TmaSwizzle::B128 => 3,
        };
        offset ^ ((offset >> 3) & (((1u64 << bits) - 1) << 4))
    }
}

impl std::str::FromStr for TmaSwizzle {
    type Err = String;
    fn from_str(text: &str) -> Result<TmaSwizzle, String> {
        match text.to_ascii_uppercase().trim_start_matches("SWIZZLE_") {
            "NONE" | "0" => Ok(TmaSwizzle::None),
            "32B" | "32" => Ok(TmaSwizzle::B32),
            "64B" | "64" => Ok(TmaSwizzle::B64),
            "128B" | "128" => Ok(TmaSwizzle::B128),
            _ => Err(format!("swizzle is none, 32B, 64B or 128B, not `{text}`")),
        }
    }
}

/// One box copy from global to shared memory, as the tensor map and the instruction describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxCopy {
    /// Global address of the box's first byte.
    pub global: u64,
    /// Bytes between the starts of two rows of the tensor in global memory (`globalStrides[0]`).
    pub pitch: u64,
    /// Rows in the box (`boxDim[1]`).
    pub rows: u32,
    /// Bytes per box row (`boxDim[0]` x element size).
    pub row_bytes: u32,
    /// Offset of the box in the shared window.
    pub shared: u64,
    /// The swizzle mode.
    pub swizzle: TmaSwizzle,
}

/// Where one 16-byte chunk of the box lands in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The box row.
    pub row: u32,
    /// The chunk in the row (16 bytes each).
    pub chunk: u32,
    /// Its shared offset after the swizzle.
    pub offset: u64,
    /// Its bank group: banks 4g to 4g+3 (`(offset / 16) % 8`).
    pub bank_group: u32,
}

/// What a box copy costs and where it puts the data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxCost {
    /// Bytes moved into shared memory.
    pub bytes: u64,
    /// 128-byte lines the box's rows touch in global memory.
    pub lines: u32,
    /// 32-byte sectors they touch.
    pub sectors: u32,
    /// Sectors the rows would need if each were 32-byte aligned: `sectors` minus this is the cost of a
    /// misaligned box start.
    pub ideal_sectors: u32,
    /// Every chunk of the box, row by row.
    pub chunks: Vec<Chunk>,
}

/// Largest box dimension in elements (`cuTensorMapEncodeTiled`: each `boxDim` entry at most 256).
pub const MAX_BOX_DIM: u32 = 256;

/// Costs a box copy, or says which of the tensor map's documented constraints it breaks (CUDA Driver API,
/// `cuTensorMapEncodeTiled`: the global address aligned to 16 bytes, strides multiples of 16, the inner box
/// dimension in bytes a multiple of 16 and, with a swizzle, at most the swizzle's span; docs/model.md#swizzles: the shared
/// tile aligned to the swizzle's period).
pub fn box_copy(b: &BoxCopy) -> Result<BoxCost, String> {
    if b.rows == 0 || b.rows > MAX_BOX_DIM {
        return Err(format!("a box has 1 to {MAX_BOX_DIM} rows, not {}", b.rows));
    }
    if b.row_bytes == 0 || b.row_bytes % 16 != 0 {
        return Err(format!("a box row is a multiple of 16 bytes, not {}", b.row_bytes));
    }
    if b.global % 16 != 0 {
        return Err(format!("the global address {:#x} is not aligned to 16 bytes", b.global));
    }
    if b.rows > 1 && (b.pitch % 16 != 0 || b.pitch < u64::from(b.row_bytes)) {
        return Err(format!(
            "the row pitch must be a multiple of 16 bytes and at least the row's {} bytes, not {}",
            b.row_bytes, b.pitch
        ));
    }
    let span = b.swizzle.span();
    if span > 0 && u64::from(b.row_bytes) > span {
        return Err(format!("with the {span}-byte swizzle a box row holds at most {span} bytes, not {}", b.row_bytes));
    }
    let align = b.swizzle.period().max(128);
    if b.shared % align != 0 {
        return Err(format!("the shared tile at {:#x} is not aligned to {align} bytes", b.shared));
    }
    let (mut lines, mut sectors, mut ideal) = (0u32, 0u32, 0u32);
    let mut chunks = Vec::with_capacity((b.rows * b.row_bytes / 16) as usize);
    for r in 0..b.rows {
        let start = b
            .global
            .checked_add(u64::from(r).checked_mul(b.pitch).ok_or("the box ends past the 64-bit address space")?)
            .ok_or("the box ends past the 64-bit address space")?;
        let end = start.checked_add(u64::from(b.row_bytes)).ok_or("the box ends past the 64-bit address space")?;
        // Rows of a box never share a sector with each other when the pitch is at least the row: count each.
        lines += ((end - 1) / 128 - start / 128 + 1) as u32;
        sectors += ((end - 1) / 32 - start / 32 + 1) as u32;
        ideal += b.row_bytes.div_ceil(32);
        for c in 0..b.row_bytes / 16 {
            let linear = b.shared + u64::from(r * b.row_bytes + 16 * c);
            let offset = b.swizzle.apply(linear);
            chunks.push(Chunk { row: r, chunk: c, offset, bank_group: ((offset / 16) % 8) as u32 });
        }
    }
    Ok(BoxCost { bytes: u64::from(b.rows) * u64::from(b.row_bytes), lines, sectors, ideal_sectors: ideal, chunks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(swizzle: TmaSwizzle) -> BoxCopy {
        // A 64x8 box of halves (128 bytes per row) from a row-major matrix of 2048 halves per row.
        BoxCopy { global: 0x10_0000, pitch: 4096, rows: 8, row_bytes: 128, shared: 0, swizzle }
    }

    #[test]
    fn the_global_side_is_the_rows_sectors() {
        // 8 aligned rows of 128 bytes: 8 lines, 32 sectors (docs/model.md#global-memory: 4 sectors per aligned 128 bytes).
        let c = box_copy(&tile(TmaSwizzle::B128)).unwrap();
        assert_eq!((c.bytes, c.lines, c.sectors, c.ideal_sectors), (1024, 8, 32, 32));
        // Starting 16 bytes late, each row straddles two lines and needs a fifth sector.
        let c = box_copy(&BoxCopy { global: 0x10_0010, ..tile(TmaSwizzle::B128) }).unwrap();
        assert_eq!((c.lines, c.sectors, c.ideal_sectors), (16, 40, 32));
    }

    #[test]
    fn the_128b_swizzle_spreads_each_column_over_the_bank_groups() {
        // docs/model.md#swizzles: chunk bits 4-6 XOR row bits 7-9. Chunk 0 of rows 0-7 lands in groups 0..7.
        let c = box_copy(&tile(TmaSwizzle::B128)).unwrap();
        let column0: Vec<u32> = c.chunks.iter().filter(|k| k.chunk == 0).map(|k| k.bank_group).collect();
        assert_eq!(column0, [0, 1, 2, 3, 4, 5, 6, 7]);
        let c = box_copy(&tile(TmaSwizzle::None)).unwrap();
        let column0: Vec<u32> = c.chunks.iter().filter(|k| k.chunk == 0).map(|k| k.bank_group).collect();
        assert_eq!(column0, [0; 8]);
        // 64B (Swizzle<2,4,3>): groups repeat every 4 rows.
        let c = box_copy(&BoxCopy { row_bytes: 64, ..tile(TmaSwizzle::B64) }).unwrap();
        let column0: Vec<u32> = c.chunks.iter().filter(|k| k.chunk == 0).map(|k| k.bank_group).collect();
        // Rows of 64 bytes: row r starts at 64r; bits 7-8 of it are r/2 (mod 4), XORed into chunk bits 4-5.
        assert_eq!(column0, [0, 4, 1, 5, 2, 6, 3, 7]);
    }

    #[test]
    fn the_tensor_maps_constraints_are_named() {
        let e = box_copy(&BoxCopy { row_bytes: 256, ..tile(TmaSwizzle::B128) }).unwrap_err();
        assert_eq!(e, "with the 128-byte swizzle a box row holds at most 128 bytes, not 256");
        let e = box_copy(&BoxCopy { shared: 512, ..tile(TmaSwizzle::B128) }).unwrap_err();
        assert_eq!(e, "the shared tile at 0x200 is not aligned to 1024 bytes");
        let e = box_copy(&BoxCopy { global: 8, ..tile(TmaSwizzle::None) }).unwrap_err();
        assert_eq!(e, "the global address 0x8 is not aligned to 16 bytes");
        assert!("128B".parse::<TmaSwizzle>() == Ok(TmaSwizzle::B128));
        assert!("SWIZZLE_64B".parse::<TmaSwizzle>() == Ok(TmaSwizzle::B64));
        assert!("96B".parse::<TmaSwizzle>().is_err());
    }
}
