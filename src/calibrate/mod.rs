//! Checking the engine against silicon: warpscope's own patterns become CUDA kernels with one measured memory
//! instruction each ([`cuda_source`]), Nsight Compute counts what each kernel did ([`parse_ncu_csv`],
//! [`ingest`]), and [`compare`] sets those counts beside the engine's prediction for the GPU's CC, pattern
//! by pattern. `hw/calibrate.sh` runs the whole loop on a machine with a GPU; `tests/hardware.rs` holds
//! every committed measurement to the engine.
//!
//! A *probe* is one memory instruction of a preset, or one of the extra patterns below (every access width,
//! offsets, strides, broadcasts, 1- to 32-way bank conflicts at 32, 64 and 128 bits, local and generic
//! accesses), with up to [`MAX_ISSUES`] of its warp-level issues. Each issue becomes one warp of the probe's
//! kernel; each lane reads its space and offset from a `__constant__` table (constant loads do not pass
//! through L1TEX, so they add nothing to the counted metrics) and issues exactly one load or store, written
//! as inline PTX so that the compiler can neither widen, split, merge nor drop it.

use crate::analysis::{analyze_trace, Trace, TraceItem};
use crate::figure::svg::escape;
use crate::lang::Lang;
use crate::model::access::{CacheOp, Instr, Space, WARP_LANES};
use crate::model::arch::Cc;
use crate::model::cost::Config;
use crate::program::launch::Dim3;
use crate::program::launch::Launch;
use crate::scenario::Scenario;
use crate::teach::presets::PRESETS;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

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
    // Global loads, every width, coalesced (BPG 9.2.1.1).
    ("global/ld/u8", "LDG.E.U8", "lane", 32),
    ("global/ld/u16", "LDG.E.U16", "2*lane", 32),
    ("global/ld/32", "LDG.E.32", "4*lane", 32),
    ("global/ld/64", "LDG.E.64", "8*lane", 32),
    ("global/ld/128", "LDG.E.128", "16*lane", 32),
    // Offsets from a line boundary (BPG 9.2.1.2).
    ("global/ld/32+4", "LDG.E.32", "4*lane + 4", 32),
    ("global/ld/32+32", "LDG.E.32", "4*lane + 32", 32),
    ("global/ld/32+64", "LDG.E.32", "4*lane + 64", 32),
    ("global/ld/32+96", "LDG.E.32", "4*lane + 96", 32),
    ("global/ld/64+8", "LDG.E.64", "8*lane + 8", 32),
    ("global/ld/128+16", "LDG.E.128", "16*lane + 16", 32),
    ("global/ld/128+64", "LDG.E.128", "16*lane + 64", 32),
    // Strides (BPG 9.2.1.3).
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
    // Shared loads: k lanes in each bank column, k = 1..32 (PG 20.4.3, BPG 9.2.3).
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
    // Shared: strides, padding, broadcast, narrow accesses, the 7.x LDS.128 pair exception (MODEL.md B).
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
    // Local memory (MODEL.md C): the same relative address in every lane, and one word per lane.
    ("local/ld/32-same", "LDL.32", "0", 32),
    ("local/ld/32-per-lane", "LDL.32", "4*lane", 32),
    ("local/ld/u8-same", "LDL.U8", "0", 32),
    ("local/ld/64-same", "LDL.64", "0", 32),
    ("local/ld/128-same", "LDL.128", "0", 32),
    ("local/st/32-same", "STL.32", "0", 32),
    ("local/st/128-per-lane", "STL.128", "16*lane", 32),
    // Generic accesses (seeds/000, seeds/003): to global, to the shared window, to the local window, and a warp
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

/// The PTX mnemonic for an instruction: `ld`/`st`, the state space (none for generic), the cache operator
/// (global only), and the width as `u8`, `u16`, `u32` or a vector of them.
pub fn ptx_op(instr: &Instr) -> String {
    let store = instr.is_store();
    let space = match instr.base.fixed_space() {
        Some(Space::Global) => ".global",
        Some(Space::Shared) => ".shared",
        Some(Space::Local) => ".local",
        None => "",
    };
    let cop = if instr.base.fixed_space() != Some(Space::Global) {
        ""
    } else if store {
        match instr.cop {
            CacheOp::Cg => ".cg",
            CacheOp::Cs => ".cs",
            CacheOp::Wt => ".wt",
            _ => "",
        }
    } else {
        match instr.cop {
            CacheOp::Cg => ".cg",
            CacheOp::Cs => ".cs",
            CacheOp::Lu => ".lu",
            CacheOp::Cv => ".cv",
            CacheOp::Ci => ".nc",
            _ => "",
        }
    };
    let ty = match instr.size_bytes {
        1 => ".u8",
        2 => ".u16",
        4 => ".u32",
        8 => ".v2.u32",
        _ => ".v4.u32",
    };
    format!("{}{space}{cop}{ty}", if store { "st" } else { "ld" })
}

