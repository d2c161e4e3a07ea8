//! The probes: each preset's memory instructions, then the extra patterns below, every one a single
//! instruction with up to [`MAX_ISSUES`] of its warp-level issues ([`Probe`], [`probes`]); and how a probe is
//! laid out for its kernel on the device ([`plan`]): per warp and lane, a space and an offset in it. The
//! engine's prediction for a probe is [`Probe::predict`].

use super::{MAX_GLOBAL_SPAN, MAX_ISSUES, MAX_LOCAL_BYTES, MAX_SHARED_BYTES};
use crate::analysis::{analyze_trace, Trace, TraceItem};
use crate::lang::Lang;
use crate::model::access::{Instr, Space, WARP_LANES};
use crate::model::arch::Cc;
use crate::model::cost::Config;
use crate::program::launch::{Dim3, Launch};
use crate::scenario::Scenario;
use crate::teach::presets::PRESETS;
use serde::Serialize;
use std::collections::BTreeMap;

/// One measured instruction: what it is, where it comes from, and the issues its kernel runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// Stable identifier: `preset/<name>/<instruction>` or `<space>/<what>`.
    pub id: String,
    /// One line for people.
    pub title: String,
    /// The engine settings the prediction uses (the preset's, or the defaults).
    pub config: Config,
    /// The launch the pattern ran under.
    pub launch: Launch,
    /// The instruction (site) with the issues measured.
    pub item: TraceItem,
    /// How many issues the site had before the cut to [`MAX_ISSUES`].
    pub issues_total: usize,
}

/// A pattern that cannot become a probe, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The would-be probe.
    pub id: String,
    /// Why.
    pub reason: String,
}

impl Probe {
    /// The instruction.
    pub fn instr(&self) -> &Instr {
        &self.item.site.instr
    }

