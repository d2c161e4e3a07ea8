//! The engine against silicon. Every measurement committed under `tests/data/hardware/` (written by
//! `hw/calibrate.sh` on a real GPU) must agree with the engine's prediction for its CC, probe by probe, except
//! where a recorded departure (`calibrate::DEPARTURES`, shown as a model note) explains the difference. The
//! rest of this file checks the machinery on synthetic input whose numbers come from the model reference (docs/model.md).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use warpscope::calibrate::{
    self, compare, ingest, parse_ncu_csv, probes, Comparison, Departure, DeviceRun, Measurement, Verdict,
};
use warpscope::Cc;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn synthetic() -> Measurement {
    let device: DeviceRun =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}/calibration/synthetic-device.json")).unwrap())
            .unwrap();
    let csv = std::fs::read_to_string(format!("{DATA}/calibration/synthetic-ncu.csv")).unwrap();
    let counts = parse_ncu_csv(&csv).unwrap();
    let (m, missing) = ingest(&device, &counts, "580.159.04", "2025.3.1").unwrap();
    // The device file lists one launch that failed; it is reported, not measured.
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].id, "global/ld/u8");
    assert!(missing[0].reason.contains("illegal memory access"), "{}", missing[0].reason);
    m
}

fn counts<'a>(c: &'a Comparison, id: &str) -> &'a BTreeMap<String, (u64, u64)> {
    &c.probes.iter().find(|p| p.id == id).unwrap_or_else(|| panic!("probe {id}")).counts
}

#[test]
fn every_committed_gpu_agrees_with_the_engine() {
    let dir = format!("{DATA}/hardware");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for path in files {
        let m: Measurement = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let c = compare(&m, calibrate::DEPARTURES).unwrap();
        let (agree, total) = c.agreement();
        println!("{}: {agree} of {total} probes agree", path.display());
        assert!(total > 0, "{}: no probe compared", path.display());
        assert!(c.problems().is_empty(), "{}:\n{}", path.display(), c.to_text());
    }
}

#[test]
fn every_departure_names_a_probe_and_a_measured_metric() {
    let (all, _) = probes();
    let metrics = calibrate::metrics();
    for d in calibrate::DEPARTURES {
        assert!(all.iter().any(|p| p.id.starts_with(d.probe_prefix)), "{}", d.probe_prefix);
        assert!(metrics.iter().any(|m| m == d.metric), "{}", d.metric);
        assert!(d.cc_min <= d.cc_max && !d.note.is_empty());
    }
}