fn registers(size: u32) -> usize {
    match size {
        8 => 2,
        16 => 4,
        _ => 1,
    }
}

/// The kernel of one probe.
fn kernel(out: &mut String, p: &Probe, plan: &Plan) {
    let instr = p.instr();
    let op = ptx_op(instr);
    let regs = registers(instr.size_bytes);
    let fixed = instr.base.fixed_space();
    let _ = writeln!(out, "// {}: {}", p.id, p.title.replace('\n', " "));
    let _ = writeln!(
        out,
        "extern \"C\" __global__ void __launch_bounds__(1024) {}(char* gbase, unsigned n, unsigned key) {{",
        p.kernel_name()
    );
    if plan.local_bytes > 0 {
        let _ = writeln!(out, "  __align__(16) unsigned char ws_local[{}];", plan.local_bytes.div_ceil(16) * 16);
    }
    out.push_str("  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n");
    out.push_str("  if (t >= n) return;\n");
    out.push_str("  unsigned long long e = ws_lanes[t];\n");
    out.push_str("  if (e == WS_INACTIVE) return;\n");
    out.push_str("  unsigned long long off = e & WS_OFFSET_MASK;\n");
    // The address operand: a window address for LDS/LDL/STS/STL (converted from the generic pointer inside
    // the asm), a generic pointer otherwise.
    let (ptr, cvta) = match fixed {
        Some(Space::Global) => ("gbase + off", None),
        Some(Space::Shared) => ("ws_smem + off", Some("shared")),
        Some(Space::Local) => ("ws_local + off", Some("local")),
        None => {
            out.push_str("  unsigned sp = (unsigned)(e >> 62);\n");
            let local = if plan.local_bytes > 0 { "ws_local + off" } else { "gbase + off" };
            let _ =
                writeln!(out, "  char* p = sp == 1 ? (char*)ws_smem + off : sp == 2 ? (char*)({local}) : gbase + off;");
            ("p", None)
        }
    };
    let vec = |first: usize| -> String {
        if regs == 1 {
            format!("%{first}")
        } else {
            let r: Vec<String> = (first..first + regs).map(|i| format!("%{i}")).collect();
            format!("{{{}}}", r.join(", "))
        }
    };
    let (asm, operands) = if instr.is_store() {
        // Operands: %0 address, %1.. values.
        let addr = if let Some(space) = cvta {
            format!("{{ .reg .u64 a; cvta.to.{space}.u64 a, %0; {op} [a], {}; }}", vec(1))
        } else {
            format!("{op} [%0], {};", vec(1))
        };
        let values: Vec<String> = (0..regs).map(|i| format!("\"r\"(t + {i}u)")).collect();
        (addr, format!(": : \"l\"({ptr}), {} : \"memory\"", values.join(", ")))
    } else {
        // Operands: %0.. values, then the address.
        let addr = if let Some(space) = cvta {
            format!("{{ .reg .u64 a; cvta.to.{space}.u64 a, %{regs}; {op} {}, [a]; }}", vec(0))
        } else {
            format!("{op} {}, [%{regs}];", vec(0))
        };
        let outs: Vec<String> = (0..regs).map(|i| format!("\"=r\"(r{i})")).collect();
        (addr, format!(": {} : \"l\"({ptr}) : \"memory\"", outs.join(", ")))
    };
    if !instr.is_store() {
        let decl: Vec<String> = (0..regs).map(|i| format!("r{i}")).collect();
        let _ = writeln!(out, "  unsigned {};", decl.join(", "));
    }
    let _ = writeln!(out, "  asm volatile(\"{asm}\" {operands});");
    if !instr.is_store() {
        let sum: Vec<String> = (0..regs).map(|i| format!("r{i}")).collect();
        let _ = writeln!(out, "  ws_use({}, key);", sum.join(" ^ "));
    }
    out.push_str("}\n\n");
}