    /// The kernel's name in the generated CUDA and in Nsight Compute's report.
    pub fn kernel_name(&self) -> String {
        let mut k = String::from("ws_");
        for c in self.id.chars() {
            k.push(if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' });
        }
        k
    }

    /// A checksum of the instruction and every lane's address, so that a measurement of an older pattern
    /// is never compared with a newer prediction.
    pub fn fingerprint(&self) -> String {
        let mut h = crc32fast::Hasher::new();
        h.update(self.instr().text.as_bytes());
        for issue in &self.item.issues {
            h.update(b"|");
            for a in issue.addrs.0 {
                h.update(&a.map_or([0xFF; 9], |a| {
                    let mut b = [0u8; 9];
                    b[1..].copy_from_slice(&a.to_le_bytes());
                    b
                }));
            }
            if let Some(p) = issue.plg {
                h.update(&p.0.to_le_bytes());
            }
        }
        format!("{:08x}", h.finalize())
    }

    /// The engine's counts for this probe on `cc`, under [`metrics`]' names (every metric present, zeros
    /// included).
    pub fn predict(&self, cc: Cc) -> BTreeMap<String, u64> {
        let result = analyze_trace(cc, &self.trace(), &self.config);
        let ncu = result.instructions.first().map(|r| r.ncu.clone()).unwrap_or_default();
        metrics().into_iter().map(|m| (m.clone(), ncu.get(&m).copied().unwrap_or(0))).collect()
    }

    /// The probe as a one-instruction trace, for [`analyze_trace`].
    pub fn trace(&self) -> Trace {
        Trace { launch: self.launch, items: vec![self.item.clone()] }
    }
}

/// The extra patterns: (id, instruction, expression, threads). Each names what it isolates.
const EXTRAS: &[(&str, &str, &str, u32)] = &[
    // Global loads, every width, coalesced (Best Practices Guide 9.2.1.1).
    ("global/ld/u8", "LDG.E.U8", "lane", 32),
    ("global/ld/u16", "LDG.E.U16", "2*lane", 32),
    ("global/ld/32", "LDG.E.32", "4*lane", 32),
    ("global/ld/64", "LDG.E.64", "8*lane", 32),
    ("global/ld/128", "LDG.E.128", "16*lane", 32),
    // Offsets from a line boundary (Best Practices Guide 9.2.1.2).
    ("global/ld/32+4", "LDG.E.32", "4*lane + 4", 32),
    ("global/ld/32+32", "LDG.E.32", "4*lane + 32", 32),
    ("global/ld/32+64", "LDG.E.32", "4*lane + 64", 32),
    ("global/ld/32+96", "LDG.E.32", "4*lane + 96", 32),
    ("global/ld/64+8", "LDG.E.64", "8*lane + 8", 32),
    ("global/ld/128+16", "LDG.E.128", "16*lane + 16", 32),
    ("global/ld/128+64", "LDG.E.128", "16*lane + 64", 32),
    // Strides (Best Practices Guide 9.2.1.3).
    ("global/ld/stride2", "LDG.E.32", "8*lane", 32),
    ("global/ld/stride4", "LDG.E.32", "16*lane", 32),
    ("global/ld/stride8", "LDG.E.32", "32*lane", 32),
    ("global/ld/stride32", "LDG.E.32", "128*lane", 32),
    ("global/ld/64-stride2", "LDG.E.64", "16*lane", 32),
    ("global/ld/128-stride2", "LDG.E.128", "32*lane", 32),
    // Broadcast, partial warps, permutations, several warps.
    ("global/ld/broadcast", "LDG.E.32", "0", 32),
    ("global/ld/128-broadcast", "LDG.E.128", "0", 32),
    ("global/ld/8-lanes", "LDG.E.32", "4*lane if lane < 8", 32),
    ("global/ld/one-lane", "LDG.E.32", "4*lane if lane == 5", 32),
    ("global/ld/permuted", "LDG.E.32", "4*((7*lane) % 32)", 32),
    ("global/ld/pairs", "LDG.E.32", "4*(lane/2)", 32),
    ("global/ld/4-warps", "LDG.E.32", "4*tid", 128),
    ("global/ld/cache-global", "LDG.E.CG.32", "8*lane", 32),
    ("global/ld/read-only", "LDG.E.CONSTANT.32", "8*lane", 32),
    // Global stores.
    ("global/st/u8", "STG.E.U8", "lane", 32),
    ("global/st/32", "STG.E.32", "4*lane", 32),
    ("global/st/64", "STG.E.64", "8*lane", 32),
    ("global/st/128", "STG.E.128", "16*lane", 32),
    ("global/st/32+4", "STG.E.32", "4*lane + 4", 32),
    ("global/st/stride2", "STG.E.32", "8*lane", 32),
    ("global/st/stride32", "STG.E.32", "128*lane", 32),
    // Shared loads: k lanes in each bank column, k = 1..32 (CUDA Programming Guide 20.4.3, Best Practices Guide 9.2.3).
    ("shared/ld/32-k1", "LDS.32", "128*(lane % 1) + 4*(lane / 1)", 32),
    ("shared/ld/32-k2", "LDS.32", "128*(lane % 2) + 4*(lane / 2)", 32),
    ("shared/ld/32-k3", "LDS.32", "128*(lane % 3) + 4*(lane / 3)", 32),
    ("shared/ld/32-k4", "LDS.32", "128*(lane % 4) + 4*(lane / 4)", 32),
    ("shared/ld/32-k8", "LDS.32", "128*(lane % 8) + 4*(lane / 8)", 32),
    ("shared/ld/32-k16", "LDS.32", "128*(lane % 16) + 4*(lane / 16)", 32),
    ("shared/ld/32-k32", "LDS.32", "128*lane", 32),
    ("shared/ld/64-k1", "LDS.64", "8*lane", 32),
    ("shared/ld/64-k2", "LDS.64", "128*(lane % 2) + 8*(lane / 2)", 32),
    ("shared/ld/64-k4", "LDS.64", "128*(lane % 4) + 8*(lane / 4)", 32),
    ("shared/ld/64-k8", "LDS.64", "128*(lane % 8) + 8*(lane / 8)", 32),
    ("shared/ld/64-k16", "LDS.64", "128*(lane % 16) + 8*(lane / 16)", 32),
    ("shared/ld/64-k32", "LDS.64", "128*lane", 32),
    ("shared/ld/128-k1", "LDS.128", "16*lane", 32),
    ("shared/ld/128-k2", "LDS.128", "128*(lane % 2) + 16*(lane / 2)", 32),
    ("shared/ld/128-k4", "LDS.128", "128*(lane % 4) + 16*(lane / 4)", 32),
    ("shared/ld/128-k8", "LDS.128", "128*(lane % 8) + 16*(lane / 8)", 32),
    ("shared/ld/128-k32", "LDS.128", "128*lane", 32),
    // Shared: strides, padding, broadcast, narrow accesses, the 7.x LDS.128 pair exception (docs/model.md#shared-memory).
    ("shared/ld/stride2", "LDS.32", "8*lane", 32),
    ("shared/ld/stride3", "LDS.32", "12*lane", 32),
    ("shared/ld/padded-column", "LDS.32", "132*lane", 32),
    ("shared/ld/broadcast", "LDS.32", "0", 32),
    ("shared/ld/two-words", "LDS.32", "128*(lane % 2)", 32),
    ("shared/ld/u8", "LDS.U8", "lane", 32),
    ("shared/ld/u16", "LDS.U16", "2*lane", 32),
    ("shared/ld/128-broadcast", "LDS.128", "0", 32),
    ("shared/ld/128-pairs", "LDS.128", "16*(lane / 2)", 32),
    ("shared/ld/128-quads", "LDS.128", "16*(lane / 4)", 32),
    ("shared/ld/64-broadcast", "LDS.64", "0", 32),
    // Shared stores.
    ("shared/st/32", "STS.32", "4*lane", 32),
    ("shared/st/32-k32", "STS.32", "128*lane", 32),
    ("shared/st/64", "STS.64", "8*lane", 32),
    ("shared/st/128", "STS.128", "16*lane", 32),
    ("shared/st/32-k4", "STS.32", "128*(lane % 4) + 4*(lane / 4)", 32),
    // Local memory (docs/model.md#local-memory): the same relative address in every lane, and one word per lane.
    ("local/ld/32-same", "LDL.32", "0", 32),
    ("local/ld/32-per-lane", "LDL.32", "4*lane", 32),
    ("local/ld/u8-same", "LDL.U8", "0", 32),
    ("local/ld/64-same", "LDL.64", "0", 32),
    ("local/ld/128-same", "LDL.128", "0", 32),
    ("local/st/32-same", "STL.32", "0", 32),
    ("local/st/128-per-lane", "STL.128", "16*lane", 32),
    // Generic accesses (the LDL/LDS and LEA instruction references): to global, to the shared window, to the local window, and a warp
    // split between global and shared.
    ("generic/ld/global", "LD.E.32", "4*lane", 32),
    ("generic/ld/shared", "LD.E.32", "0x7F0000000000 + 4*lane", 32),
    ("generic/ld/shared-k2", "LD.E.32", "0x7F0000000000 + 8*lane", 32),
    ("generic/ld/local", "LD.E.32", "0x7F0001000000", 32),
    ("generic/ld/split", "LD.E.32", "(lane < 16 ? 0x7F0000000000 : 0) + 4*lane", 32),
    ("generic/st/shared", "ST.E.32", "0x7F0000000000 + 4*lane", 32),
    ("generic/st/global-128", "ST.E.128", "16*lane", 32),
];

fn probes_of(id_prefix: &str, title: &str, scenario: &Scenario, one_site: bool) -> Result<Vec<Probe>, Skipped> {
    let trace = scenario.trace(MAX_ISSUES).map_err(|e| Skipped { id: id_prefix.into(), reason: e.to_string() })?;
    let mut out = Vec::new();
    for (i, item) in trace.items.iter().enumerate() {
        let id = if one_site { id_prefix.to_string() } else { format!("{id_prefix}/{}", i + 1) };
        let item = item.clone();
        let issues_total = item.issues_total;
        let title = if one_site {
            format!("{} `{}`", item.site.instr.text, item.site.access)
        } else {
            format!("{title}, instruction {}: {} `{}`", i + 1, item.site.instr.text, item.site.access)
        };
        out.push(Probe { id, title, config: scenario.config, launch: trace.launch, item, issues_total });
    }
    Ok(out)
}

/// Every probe: each preset's memory instructions, then the extra patterns; and what could not be probed.
pub fn probes() -> (Vec<Probe>, Vec<Skipped>) {
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    let mut take = |r: Result<Vec<Probe>, Skipped>| match r {
        Ok(ps) => {
            for p in ps {
                match plan(&p) {
                    Ok(_) => all.push(p),
                    Err(reason) => skipped.push(Skipped { id: p.id, reason }),
                }
            }
        }
        Err(s) => skipped.push(s),
    };
    for preset in PRESETS.iter() {
        take(probes_of(&format!("preset/{}", preset.name), preset.title, &preset.scenario(), false));
    }
    for (id, op, text, threads) in EXTRAS {
        let scenario = Scenario {
            lang: Lang::Expr,
            text: (*text).into(),
            op: (*op).into(),
            block: Dim3::linear(*threads),
            ..Scenario::default()
        };
        take(probes_of(id, "", &scenario, true));
    }
    (all, skipped)
}

/// Table entry for a lane that does not issue.
const INACTIVE: u64 = u64::MAX;

/// How a probe runs on the device: per warp and lane, a space and an offset in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Per warp, per lane: `space << 62 | offset`, or all ones for an inactive lane. Global offsets are from
    /// the probe's global base: its lowest address rounded down to 4 KB.
    pub lanes: Vec<[u64; WARP_LANES]>,
    /// Global bytes from the base.
    pub global_span: u64,
    /// Dynamic shared bytes.
    pub shared_bytes: u64,
    /// Local bytes per thread.
    pub local_bytes: u64,
}

