//! warpscope: see memory coalescing and shared-memory bank conflicts, one warp at a time, on every CUDA
//! compute capability.
//!
//! The core is pure, deterministic integer arithmetic with no I/O: [`analyze`] takes a compute capability,
//! a parsed instruction and one warp's addresses and returns a [`Report`]. Text enters only through
//! [`pattern`] (and [`Instr::parse`], [`Cc::parse`]), which return errors with line and column.
//!
//! Modules: [`arch`] (the only place that branches on the CC), [`access`] (instructions, lanes),
//! [`global`], [`shared`], [`local`] (the three memories), [`engine`] (dispatch), [`report`] (results).

pub mod access;
pub mod arch;
pub mod engine;
pub mod global;
pub mod local;
pub mod pattern;
pub mod report;
pub mod shared;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod ui;

pub use access::{Base, CacheOp, Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
pub use arch::{BankMode, Cc, L1Choice, ALL_CCS};
pub use engine::{analyze, Config, Windows};
pub use pattern::InputError;
pub use report::{BankCost, Cost, MemoryCost, Note, Report, SpaceTag, Warning, WarningKind};