/// The whole CUDA program for `probes`: one kernel each, their lane tables, and a `main` that runs every
/// kernel once and writes the device's description as JSON to the path in `argv[1]`.
pub fn cuda_source(probes: &[Probe]) -> String {
    // probes() returns only probes that plan; any other is left out here.
    let (probes, plans): (Vec<&Probe>, Vec<Plan>) =
        probes.iter().filter_map(|p| plan(p).ok().map(|pl| (p, pl))).unzip();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Generated by `warpscope calibrate emit` ({} probes). Do not edit: change warpscope's presets or\n\
         // src/calibrate/ and emit again. Each kernel issues exactly one measured memory instruction per warp;\n\
         // hw/calibrate.sh compiles this with nvcc and profiles it with Nsight Compute.\n",
        probes.len()
    );
    out.push_str(
        "#ifndef __CUDA_ARCH__\n#include <cstdio>\n#include <cstdlib>\n#include <cuda_runtime.h>\n#endif\n\n\
         #define WS_INACTIVE 0xFFFFFFFFFFFFFFFFull\n#define WS_OFFSET_MASK 0x3FFFFFFFFFFFFFFFull\n",
    );
    let _ = writeln!(out, "#define WS_MAX_LANES {}\n", MAX_ISSUES * WARP_LANES);
    out.push_str("// Per thread: space << 62 | offset (global offsets from the probe's base), read with LDC.\n");
    out.push_str("__constant__ unsigned long long ws_lanes[WS_MAX_LANES];\n");
    out.push_str("extern __shared__ __align__(128) unsigned char ws_smem[];\n\n");
    out.push_str(USE);
    out.push_str(
        "// The shared-window address of dynamic shared memory: banks follow it, so it must be 128-byte aligned.\n\
         extern \"C\" __global__ void wsx_shared_base(unsigned long long* out) {\n\
         \x20 unsigned long long a;\n\
         \x20 asm volatile(\"cvta.to.shared.u64 %0, %1;\" : \"=l\"(a) : \"l\"(ws_smem));\n\
         \x20 *out = a;\n}\n\n",
    );
    for (p, plan) in probes.iter().zip(&plans) {
        kernel(&mut out, p, plan);
    }
    // The host side: nvcc compiles it once; device passes (and hw/check-sass.sh) skip it.
    out.push_str("#ifndef __CUDA_ARCH__\n");
    for (i, plan) in plans.iter().enumerate() {
        let _ = write!(out, "static const unsigned long long ws_t{i}[] = {{");
        for (w, row) in plan.lanes.iter().enumerate() {
            out.push_str(if w == 0 { "\n  " } else { ",\n  " });
            let cells: Vec<String> = row.iter().map(|&v| format!("0x{v:x}ull")).collect();
            out.push_str(&cells.join(","));
        }
        out.push_str("\n};\n");
    }
    out.push_str(
        "\ntypedef void (*WsKernel)(char*, unsigned, unsigned);\n\
         struct WsProbe { const char* id; const char* kernel; WsKernel k; const unsigned long long* lanes;\n\
         \x20 unsigned warps; unsigned long long global_span; unsigned shared_bytes; };\n\
         static const WsProbe ws_probes[] = {\n",
    );
    for (i, (p, plan)) in probes.iter().zip(&plans).enumerate() {
        let _ = writeln!(
            out,
            "  {{\"{}\", \"{}\", {}, ws_t{i}, {}, {}ull, {}}},",
            p.id,
            p.kernel_name(),
            p.kernel_name(),
            plan.lanes.len(),
            plan.global_span,
            plan.shared_bytes
        );
    }
    out.push_str("};\n\n");
    out.push_str(MAIN);
    out
}