/// Lays a probe out for its kernel, or says why it cannot run on hardware.
pub fn plan(p: &Probe) -> Result<Plan, String> {
    let instr = p.instr();
    // An atomic's probe needs an `atom`/`red` of its own, and a constant load's an `ld.const` from a
    // `__constant__` table, which the generator does not write yet (its plain load or store would measure
    // something else).
    if instr.base.first_cc().is_some() || instr.base.is_atomic() || instr.base.is_constant() {
        // The probe kernels issue each lane's access as a plain load or store; an ldmatrix, stmatrix or
        // cp.async probe needs its own inline PTX, which the generator does not write yet.
        return Err(format!("{} ({}) probes are not generated yet", instr.text, instr.base.ptx_name()));
    }
    let size = u64::from(instr.size_bytes);
    let issues = &p.item.issues;
    if issues.is_empty() {
        return Err("no lane issues the instruction".into());
    }
    let mut per_issue = Vec::new();
    let mut low = u64::MAX;
    for issue in issues {
        let mut addrs = [0u64; WARP_LANES];
        let mut mask = 0u32;
        for (l, a) in issue.addrs.0.iter().enumerate() {
            if let Some(a) = a {
                addrs[l] = *a;
                mask |= 1 << l;
            }
        }
        let c = crate::model::count::gather(instr, &addrs, mask, issue.plg.map(|x| x.0), &p.config);
        if !c.errors.is_empty() {
            return Err(format!(
                "lanes {} address memory outside a window or allocation: the kernel would fault",
                c.errors.ranges()
            ));
        }
        for (_, a) in c.lanes[Space::Global as usize].iter() {
            low = low.min(a);
        }
        per_issue.push(c);
    }
    let base = if low == u64::MAX { 0 } else { low & !4095 };
    let mut plan = Plan { lanes: Vec::new(), global_span: 0, shared_bytes: 0, local_bytes: 0 };
    for c in &per_issue {
        let mut row = [INACTIVE; WARP_LANES];
        for space in [Space::Global, Space::Shared, Space::Local] {
            let s = space as usize;
            for (lane, a) in c.lanes[s].iter() {
                let off = if space == Space::Global { a - base } else { a };
                let end = u128::from(off) + u128::from(size);
                let (limit, used, what) = match space {
                    Space::Global => (MAX_GLOBAL_SPAN, &mut plan.global_span, "global span"),
                    Space::Shared => (MAX_SHARED_BYTES, &mut plan.shared_bytes, "shared memory"),
                    Space::Local => (MAX_LOCAL_BYTES, &mut plan.local_bytes, "local memory per thread"),
                };
                if end > u128::from(limit) {
                    return Err(format!("needs more than {limit} bytes of {what}"));
                }
                *used = (*used).max(end as u64);
                row[lane] = (s as u64) << 62 | off;
            }
        }
        plan.lanes.push(row);
    }
    Ok(plan)
}

/// The Nsight Compute metrics a probe is measured with: what the engine predicts, under Nsight's names
/// (the same names `warpscope analyze --format json` prints under `ncu`).
pub fn metrics() -> Vec<String> {
    let mut m = Vec::new();
    for op in ["ld", "st"] {
        for space in ["global", "local"] {
            m.push(format!("l1tex__t_requests_pipe_lsu_mem_{space}_op_{op}.sum"));
            m.push(format!("l1tex__t_sectors_pipe_lsu_mem_{space}_op_{op}.sum"));
        }
        m.push(format!("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"));
        m.push(format!("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"));
        for space in ["global", "shared", "local", "generic"] {
            m.push(format!("smsp__inst_executed_op_{space}_{op}.sum"));
        }
    }
    m
}
