//! warpscope: see memory coalescing and shared-memory bank conflicts, one warp at a time, on every CUDA
//! compute capability.
//!
//! The core is pure, deterministic integer arithmetic with no I/O: [`analyze`] takes a compute capability,
//! a parsed instruction and one warp's addresses and returns a [`Report`]. Text enters only through
//! [`pattern`] (and [`Instr::parse`], [`Cc::parse`]), which return errors with line and column.
//!
//! ```
//! use warpscope::{analyze, pattern::warp_from_expr, Cc, Config, Instr, LaneSet};
//!
//! // The Best Practices Guide's misaligned copy: one word off, 5 sectors over 2 lines on CC 6.0+.
//! let instr = Instr::parse("LDG.E.32").unwrap();
//! let warp = warp_from_expr("4*lane + 4", &instr, LaneSet::ALL).unwrap();
//! let report = analyze(Cc::new(8, 0), &instr, &warp, &Config::default());
//! let m = report.memory().unwrap();
//! assert_eq!((m.lines, m.sectors, m.transactions), (2, 5, 5));
//! ```
//!
//! Modules: [`arch`] (the only place that branches on the CC), [`access`] (instructions, lanes),
//! [`global`], [`shared`], [`local`] (the three memories), [`engine`] (dispatch), [`report`] (results).

pub mod access;
pub mod arch;
#[cfg(not(target_arch = "wasm32"))]
pub mod calibrate;
pub mod count;
pub mod engine;
pub mod explain;
pub mod global;
pub mod lab;
pub mod lab_file;
pub mod launch;
pub mod local;
pub mod pattern;
pub mod presets;
pub mod program;
pub mod report;
pub mod scenario;
pub mod scene;
pub mod service;
pub mod share;
pub mod shared;
pub mod svg;
pub mod trace;
pub mod workload;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod ui;

pub use access::{Base, CacheOp, Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
pub use arch::{BankMode, Cc, L1Choice, ALL_CCS};
pub use engine::{analyze, Config, Windows};
pub use pattern::InputError;
pub use report::{BankCost, Cost, MemoryCost, Note, Report, SpaceTag, Warning, WarningKind};