/// Keeps a loaded value live without another memory instruction. A value used only under a run-time condition
/// lets ptxas sink the load into that branch (so that it would never run), and a comparison with a constant
/// that a narrow load cannot reach is folded away with the load; here the value is compared with `key`, a
/// kernel argument (0x9E3779B9, which no buffer holds), and the outcome feeds a sleep of 0 or 1 ns
/// (`nanosleep`, CC 7.0+) or, before Volta, a trap.
const USE: &str = "__device__ __forceinline__ void ws_use(unsigned v, unsigned key) {\n\
#if __CUDA_ARCH__ >= 700\n\
\x20 asm volatile(\"{ .reg .pred q; .reg .u32 d; setp.eq.u32 q, %0, %1; selp.u32 d, 1, 0, q; nanosleep.u32 d; }\" : : \"r\"(v), \"r\"(key));\n\
#else\n\
\x20 if (v == key) asm volatile(\"trap;\");\n\
#endif\n\
}\n\n";

const MAIN: &str = r#"#define WS_CHECK(call) do { cudaError_t err_ = (call); if (err_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); exit(2); } } while (0)

static void json_string(FILE* f, const char* s) {
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if ((unsigned char)*s >= 0x20) fputc(*s, f);
  }
  fputc('"', f);
}

int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s DEVICE_JSON\n", argv[0]); return 2; }
  const unsigned count = sizeof(ws_probes) / sizeof(ws_probes[0]);
  int dev = 0;
  WS_CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  WS_CHECK(cudaGetDeviceProperties(&prop, dev));
  int driver = 0, runtime = 0;
  WS_CHECK(cudaDriverGetVersion(&driver));
  WS_CHECK(cudaRuntimeGetVersion(&runtime));
  unsigned long long span = 0;
  for (unsigned i = 0; i < count; ++i) if (ws_probes[i].global_span > span) span = ws_probes[i].global_span;
  char* raw = 0;
  WS_CHECK(cudaMalloc(&raw, span + 8192));
  WS_CHECK(cudaMemset(raw, 0, span + 8192));
  char* gbase = (char*)(((unsigned long long)raw + 4095) & ~4095ull);
  unsigned long long* shared_base = 0;
  WS_CHECK(cudaMalloc(&shared_base, sizeof(unsigned long long)));
  wsx_shared_base<<<1, 1, 16>>>(shared_base);
  WS_CHECK(cudaGetLastError());
  unsigned long long sbase = 0;
  WS_CHECK(cudaMemcpy(&sbase, shared_base, sizeof sbase, cudaMemcpyDeviceToHost));
  FILE* f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 2; }
  fprintf(f, "{\n  \"gpu\": ");
  json_string(f, prop.name);
  fprintf(f, ",\n  \"cc\": \"%d.%d\",\n  \"cuda_driver\": %d,\n  \"cuda_runtime\": %d,\n  \"shared_base\": %llu,\n  \"probes\": [",
          prop.major, prop.minor, driver, runtime, sbase);
  // A failed probe is recorded in the file and the run goes on; after an error that loses the CUDA context
  // (an illegal address, say), the remaining probes are recorded as not run. The exit code is 0 once the
  // file is complete, so that ncu's results for the other probes are kept.
  unsigned failed = 0;
  const char* lost = 0;
  for (unsigned i = 0; i < count; ++i) {
    const WsProbe& p = ws_probes[i];
    char why[256] = "";
    cudaError_t err = cudaSuccess;
    if (lost) {
      snprintf(why, sizeof why, "not run: the CUDA context was lost at probe %s", lost);
    } else if (p.shared_bytes > prop.sharedMemPerBlockOptin) {
      snprintf(why, sizeof why, "needs %u bytes of shared memory; this GPU allows %zu per block", p.shared_bytes,
               prop.sharedMemPerBlockOptin);
    } else {
      err = cudaMemcpyToSymbol(ws_lanes, p.lanes, p.warps * 32 * sizeof(unsigned long long));
      if (err == cudaSuccess && p.shared_bytes > 48 * 1024)
        err = cudaFuncSetAttribute((const void*)p.k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.shared_bytes);
      if (err == cudaSuccess) {
        unsigned threads = p.warps * 32;
        unsigned block = threads < 1024 ? threads : 1024;
        p.k<<<(threads + block - 1) / block, block, p.shared_bytes>>>(gbase, threads, 0x9E3779B9u);
        err = cudaGetLastError();
        if (err == cudaSuccess) err = cudaDeviceSynchronize();
      }
      if (err != cudaSuccess) {
        snprintf(why, sizeof why, "%s", cudaGetErrorString(err));
        // A sticky error survives cudaGetLastError(): every later call fails too.
        cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess) lost = p.id;
      }
    }
    fprintf(f, "%s\n    {\"id\": ", i ? "," : "");
    json_string(f, p.id);
    fprintf(f, ", \"kernel\": \"%s\", \"warps\": %u, \"error\": ", p.kernel, p.warps);
    if (why[0]) { json_string(f, why); fprintf(f, "}"); ++failed; fprintf(stderr, "probe %s: %s\n", p.id, why); }
    else fprintf(f, "null}");
  }
  fprintf(f, "\n  ]\n}\n");
  fclose(f);
  printf("ran %u probes on %s (CC %d.%d), %u failed\n", count, prop.name, prop.major, prop.minor, failed);
  return 0;
}
#endif
"#;

