//! Checking the engine against silicon: warpscope's own patterns become CUDA kernels with one measured memory
//! instruction each ([`cuda_source`]), Nsight Compute counts what each kernel did ([`parse_ncu_csv`],
//! [`ingest`]), and [`compare`] sets those counts beside the engine's prediction for the GPU's CC, pattern
//! by pattern. `hw/calibrate.sh` runs the whole loop on a machine with a GPU; `tests/hardware.rs` holds
//! every committed measurement to the engine.
//!
//! A *probe* is one memory instruction of a preset, or one of the extra patterns in `probes.rs` (every access
//! width, offsets, strides, broadcasts, 1- to 32-way bank conflicts at 32, 64 and 128 bits, local and generic
//! accesses), with up to [`MAX_ISSUES`] of its warp-level issues. Each issue becomes one warp of the probe's
//! kernel; each lane reads its space and offset from a `__constant__` table (constant loads do not pass
//! through L1TEX, so they add nothing to the counted metrics) and issues exactly one load or store, written
//! as inline PTX so that the compiler can neither widen, split, merge nor drop it.
//!
//! One file per concern, every public item re-exported here (so it is `calibrate::NAME` wherever it lives):
//!
//! - `probes.rs`: the probes ([`Probe`], [`probes`]) and their layout on the device ([`plan`]).
//! - `kernel.rs`: the probe kernels as CUDA text ([`ptx_op`], [`cuda_source`]).
//! - `ncu.rs`: measurements in: Nsight Compute's metrics and CSV, the probe program's device file, and the two
//!   joined ([`metrics`], [`parse_ncu_csv`], [`DeviceRun`], [`ingest`], [`Measurement`]).
//! - `compare.rs`: the engine against a measurement ([`compare`], [`Comparison`], [`DEPARTURES`]).
//! - `chart.rs`: the agreement chart, a figure scene like every other ([`agreement_scene`],
//!   [`agreement_svg`]).
//!
//! May import: `model`, `program`, `analysis`, `scenario` (and from `lang` only the language tag a scenario
//! names), `teach::presets` (the presets it probes), `figure` (the chart's scene and SVG writer). It is a
//! front end: nothing imports it except `cli`.

mod chart;
mod compare;
mod kernel;
mod ncu;
mod probes;

pub use chart::{agreement_scene, agreement_svg};
pub use compare::{compare, Comparison, Departure, ProbeComparison, Verdict, DEPARTURES};
pub use kernel::{cuda_source, ptx_op};
pub use ncu::{ingest, parse_ncu_csv, CalibrationError, DeviceRun, Launched, MeasuredProbe, Measurement};
pub use probes::{metrics, plan, probes, Plan, Probe, Skipped};

/// The most warp-level issues one probe measures (its kernel's warps). Larger traces are cut to their first
/// issues; the prediction is made for exactly the issues measured.
pub const MAX_ISSUES: usize = 128;
/// The most global bytes one probe may span (its addresses are moved, keeping their offset in a 4 KB page,
/// into one device buffer of this size).
pub const MAX_GLOBAL_SPAN: u64 = 1 << 30;
/// The most dynamic shared memory one probe may use: CC 9.0's 227 KB per block.
pub const MAX_SHARED_BYTES: u64 = 227 * 1024;
/// The most local memory per thread one probe may use.
pub const MAX_LOCAL_BYTES: u64 = 64 * 1024;
/// The format version of a measurement file.
pub const FORMAT: u32 = 1;
