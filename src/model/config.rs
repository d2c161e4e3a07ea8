//! The settings that change a result besides the CC and the instruction, read by the costing
//! ([`crate::model::cost`]) and the counting ([`crate::model::count`]) alike.

use crate::model::access::Windows;
use crate::model::arch::{BankMode, L1Choice, SharedModel};
use serde::{Deserialize, Serialize};

/// Settings that change the result, besides the CC and the instruction. A config struct, not bool
/// parameters, so that call sites say what they mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// `-Xptxas -dlcm=ca|cg`, or the CC's default.
    pub l1: L1Choice,
    /// Kepler's bank mode (4-byte is the default; a no-op elsewhere).
    pub bank_mode: BankMode,
    /// Misaligned lanes of LDL/LDS/ST/STS/STL/LD become error lanes instead of warnings (the LDL/LDS instruction
    /// reference: they "can optionally raise an error"). LDG always aligns silently (the LDG instruction reference).
    pub strict_align: bool,
    /// The windows.
    pub windows: Windows,
    /// How 64- and 128-bit shared accesses whose lanes share addresses are counted on CC 7.0+ (docs/model.md#shared-memory-as-measured).
    #[serde(default)]
    pub shared_model: SharedModel,
}