/// What the probe program wrote about the device and each launch.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct DeviceRun {
    /// `cudaDeviceProp::name`.
    pub gpu: String,
    /// `major.minor`.
    pub cc: String,
    /// `cudaDriverGetVersion`.
    pub cuda_driver: u32,
    /// `cudaRuntimeGetVersion`.
    pub cuda_runtime: u32,
    /// The shared-window address of dynamic shared memory.
    pub shared_base: u64,
    /// Each launch.
    pub probes: Vec<Launched>,
}

/// One launch of the probe program.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Launched {
    /// The probe.
    pub id: String,
    /// Its kernel.
    pub kernel: String,
    /// Warps launched.
    pub warps: u32,
    /// The CUDA error, if the launch failed.
    pub error: Option<String>,
}

/// A problem with measurement input, with the file and line where that makes sense.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CalibrationError(pub String);

fn err(msg: impl Into<String>) -> CalibrationError {
    CalibrationError(msg.into())
}

/// Reads Nsight Compute's CSV (`ncu --csv --print-units base --metrics ...`, the default "details" page: one
/// row per kernel launch and metric) into kernel name -> metric -> value. Lines before the header (`==PROF==`
/// messages, the program's own output) are skipped; thousands separators are accepted; `n/a` and empty
/// values are left out. A kernel that
/// appears under two launch IDs is an error: each probe runs once.
pub fn parse_ncu_csv(text: &str) -> Result<BTreeMap<String, BTreeMap<String, u64>>, CalibrationError> {
    let start = text
        .lines()
        .position(|l| l.starts_with("\"ID\""))
        .ok_or_else(|| err("no Nsight Compute CSV header (a line starting with \"ID\") found"))?;
    let body: String = text.lines().skip(start).filter(|l| !l.starts_with("==")).collect::<Vec<_>>().join("\n");
    let mut rdr = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(body.as_bytes());
    let headers = rdr.headers().map_err(|e| err(format!("CSV header: {e}")))?.clone();
    let col = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| err(format!("the CSV has no \"{name}\" column")))
    };
    let (c_id, c_kernel, c_metric, c_value) =
        (col("ID")?, col("Kernel Name")?, col("Metric Name")?, col("Metric Value")?);
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = start + i + 2;
        let rec = rec.map_err(|e| err(format!("line {line}: {e}")))?;
        let field = |c: usize| rec.get(c).unwrap_or("").trim();
        let kernel = field(c_kernel).split('(').next().unwrap_or("").trim().to_string();
        let id = field(c_id).to_string();
        if let Some(prev) = ids.insert(kernel.clone(), id.clone()) {
            if prev != id {
                return Err(err(format!(
                    "line {line}: kernel {kernel} was profiled twice (IDs {prev} and {id}); run each probe once"
                )));
            }
        }
        // Nsight writes `n/a` (or nothing) for a metric a kernel has no value for: left out, not compared.
        if matches!(field(c_value), "" | "n/a") {
            continue;
        }
        let raw = field(c_value).replace(',', "");
        let value: f64 = raw.parse().map_err(|_| {
            err(format!("line {line}: metric value {:?} of {} is not a number", field(c_value), field(c_metric)))
        })?;
        if value < 0.0 || value.fract() != 0.0 {
            return Err(err(format!("line {line}: {} = {raw} is not a count", field(c_metric))));
        }
        out.entry(kernel).or_default().insert(field(c_metric).to_string(), value as u64);
    }
    Ok(out)
}

