//! Shared memory: banks, phases, wavefronts and conflicts.
//!
//! Architecture invariant: this module knows nothing about compute capabilities. It follows the [`BankRule`]
//! that `arch` chose: split the warp into phases of `lanes_per_phase` lanes; in each phase every bank serves
//! one conflict key per pass, so the phase costs the largest number of distinct keys any bank must serve
//! (PG 20.4.3, BPG 9.2.3). Lanes on the same key never conflict (broadcast / multicast).
//!
//! One costing path: [`cost`] counts with fixed-size arrays, and tells a [`WaveSink`] which wavefront serves
//! each word: a bank's distinct keys are served in the order lanes first use them, key i in wavefront i. The
//! fast path passes [`NoWaves`]; the figure passes [`Phases`].

use crate::access::{LaneSet, Lanes};
use crate::arch::{group_lanes, BankRule};
use crate::report::{BankWord, PhaseStep, WavefrontStep};

/// Banks on every CC.
pub const BANKS: u32 = 32;

/// What one warp's shared access costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankCounts {
    /// Wavefronts, summed over phases.
    pub wavefronts: u32,
    /// Wavefronts without conflicts.
    pub ideal_wavefronts: u32,
    /// The most distinct words one bank serves in one phase.
    pub conflict_degree: u32,
    /// Bank width in bytes.
    pub bank_bytes: u32,
}

/// Receives each phase and, for every word a lane touches, the wavefront that serves it.
pub trait WaveSink {
    /// Whether the sink wants them.
    const DETAIL: bool;
    /// A phase covering `lanes` starts.
    fn begin_phase(&mut self, lanes: LaneSet);
    /// `lane`'s word at `addr` in `bank` is served by wavefront `wavefront` (from 0) of the phase.
    fn word(&mut self, wavefront: u32, lane: usize, bank: u32, addr: u64);
    /// The phase ends: it needed `wavefronts`, `ideal` without conflicts.
    fn end_phase(&mut self, ideal: u32, wavefronts: u32);
}

/// The fast path's sink.
pub struct NoWaves;

impl WaveSink for NoWaves {
    const DETAIL: bool = false;
    fn begin_phase(&mut self, _: LaneSet) {}
    fn word(&mut self, _: u32, _: usize, _: u32, _: u64) {}
    fn end_phase(&mut self, _: u32, _: u32) {}
}

/// Records the phases with their wavefronts, as the animation shows them.
#[derive(Default)]
pub struct Phases(pub Vec<PhaseStep>);

impl WaveSink for Phases {
    const DETAIL: bool = true;
    fn begin_phase(&mut self, lanes: LaneSet) {
        self.0.push(PhaseStep { lanes, ideal: 0, wavefronts: Vec::new() });
    }
    fn word(&mut self, wavefront: u32, lane: usize, bank: u32, addr: u64) {
        let Some(p) = self.0.last_mut() else { return };
        let k = wavefront as usize;
        while p.wavefronts.len() <= k {
            p.wavefronts.push(WavefrontStep { lanes: LaneSet::default(), words: Vec::new() });
        }
        let w = &mut p.wavefronts[k];
        w.lanes.insert(lane);
        let bw = BankWord { bank, addr };
        if !w.words.contains(&bw) {
            w.words.push(bw);
        }
    }
    fn end_phase(&mut self, ideal: u32, _: u32) {
        if let Some(p) = self.0.last_mut() {
            p.ideal = ideal;
            for w in &mut p.wavefronts {
                w.words.sort_by_key(|w| (w.bank, w.addr));
            }
        }
    }
}

/// Costs one warp's shared access: `l` holds the active lanes' aligned shared-window offsets.
pub fn cost<S: WaveSink>(rule: BankRule, l: &Lanes, size_bytes: u32, sink: &mut S) -> BankCounts {
    let words = u64::from(size_bytes.div_ceil(4));
    let per = rule.lanes_per_phase;
    let (mut wavefronts, mut ideal, mut degree) = (0u32, 0u32, 0u32);
    let mut k = 0;
    while k < l.n {
        let phase = u32::from(l.lane[k]) / per;
        if S::DETAIL {
            sink.begin_phase(group_lanes(phase, per));
        }
        // Distinct (bank, key) pairs through a small open-addressed set (128 slots for at most 16 lanes x 4
        // words = 64 pairs), each remembering the wavefront that serves it; a bank's count of distinct keys so
        // far is the wavefront of its next new key, and the busiest bank is the phase's cost. Shared offsets
        // are below 16 MB, so a key fits the low half of the pair.
        let mut slots = [u64::MAX; 128];
        let mut wave = [0u8; 128];
        let mut per_bank = [0u8; BANKS as usize];
        let (mut distinct, mut worst) = (0u32, 0u32);
        while k < l.n && u32::from(l.lane[k]) / per == phase {
            let lane = usize::from(l.lane[k]);
            let first = l.addr[k] & !3;
            k += 1;
            for w in 0..words {
                let word = first + 4 * w;
                let bank = rule.banking.bank(word);
                let pair = u64::from(bank) << 32 | (rule.banking.key(word) & 0xFFFF_FFFF);
                let mut h = (pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize;
                let served_by = loop {
                    if slots[h] == pair {
                        break wave[h];
                    }
                    if slots[h] == u64::MAX {
                        slots[h] = pair;
                        let b = bank as usize & 31;
                        wave[h] = per_bank[b];
                        per_bank[b] += 1;
                        distinct += 1;
                        worst = worst.max(u32::from(per_bank[b]));
                        break wave[h];
                    }
                    h = (h + 1) & 127;
                };
                if S::DETAIL {
                    sink.word(u32::from(served_by), lane, bank, word);
                }
            }
        }
        let phase_ideal = distinct.div_ceil(BANKS).max(1);
        if S::DETAIL {
            sink.end_phase(phase_ideal, worst);
        }
        wavefronts += worst;
        ideal += phase_ideal;
        degree = degree.max(worst);
    }
    BankCounts { wavefronts, ideal_wavefronts: ideal, conflict_degree: degree, bank_bytes: rule.banking.bank_bytes() }
}
