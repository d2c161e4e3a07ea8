//! A kernel launch: block and grid sizes, and how threads form warps (from the linear thread index, as on
//! hardware: `x + y * blockDim.x + z * blockDim.x * blockDim.y`, 32 consecutive threads per warp).

use crate::model::access::WARP_LANES;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most threads one block may have on every CC warpscope models.
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// Three sizes or coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dim3 {
    /// x
    pub x: u32,
    /// y
    pub y: u32,
    /// z
    pub z: u32,
}

impl Dim3 {
    /// `Dim3 { x, 1, 1 }`.
    pub const fn linear(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }

    /// x * y * z.
    pub fn volume(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }

    /// Parses `X`, `XxY` or `XxYxZ` (also with `,` or `*` between). `what` names the option in errors.
    pub fn parse(text: &str, what: &str) -> Result<Dim3, String> {
        let parts: Vec<&str> = text.trim().split(['x', 'X', ',', '*']).map(str::trim).collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(format!("{what} `{text}` is not X, XxY or XxYxZ"));
        }
        let mut v = [1u32; 3];
        for (i, p) in parts.iter().enumerate() {
            v[i] = match p.parse::<u32>() {
                Ok(0) => return Err(format!("{what} `{text}`: a size must be at least 1")),
                Ok(n) => n,
                Err(_) => return Err(format!("{what} `{text}`: `{p}` is not a whole number")),
            };
        }
        Ok(Dim3 { x: v[0], y: v[1], z: v[2] })
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.x, self.y, self.z)
    }
}

/// One thread's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread {
    /// threadIdx.
    pub tid: Dim3,
    /// blockIdx.
    pub block: Dim3,
    /// Linear index in the block.
    pub linear: u32,
    /// Warp index in the block.
    pub warp: u32,
    /// Lane in the warp.
    pub lane: u32,
}

/// The launch configuration warpscope simulates: one block of a grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    /// blockDim.
    pub block: Dim3,
    /// gridDim.
    pub grid: Dim3,
    /// Which block is simulated (blockIdx).
    pub block_idx: Dim3,
}

impl Default for Launch {
    fn default() -> Launch {
        Launch { block: Dim3::linear(32), grid: Dim3::linear(1), block_idx: Dim3 { x: 0, y: 0, z: 0 } }
    }
}

impl Launch {
    /// Checks the sizes against the hardware limits (1024 threads a block; grid x < 2^31, y and z <= 65535).
    pub fn new(block: Dim3, grid: Dim3) -> Result<Launch, String> {
        if block.volume() > u64::from(MAX_BLOCK_THREADS) {
            return Err(format!(
                "block {block} has {} threads; a block has at most {MAX_BLOCK_THREADS}",
                block.volume()
            ));
        }
        if block.z > 64 {
            return Err(format!("block {block}: blockDim.z is at most 64"));
        }
        if grid.x > i32::MAX as u32 || grid.y > 65535 || grid.z > 65535 {
            return Err(format!("grid {grid}: gridDim.x is at most 2^31-1, y and z at most 65535"));
        }
        Ok(Launch { block, grid, block_idx: Dim3 { x: 0, y: 0, z: 0 } })
    }

    /// Threads in the block.
    pub fn threads(&self) -> u32 {
        self.block.volume() as u32
    }

    /// Warps in the block (the last one may be partial).
    pub fn warps(&self) -> u32 {
        self.threads().div_ceil(WARP_LANES as u32)
    }

    /// The thread with linear index `linear`.
    pub fn thread(&self, linear: u32) -> Thread {
        let (bx, by) = (self.block.x, self.block.y);
        Thread {
            tid: Dim3 { x: linear % bx, y: (linear / bx) % by, z: linear / (bx * by) },
            block: self.block_idx,
            linear,
            warp: linear / WARP_LANES as u32,
            lane: linear % WARP_LANES as u32,
        }
    }

    /// The value of a built-in variable for a thread: `lane`, `warp`, `tid`, `threadIdx.x`, `blockIdx.y`,
    /// `blockDim.z`, `gridDim.x`, `warpSize`.
    pub fn builtin(&self, t: &Thread, name: &str) -> Option<i128> {
        let pick = |d: Dim3, c: &str| match c {
            "x" => Some(i128::from(d.x)),
            "y" => Some(i128::from(d.y)),
            "z" => Some(i128::from(d.z)),
            _ => None,
        };
        match name {
            "lane" | "laneid" => Some(i128::from(t.lane)),
            "warp" | "warpid" => Some(i128::from(t.warp)),
            "tid" => Some(i128::from(t.linear)),
            "warpSize" => Some(WARP_LANES as i128),
            _ => {
                let (obj, c) = name.split_once('.')?;
                match obj {
                    "threadIdx" => pick(t.tid, c),
                    "blockIdx" => pick(t.block, c),
                    "blockDim" => pick(self.block, c),
                    "gridDim" => pick(self.grid, c),
                    _ => None,
                }
            }
        }
    }
}

/// The names [`Launch::builtin`] knows.
pub const BUILTIN_NAMES: [&str; 16] = [
    "lane",
    "warp",
    "tid",
    "warpSize",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "blockDim.x",
    "blockDim.y",
    "blockDim.z",
    "gridDim.x",
    "gridDim.y",
    "gridDim.z",
];