/// One GPU's measurements: the file committed as `tests/data/hardware/<gpu>.json`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Measurement {
    /// [`FORMAT`].
    pub format: u32,
    /// The GPU's name.
    pub gpu: String,
    /// Its compute capability, `major.minor`.
    pub cc: String,
    /// The driver release (`nvidia-smi`), when known.
    pub driver: String,
    /// CUDA driver API and runtime versions as `cuda*GetVersion` reports them.
    pub cuda_driver: u32,
    /// The runtime the probe program was built with.
    pub cuda_runtime: u32,
    /// The Nsight Compute version, when known.
    pub ncu: String,
    /// The shared-window address of dynamic shared memory on this GPU.
    pub shared_base: u64,
    /// Per probe.
    pub probes: Vec<MeasuredProbe>,
}

/// One probe's counts.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct MeasuredProbe {
    /// The probe.
    pub id: String,
    /// [`Probe::fingerprint`] when measured.
    pub fingerprint: String,
    /// The instruction.
    pub op: String,
    /// Warps (issues) measured.
    pub warps: u32,
    /// Metric -> count, as Nsight Compute reported it.
    pub counts: BTreeMap<String, u64>,
}

/// Joins the probe program's device file and Nsight Compute's counts into a [`Measurement`]. Probes that
/// failed to launch or that Nsight did not report are left out (and listed in the second value).
pub fn ingest(
    device: &DeviceRun,
    ncu: &BTreeMap<String, BTreeMap<String, u64>>,
    driver: &str,
    ncu_version: &str,
) -> Result<(Measurement, Vec<Skipped>), CalibrationError> {
    let (probes, _) = probes();
    let by_id: BTreeMap<&str, &Probe> = probes.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for l in &device.probes {
        let Some(p) = by_id.get(l.id.as_str()) else {
            missing.push(Skipped { id: l.id.clone(), reason: "not a probe of this warpscope: emit again".into() });
            continue;
        };
        if let Some(e) = &l.error {
            missing.push(Skipped { id: l.id.clone(), reason: format!("the launch failed: {e}") });
            continue;
        }
        let Some(counts) = ncu.get(&l.kernel) else {
            missing.push(Skipped { id: l.id.clone(), reason: format!("Nsight Compute reported no {}", l.kernel) });
            continue;
        };
        out.push(MeasuredProbe {
            id: l.id.clone(),
            fingerprint: p.fingerprint(),
            op: p.instr().text.clone(),
            warps: l.warps,
            counts: counts.clone(),
        });
    }
    if out.is_empty() {
        return Err(err("no probe has counts: check that ncu profiled the ws_ kernels"));
    }
    Cc::parse(&device.cc).map_err(|e| err(format!("device cc {:?}: {e}", device.cc)))?;
    Ok((
        Measurement {
            format: FORMAT,
            gpu: device.gpu.clone(),
            cc: device.cc.clone(),
            driver: driver.to_string(),
            cuda_driver: device.cuda_driver,
            cuda_runtime: device.cuda_runtime,
            ncu: ncu_version.to_string(),
            shared_base: device.shared_base,
            probes: out,
        },
        missing,
    ))
}

/// A measured departure from the documented rule, recorded as a model note: on CCs `cc_min..=cc_max`, the
/// probes whose id starts with `probe_prefix` measure `metric` differently from the rule, for the reason
/// given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// The lowest CC it was measured on.
    pub cc_min: Cc,
    /// The highest.
    pub cc_max: Cc,
    /// Which probes.
    pub probe_prefix: &'static str,
    /// Which metric.
    pub metric: &'static str,
    /// The model note: what hardware does, with the measurement.
    pub note: &'static str,
}

/// Departures measured so far. Each entry is backed by a committed measurement file.
pub const DEPARTURES: &[Departure] = &[];

/// How one probe compares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Verdict {
    /// Every metric equals the prediction.
    Agree,
    /// Some metrics differ, each covered by a recorded departure.
    Explained {
        /// The differing metrics: (metric, predicted, measured, note).
        rows: Vec<(String, u64, u64, String)>,
    },
    /// Some metrics differ with no recorded reason.
    Differ {
        /// The differing metrics: (metric, predicted, measured).
        rows: Vec<(String, u64, u64)>,
    },
    /// The pattern changed since it was measured (or is gone): measure again.
    Stale {
        /// Why.
        reason: String,
    },
}