#[test]
fn synthetic_measurement_with_model_numbers_agrees() {
    let m = synthetic();
    assert_eq!(m.cc, "9.0");
    assert_eq!(m.probes.len(), 14);
    let c = compare(&m, &[]).unwrap();
    assert_eq!(c.agreement(), (14, 14), "{}", c.to_text());
    let sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
    // docs/model.md#global-memory (CC 7.x+, BPG 9.2.1): 4*lane -> 4 sectors; 4*lane + 4 -> 5; 8*lane -> 8; 128*lane -> 32
    // ("32 when every lane hits its own line"); one active lane -> 1.
    assert_eq!(counts(&c, "global/ld/32")[sectors], (4, 4));
    assert_eq!(counts(&c, "global/ld/32+4")[sectors], (5, 5));
    assert_eq!(counts(&c, "global/ld/stride2")[sectors], (8, 8));
    assert_eq!(counts(&c, "global/ld/stride32")[sectors], (32, 32));
    assert_eq!(counts(&c, "global/ld/one-lane")[sectors], (1, 1));
    // docs/model.md#global-memory: "a single request is sent to L1TEX" per warp instruction: 4 warps -> 4 requests.
    assert_eq!(counts(&c, "global/ld/4-warps")["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], (4, 4));
    let (wf, bc) = (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    );
    // docs/model.md#shared-memory (PG Fig. 39/40, BPG 9.2.3.3): stride 2 is 2-way; 128*lane 32-way; [32][33] padding
    // conflict-free; LDS.64 8*lane = 2 wavefronts; LDS.128 16*lane = 4; LDS.128 on one bank group = 32.
    assert_eq!((counts(&c, "shared/ld/stride2")[wf], counts(&c, "shared/ld/stride2")[bc]), ((2, 2), (1, 1)));
    assert_eq!(counts(&c, "shared/ld/32-k32")[wf], (32, 32));
    assert_eq!(counts(&c, "shared/ld/padded-column")[wf], (1, 1));
    assert_eq!(counts(&c, "shared/ld/64-k1")[wf], (2, 2));
    assert_eq!(counts(&c, "shared/ld/128-k1")[wf], (4, 4));
    assert_eq!((counts(&c, "shared/ld/128-k32")[wf], counts(&c, "shared/ld/128-k32")[bc]), ((32, 32), (28, 28)));
    // docs/model.md#local-memory: the same relative local address in every lane is fully coalesced: 128 bytes, 4 sectors.
    assert_eq!(counts(&c, "local/ld/32-same")["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"], (4, 4));
}

#[test]
fn a_count_that_differs_is_reported_with_its_probe_and_metric() {
    let mut m = synthetic();
    let p = m.probes.iter_mut().find(|p| p.id == "shared/ld/128-k32").unwrap();
    // As if the hardware counted LDS.128 by quarter-warps of 8 conflicting lanes: 4 x 8 = 32 wavefronts, but
    // reported 124 bank conflicts.
    p.counts.insert("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum".into(), 124);
    let c = compare(&m, &[]).unwrap();
    assert_eq!(c.agreement(), (13, 14));
    let bad = c.problems();
    assert_eq!(bad.len(), 1);
    assert_eq!(
        bad[0].verdict,
        Verdict::Differ { rows: vec![("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum".into(), 28, 124)] }
    );
    assert!(c.to_text().contains("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum: engine 28, measured 124"));
    let svg = calibrate::agreement_svg(&c);
    assert!(svg.contains("13 of 14 probes agree"));
    assert!(svg.contains("28/124"), "the differing cell shows engine/measured");

    // A recorded departure for that CC explains it; outside its CC range it does not.
    let dep = Departure {
        cc_min: Cc::new(9, 0),
        cc_max: Cc::new(9, 0),
        probe_prefix: "shared/ld/128",
        metric: "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        note: "synthetic",
    };
    let c = compare(&m, &[dep]).unwrap();
    assert!(c.problems().is_empty());
    assert!(matches!(
        c.probes.iter().find(|p| p.id == "shared/ld/128-k32").unwrap().verdict,
        Verdict::Explained { .. }
    ));
    let c = compare(&m, &[Departure { cc_min: Cc::new(7, 0), cc_max: Cc::new(7, 5), ..dep }]).unwrap();
    assert_eq!(c.problems().len(), 1);
}

#[test]
fn a_changed_pattern_is_stale_not_compared() {
    let mut m = synthetic();
    m.probes[0].fingerprint = "00000000".into();
    m.probes[1].id = "global/ld/no-such-probe".into();
    let c = compare(&m, &[]).unwrap();
    assert_eq!(c.agreement(), (12, 12));
    assert_eq!(c.problems().len(), 2);
    assert!(matches!(&c.probes[0].verdict, Verdict::Stale { reason } if reason.contains("changed")));
    assert!(matches!(&c.probes[1].verdict, Verdict::Stale { reason } if reason.contains("no such probe")));
}

#[test]
fn ncu_csv_errors_name_the_line() {
    let head = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
    // Thousands separators and a demangled signature are accepted.
    let ok =
        parse_ncu_csv(&format!("{head}\"0\",\"ws_a(char *, unsigned int)\",\"m.sum\",\"sector\",\"1,024\"\n")).unwrap();
    assert_eq!(ok["ws_a"]["m.sum"], 1024);
    // `n/a`: no value for this kernel; left out (and so not compared), the rest is kept.
    let na =
        parse_ncu_csv(&format!("{head}\"0\",\"ws_a\",\"m.sum\",\"\",\"n/a\"\n\"0\",\"ws_a\",\"k.sum\",\"\",\"3\"\n"))
            .unwrap();
    assert_eq!(na["ws_a"].len(), 1);
    assert_eq!(na["ws_a"]["k.sum"], 3);
    let e = parse_ncu_csv(&format!("{head}\"0\",\"ws_a\",\"m.sum\",\"\",\"12 KB\"\n")).unwrap_err();
    assert_eq!(e.to_string(), "line 2: metric value \"12 KB\" of m.sum is not a number");
    let e = parse_ncu_csv(&format!("==PROF== hello\n{head}\"0\",\"ws_a\",\"m.sum\",\"\",\"2.5\"\n")).unwrap_err();
    assert_eq!(e.to_string(), "line 3: m.sum = 2.5 is not a count");
    let e = parse_ncu_csv(&format!("{head}\"0\",\"ws_a\",\"m.sum\",\"\",\"1\"\n\"1\",\"ws_a\",\"m.sum\",\"\",\"1\"\n"))
        .unwrap_err();
    assert!(e.to_string().starts_with("line 3: kernel ws_a was profiled twice"), "{e}");
    let e = parse_ncu_csv("\"Kernel\"\n").unwrap_err();
    assert!(e.to_string().contains("no Nsight Compute CSV header"), "{e}");
    let e = parse_ncu_csv("\"ID\",\"Kernel Name\"\n").unwrap_err();
    assert_eq!(e.to_string(), "the CSV has no \"Metric Name\" column");
}

#[test]
fn the_probe_set_covers_what_calibration_needs() {
    let (all, skipped) = probes();
    // Only the tensor-core-era presets, the atomics and the constant loads are skipped, each saying so: their
    // probes need inline PTX of their own (an atomic probed as a plain store would measure a store).
    let skipped_ids: Vec<&str> = skipped.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        skipped_ids,
        [
            "preset/ldmatrix-unswizzled/1",
            "preset/ldmatrix-swizzled/1",
            "preset/tma-tile-ldmatrix/1",
            "preset/cp-async-tile/1",
            "preset/atomics-global/1",
            "preset/atomics-global/2",
            "preset/atomics-shared/2",
            "preset/atomics-shared/4",
            "preset/constant-memory/1",
            "preset/constant-memory/2"
        ],
        "{skipped:?}"
    );
    assert!(skipped.iter().all(|s| s.reason.ends_with("probes are not generated yet")), "{skipped:?}");
    // Every preset's every memory instruction.
    for preset in warpscope::teach::presets::PRESETS.iter() {
        if preset.scenario().instr().is_ok_and(|i| i.base.first_cc().is_some()) {
            continue;
        }
        let n = preset.scenario().trace(1).unwrap().items.len();
        for i in 1..=n {
            let id = format!("preset/{}/{i}", preset.name);
            assert!(all.iter().any(|p| p.id == id) || skipped_ids.contains(&id.as_str()), "{id}");
        }
    }
    let ops: Vec<&str> = all.iter().map(|p| p.instr().text.as_str()).collect();
    for op in [
        "LDG.E.U8",
        "LDG.E.U16",
        "LDG.E.32",
        "LDG.E.64",
        "LDG.E.128",
        "STG.E.32",
        "LDS.32",
        "LDS.64",
        "LDS.128",
        "STS.32",
        "LDL.32",
        "STL.32",
        "LD.E.32",
        "ST.E.32",
    ] {
        assert!(ops.contains(&op), "{op}");
    }
    // Shared conflicts from none to 32-way at 32 bits, as the engine counts them (PG 20.4.3: k lanes on one
    // bank at k different words serialise k-fold).
    for (k, degree) in [(1, 1), (2, 2), (3, 3), (4, 4), (8, 8), (16, 16), (32, 32)] {
        let p = all.iter().find(|p| p.id == format!("shared/ld/32-k{k}")).unwrap();
        let r = warpscope::analysis::analyze_trace(Cc::new(9, 0), &p.trace(), &p.config);
        assert_eq!(r.instructions[0].banks.as_ref().unwrap().conflict_degree, degree, "k = {k}");
    }
    // Every count the engine names for a probe is one that calibration asks Nsight for (trace.rs and
    // calibrate::metrics spell the names separately).
    let asked = calibrate::metrics();
    for p in &all {
        for r in warpscope::analysis::analyze_trace(Cc::new(9, 0), &p.trace(), &p.config).instructions {
            for name in r.ncu.keys() {
                assert!(asked.contains(name), "{}: {name} is not measured", p.id);
            }
        }
    }
    // Ids and kernel names are unique; kernels are C identifiers.
    let mut names: Vec<String> = all.iter().map(|p| p.kernel_name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len());
    assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')));
}

#[test]
fn emitted_kernels_issue_the_probe_instruction_from_its_lane_table() {
    let (all, _) = probes();
    let cu = calibrate::cuda_source(&all);
    assert_eq!(cu.matches("extern \"C\" __global__ void __launch_bounds__(1024) ws_").count(), all.len());
    let kernel = |id: &str| {
        let p = all.iter().find(|p| p.id == id).unwrap();
        let start = cu.find(&format!(" {}(", p.kernel_name())).unwrap();
        let end = start + cu[start..].find("\n}\n").unwrap();
        cu[start..end].to_string()
    };
    // PTX per instruction: width, space, cache operator; window addresses through cvta.
    assert!(kernel("global/ld/32").contains("ld.global.u32 %0, [%1];"));
    assert!(kernel("global/ld/128").contains("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"));
    assert!(kernel("global/ld/u8").contains("ld.global.u8 %0, [%1];"));
    assert!(kernel("global/ld/cache-global").contains("ld.global.cg.u32"));
    assert!(kernel("global/ld/read-only").contains("ld.global.nc.u32"));
    assert!(kernel("global/st/64").contains("st.global.v2.u32 [%0], {%1, %2};"));
    assert!(kernel("shared/ld/64-k2").contains("cvta.to.shared.u64 a, %2; ld.shared.v2.u32 {%0, %1}, [a];"));
    assert!(kernel("local/st/128-per-lane").contains("__align__(16) unsigned char ws_local[512];"));
    assert!(kernel("local/st/128-per-lane").contains("cvta.to.local.u64 a, %0; st.local.v4.u32 [a]"));
    assert!(kernel("generic/ld/split").contains("ld.u32 %0, [%1];"));
    // Loads keep their value live through ws_use, never through a second memory access.
    assert!(kernel("global/ld/128").contains("ws_use(r0 ^ r1 ^ r2 ^ r3, key);"));
    // The lane table of 4*lane: offsets 0, 4, ..., 124 from the probe's 4 KB-aligned base, space 0 (global).
    let i = all.iter().position(|p| p.id == "global/ld/32").unwrap();
    let offsets: Vec<String> = (0..32).map(|l| format!("0x{:x}ull", 4 * l)).collect();
    assert!(cu.contains(&format!("static const unsigned long long ws_t{i}[] = {{\n  {}\n}};", offsets.join(","))));
    // The split generic load: lanes 0-15 in the shared window (space 1), 16-31 global (space 0) at 64..124.
    let plan = calibrate::plan(all.iter().find(|p| p.id == "generic/ld/split").unwrap()).unwrap();
    assert_eq!(plan.lanes[0][0], 1 << 62);
    assert_eq!(plan.lanes[0][15], 1 << 62 | 60);
    assert_eq!(plan.lanes[0][16], 64);
    assert_eq!(plan.shared_bytes, 64);
    // Inactive lanes are all ones: `4*lane if lane < 8`.
    let plan = calibrate::plan(all.iter().find(|p| p.id == "global/ld/8-lanes").unwrap()).unwrap();
    assert_eq!(plan.lanes[0][7], 28);
    assert_eq!(plan.lanes[0][8], u64::MAX);
}

#[test]
fn the_cli_runs_the_loop_and_exits_1_on_a_difference() {
    let bin = env!("CARGO_BIN_EXE_warpscope");
    let dir = std::env::temp_dir().join(format!("warpscope-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!err.contains("panicked"), "{err}");
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    let emitted = dir.join("build");
    let (code, out, _) = run(&["calibrate", "emit", "--out", emitted.to_str().unwrap()]);
    assert_eq!(code, 0);
    let (all, _) = probes();
    assert!(out.contains(&format!("{} probes", all.len())), "{out}");
    let listing = std::fs::read_to_string(emitted.join("probes.txt")).unwrap();
    assert_eq!(listing.lines().count(), all.len());
    assert!(listing.starts_with("preset/coalesced/1\tws_preset_coalesced_1\t"));

    let measured = dir.join("synthetic.json");
    let (code, _, err) = run(&[
        "calibrate",
        "ingest",
        "--device",
        &format!("{DATA}/calibration/synthetic-device.json"),
        "--ncu",
        &format!("{DATA}/calibration/synthetic-ncu.csv"),
        "-o",
        measured.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let svg = dir.join("agreement.svg");
    let (code, out, _) = run(&["calibrate", "compare", measured.to_str().unwrap(), "--svg", svg.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("14 of 14 probes agree with the engine (100.0%)"), "{out}");
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));

    let mut m: Measurement = serde_json::from_str(&std::fs::read_to_string(&measured).unwrap()).unwrap();
    m.probes[2].counts.insert("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum".into(), 9);
    std::fs::write(&measured, serde_json::to_string(&m).unwrap()).unwrap();
    let (code, out, _) = run(&["calibrate", "compare", measured.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("global/ld/stride2") && out.contains("engine 8, measured 9"), "{out}");

    std::fs::write(&measured, "{\"format\": 1,\n  \"gpu\": ").unwrap();
    let (code, _, err) = run(&["calibrate", "compare", measured.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("synthetic.json:2:"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
