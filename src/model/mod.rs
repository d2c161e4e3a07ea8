//! The hardware model: one warp-level memory instruction's lane addresses in, its cost out.
//!
//! Pure integer arithmetic, no I/O, no text parsing beyond instruction mnemonics and CC names.
//! May import: `serde`, and nothing else of the crate (the layers above use the model, never the reverse).
//! Inside, [`arch`] is the only module that knows which GPU it is: `global`, `shared` and `local` follow the
//! rule `arch` gives them, and `cost` dispatches an access to them.

pub mod access;
pub mod arch;
pub mod cache;
pub mod config;
pub mod cost;
pub mod count;
pub mod global;
pub mod local;
pub mod note;
pub mod report;
pub mod shared;
pub mod tally;
pub mod tma;