/// One probe's comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProbeComparison {
    /// The probe.
    pub id: String,
    /// Its instruction.
    pub op: String,
    /// The metrics compared (those measured), with (predicted, measured).
    pub counts: BTreeMap<String, (u64, u64)>,
    /// The outcome.
    pub verdict: Verdict,
}

/// A measurement file set beside the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// The GPU.
    pub gpu: String,
    /// Its CC.
    pub cc: Cc,
    /// Per probe.
    pub probes: Vec<ProbeComparison>,
}

impl Comparison {
    /// (probes that agree, probes compared): stale probes are not compared.
    pub fn agreement(&self) -> (usize, usize) {
        let compared = self.probes.iter().filter(|p| !matches!(p.verdict, Verdict::Stale { .. }));
        let (mut agree, mut total) = (0, 0);
        for p in compared {
            total += 1;
            if p.verdict == Verdict::Agree {
                agree += 1;
            }
        }
        (agree, total)
    }

    /// (counts equal, counts compared) over every metric of every compared probe.
    pub fn count_agreement(&self) -> (usize, usize) {
        let mut eq = 0;
        let mut total = 0;
        for p in self.probes.iter().filter(|p| !matches!(p.verdict, Verdict::Stale { .. })) {
            for (pred, meas) in p.counts.values() {
                total += 1;
                if pred == meas {
                    eq += 1;
                }
            }
        }
        (eq, total)
    }

    /// Probes that differ with no recorded reason, or whose pattern changed since measurement.
    pub fn problems(&self) -> Vec<&ProbeComparison> {
        self.probes.iter().filter(|p| matches!(p.verdict, Verdict::Differ { .. } | Verdict::Stale { .. })).collect()
    }

    /// A plain-text table: one line per probe, then every differing count.
    pub fn to_text(&self) -> String {
        let (a, n) = self.agreement();
        let (ca, cn) = self.count_agreement();
        let mut s = format!(
            "{} (CC {}): {a} of {n} probes agree with the engine ({:.1}%); {ca} of {cn} counts equal\n",
            self.gpu,
            self.cc,
            percent(a, n)
        );
        for p in &self.probes {
            let v = match &p.verdict {
                Verdict::Agree => "agree".to_string(),
                Verdict::Explained { .. } => "differs (recorded departure)".to_string(),
                Verdict::Differ { .. } => "DIFFERS".to_string(),
                Verdict::Stale { reason } => format!("stale: {reason}"),
            };
            let _ = writeln!(s, "  {:<34} {:<18} {v}", p.id, p.op);
            match &p.verdict {
                Verdict::Differ { rows } => {
                    for (m, pred, meas) in rows {
                        let _ = writeln!(s, "      {m}: engine {pred}, measured {meas}");
                    }
                }
                Verdict::Explained { rows } => {
                    for (m, pred, meas, note) in rows {
                        let _ = writeln!(s, "      {m}: engine {pred}, measured {meas}: {note}");
                    }
                }
                _ => {}
            }
        }
        s
    }
}

fn percent(a: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        100.0 * a as f64 / n as f64
    }
}

/// Compares a measurement with the engine, pattern by pattern, for the measurement's CC. Only metrics the
/// measurement holds are compared (an older Nsight may lack some); a probe whose fingerprint changed is
/// stale, not compared.
pub fn compare(m: &Measurement, departures: &[Departure]) -> Result<Comparison, CalibrationError> {
    if m.format != FORMAT {
        return Err(err(format!("measurement format {} (this warpscope reads {FORMAT})", m.format)));
    }
    let cc = Cc::parse(&m.cc).map_err(|e| err(format!("cc {:?}: {e}", m.cc)))?;
    let (probes, _) = probes();
    let by_id: BTreeMap<&str, &Probe> = probes.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut out = Vec::new();
    for mp in &m.probes {
        let stale = |reason: String| ProbeComparison {
            id: mp.id.clone(),
            op: mp.op.clone(),
            counts: BTreeMap::new(),
            verdict: Verdict::Stale { reason },
        };
        let Some(p) = by_id.get(mp.id.as_str()) else {
            out.push(stale("no such probe in this warpscope".into()));
            continue;
        };
        if p.fingerprint() != mp.fingerprint {
            out.push(stale(format!(
                "the pattern changed (fingerprint {} now, {} measured)",
                p.fingerprint(),
                mp.fingerprint
            )));
            continue;
        }
        let predicted = p.predict(cc);
        let mut counts = BTreeMap::new();
        let mut differ = Vec::new();
        let mut explained = Vec::new();
        for (metric, &meas) in &mp.counts {
            let Some(&pred) = predicted.get(metric) else { continue };
            counts.insert(metric.clone(), (pred, meas));
            if pred != meas {
                let dep = departures.iter().find(|d| {
                    d.metric == metric && mp.id.starts_with(d.probe_prefix) && cc >= d.cc_min && cc <= d.cc_max
                });
                match dep {
                    Some(d) => explained.push((metric.clone(), pred, meas, d.note.to_string())),
                    None => differ.push((metric.clone(), pred, meas)),
                }
            }
        }
        let verdict = if !differ.is_empty() {
            Verdict::Differ { rows: differ }
        } else if !explained.is_empty() {
            Verdict::Explained { rows: explained }
        } else {
            Verdict::Agree
        };
        out.push(ProbeComparison { id: mp.id.clone(), op: mp.op.clone(), counts, verdict });
    }
    Ok(Comparison { gpu: m.gpu.clone(), cc, probes: out })
}

