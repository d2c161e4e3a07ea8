//! warpscope: see memory coalescing and shared-memory bank conflicts, one warp at a time, on every CUDA
//! compute capability.
//!
//! The core is pure, deterministic integer arithmetic with no I/O: [`analyze`] takes a compute capability,
//! a parsed instruction and one warp's addresses and returns a [`Report`]. Text enters only through
//! [`lang`] (and [`Instr::parse`], [`Cc::parse`]), which return errors with line and column.
//!
//! ```
//! use warpscope::{analyze, lang::warp_from_expr, Cc, Config, Instr, LaneSet};
//!
//! // The Best Practices Guide's misaligned copy: one word off, 5 sectors over 2 lines on CC 6.0+.
//! let instr = Instr::parse("LDG.E.32").unwrap();
//! let warp = warp_from_expr("4*lane + 4", &instr, LaneSet::ALL).unwrap();
//! let report = analyze(Cc::new(8, 0), &instr, &warp, &Config::default());
//! let m = report.memory().unwrap();
//! assert_eq!((m.lines, m.sectors, m.transactions), (2, 5, 5));
//! ```
//!
//! The layers, lowest first; each module's documentation says what it may import, and `tests/layers.rs`
//! checks it:
//!
//! - [`text`]: spans, plurals, hex, lane ranges.
//! - [`model`]: the hardware. [`model::arch`] is the only module that knows which GPU it is; `global`,
//!   `shared` and `local` follow its rules; [`model::cost`] dispatches an access; [`model::report`] holds
//!   results.
//! - [`program`]: the one lowered program, its launch, and the SIMT machine that runs it.
//! - [`lang`]: the input languages, each parsed and lowered into a program.
//! - [`analysis`]: a program run and costed, with sums under Nsight Compute's names.
//! - [`scenario`]: everything that decides a view, and the one path from settings text to it.
//! - [`figure`], [`teach`]: the figure's scene and SVG; explanations, presets, labs.
//! - [`service`], [`share`]: the page's analysis service; links.
//! - Front ends: `cli` and `calibrate` (native), `app` (the page, wasm32); `export` packs their figures
//!   (zip archives of frames).

pub mod analysis;
#[cfg(not(target_arch = "wasm32"))]
pub mod calibrate;
pub mod data;
pub mod export;
pub mod figure;
pub mod lang;
pub mod model;
pub mod program;
pub mod scenario;
pub mod service;
pub mod share;
pub mod teach;
pub mod text;
pub mod workload;

#[cfg(target_arch = "wasm32")]
pub mod app;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;

pub use lang::InputError;
pub use model::access::Windows;
pub use model::access::{Base, CacheOp, Instr, LaneSet, Space, WarpAddrs, WARP_LANES};
pub use model::arch::{BankMode, Cc, L1Choice, ALL_CCS};
pub use model::cost::{analyze, Config};
pub use model::note::Note;
pub use model::report::{BankCost, Cost, MemoryCost, Report, SpaceTag, Warning, WarningKind};
