//! Shared memory: banks, phases, wavefronts and conflicts.
//!
//! Architecture invariant: this module knows nothing about compute capabilities. It follows the [`BankRule`]
//! that `arch` chose: split the warp into phases of `lanes_per_phase` lanes; in each phase every bank serves
//! one conflict key per pass, so the phase costs the largest number of distinct keys any bank must serve
//! (PG 20.4.3, BPG 9.2.3). Lanes on the same key never conflict (broadcast / multicast).

use crate::access::{LaneSet, WARP_LANES};
use crate::arch::{group_lanes, BankRule};
use crate::report::{BankCost, BankWord, PhaseStep, WavefrontStep};

/// Banks on every CC.
pub const BANKS: u32 = 32;

/// Costs one warp's shared access. `addrs` holds each lane's aligned shared-window offset (`None` for lanes
/// not in this part).
pub fn cost(rule: BankRule, addrs: &[Option<u64>; WARP_LANES], size_bytes: u32) -> BankCost {
    let words_per_lane = u64::from(size_bytes.div_ceil(4));
    let mut phases = Vec::new();
    let (mut wavefronts, mut ideal, mut degree) = (0u32, 0u32, 0u32);
    for p in 0..(WARP_LANES as u32 / rule.lanes_per_phase) {
        let lanes = group_lanes(p, rule.lanes_per_phase);
        // (bank, key, word address, lane) for every 4-byte word an active lane of the phase touches.
        let mut touches: Vec<(u32, u64, u64, usize)> = Vec::new();
        for lane in lanes.iter() {
            let Some(addr) = addrs[lane] else { continue };
            let first_word = addr & !3;
            for w in 0..words_per_lane {
                let word = first_word + 4 * w;
                touches.push((rule.banking.bank(word), rule.banking.key(word), word, lane));
            }
        }
        if touches.is_empty() {
            continue;
        }
        // Per bank, its distinct keys in order of first use (lane order): key i is served in wavefront i.
        let mut keys_per_bank: Vec<Vec<u64>> = vec![Vec::new(); BANKS as usize];
        for &(bank, key, _, _) in &touches {
            let keys = &mut keys_per_bank[bank as usize];
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let cost = keys_per_bank.iter().map(|k| k.len() as u32).max().unwrap_or(0);
        let pairs: u32 = keys_per_bank.iter().map(|k| k.len() as u32).sum();
        let phase_ideal = pairs.div_ceil(BANKS).max(1);
        let mut steps: Vec<WavefrontStep> =
            (0..cost).map(|_| WavefrontStep { lanes: LaneSet::default(), words: Vec::new() }).collect();
        for &(bank, key, word, lane) in &touches {
            let k = keys_per_bank[bank as usize].iter().position(|&x| x == key).unwrap_or(0);
            if let Some(step) = steps.get_mut(k) {
                step.lanes.insert(lane);
                let bw = BankWord { bank, addr: word };
                if !step.words.contains(&bw) {
                    step.words.push(bw);
                }
            }
        }
        for s in &mut steps {
            s.words.sort_by_key(|w| (w.bank, w.addr));
        }
        wavefronts += cost;
        ideal += phase_ideal;
        degree = degree.max(cost);
        phases.push(PhaseStep { lanes, ideal: phase_ideal, wavefronts: steps });
    }
    BankCost {
        wavefronts,
        ideal_wavefronts: ideal,
        bank_conflicts: wavefronts - ideal,
        conflict_degree: degree,
        banks: BANKS,
        bank_bytes: rule.banking.bank_bytes(),
        phases,
    }
}