/// The agreement figure: one row per probe, one cell per metric with a non-zero count, green where the
/// engine's count equals the measured one, amber for a recorded departure, red for an unexplained
/// difference; grey rows are stale.
pub fn agreement_svg(c: &Comparison) -> String {
    let metric_names = metrics();
    let short = |m: &str| {
        m.trim_end_matches(".sum")
            .replace("l1tex__t_requests_pipe_lsu_mem_", "req ")
            .replace("l1tex__t_sectors_pipe_lsu_mem_", "sect ")
            .replace("l1tex__data_pipe_lsu_wavefronts_mem_", "wavef ")
            .replace("l1tex__data_bank_conflicts_pipe_lsu_mem_", "confl ")
            .replace("smsp__inst_executed_op_", "inst ")
            .replace("_op_", " ")
            .replace('_', " ")
    };
    // Only the metrics that are non-zero somewhere get a column.
    let used: Vec<&String> = metric_names
        .iter()
        .filter(|m| c.probes.iter().any(|p| p.counts.get(*m).is_some_and(|&(a, b)| a != 0 || b != 0)))
        .collect();
    let (row_h, cell_w, label_w, top) = (18.0, 64.0, 300.0, 150.0);
    let width = label_w + cell_w * used.len() as f64 + 20.0;
    let height = top + row_h * c.probes.len() as f64 + 40.0;
    let (a, n) = c.agreement();
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{} (CC {}): {a} of {n} probes agree with warpscope ({:.1}%)</text>\n\
         <text x=\"10\" y=\"40\" fill=\"#555\">Each cell: engine / measured count. Green equal, amber a recorded departure, red a difference, grey a stale pattern.</text>\n",
        escape(&c.gpu),
        c.cc,
        percent(a, n)
    );
    for (j, m) in used.iter().enumerate() {
        let x = label_w + cell_w * j as f64 + cell_w / 2.0;
        let _ = writeln!(
            s,
            "<text transform=\"translate({x},{}) rotate(-50)\" fill=\"#333\">{}</text>",
            top - 6.0,
            escape(&short(m))
        );
    }
    for (i, p) in c.probes.iter().enumerate() {
        let y = top + row_h * i as f64;
        let _ = writeln!(s, "<text x=\"10\" y=\"{}\">{}</text>", y + 13.0, escape(&p.id));
        for (j, m) in used.iter().enumerate() {
            let x = label_w + cell_w * j as f64;
            let (fill, label) = match (&p.verdict, p.counts.get(*m)) {
                (Verdict::Stale { .. }, _) => ("#d0d0d0", String::new()),
                (_, None) => ("#f4f4f4", String::new()),
                (v, Some(&(pred, meas))) => {
                    let fill = if pred == meas {
                        "#b9e4c0"
                    } else if matches!(v, Verdict::Explained { .. }) {
                        "#f6d78b"
                    } else {
                        "#f3a6a0"
                    };
                    let label = if pred == meas { pred.to_string() } else { format!("{pred}/{meas}") };
                    (fill, if pred == 0 && meas == 0 { String::new() } else { label })
                }
            };
            let _ = writeln!(
                s,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#fff\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
                cell_w,
                row_h,
                x + cell_w / 2.0,
                y + 13.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
