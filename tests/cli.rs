//! The CLI as a process: exit codes, the JSON shape, and error messages with their position.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

fn warpscope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope")).args(args).output().expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "no panic: {stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = warpscope(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("stdout is one JSON object")
}

#[test]
fn global_json_has_the_documented_fields() {
    // BPG 9.2.1.2: misaligned by one word on CC 6.0+: 5 sectors over 2 lines.
    let v = json(&["analyze", "--cc", "8.0", "--op", "LDG.E.32", "--addr", "4*lane + 4"]);
    for key in [
        "cc",
        "op",
        "space",
        "size",
        "active_lanes",
        "requests",
        "lines",
        "sectors",
        "transactions",
        "transaction_bytes",
        "bytes_requested",
        "bytes_unique",
        "bytes_moved",
        "efficiency",
        "notes",
        "warnings",
    ] {
        assert!(v.get(key).is_some(), "missing `{key}` in {v}");
    }
    assert_eq!(v["cc"], "8.0");
    assert_eq!(v["space"], "global");
    assert_eq!((v["lines"].as_u64(), v["sectors"].as_u64()), (Some(2), Some(5)));
    assert_eq!(v["bytes_moved"].as_u64(), Some(160));
    assert_eq!(v["efficiency"].as_f64(), Some(0.8));
}

#[test]
fn shared_json_has_the_documented_fields() {
    // BPG 9.2.3.3: a 32x32 float tile read by column is 32-way.
    let v = json(&["analyze", "--cc", "7.5", "--op", "LDS.32", "--addr", "128*lane"]);
    assert_eq!(v["space"], "shared");
    assert_eq!(v["wavefronts"].as_u64(), Some(32));
    assert_eq!(v["ideal_wavefronts"].as_u64(), Some(1));
    assert_eq!(v["bank_conflicts"].as_u64(), Some(31));
    assert_eq!(v["conflict_degree"].as_u64(), Some(32));
    assert!(v["notes"].is_array() && v["warnings"].is_array());
}

#[test]
fn generic_split_reports_parts() {
    // Lanes 0-15 global, 16-31 in the shared window (MODEL: generic LD/ST).
    let v =
        json(&["analyze", "--op", "LD.E.32", "--addr", "0x1000 + 4*lane + (lane >> 4) * (0x7F0000000000 - 0x1000)"]);
    assert_eq!(v["space"], "generic");
    let parts = v["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 2);
    assert_eq!((parts[0]["space"].as_str(), parts[0]["sectors"].as_u64()), (Some("global"), Some(2)));
    assert_eq!((parts[1]["space"].as_str(), parts[1]["wavefronts"].as_u64()), (Some("shared"), Some(1)));
}

#[test]
fn tensor_core_era_instructions_from_the_command_line() {
    // docs/model.md#ldmatrix-and-stmatrix: ldmatrix.x4 on an unswizzled tile of 64 halves per row: 32 wavefronts.
    let v = json(&["analyze", "--cc", "8.0", "--op", "LDSM.16.M88.4", "--addr", "128*(lane % 8) + 16*(lane / 8)"]);
    assert_eq!((v["wavefronts"].as_u64(), v["conflict_degree"].as_u64()), (Some(32), Some(8)));
    // docs/model.md#ldmatrix-and-stmatrix: before CC 7.5 ldmatrix does not exist: exit 2 with a message naming the first CC.
    fails(
        &["analyze", "--cc", "7.0", "--op", "LDSM.16.M88.4", "--addr", "16*lane"],
        &["--op 1:1", "LDSM (ldmatrix) needs CC 7.5 or later; CC 7.0 does not have it"],
    );
    fails(&["analyze", "--cc", "8.0", "--op", "STSM.16.M88.4", "--addr", "16*lane"], &["needs CC 9.0 or later"]);
    // docs/model.md#shared-memory-as-measured: broadcast LDS.128 is 2 measured, 4 documented; each names the other's figure.
    let v = json(&["analyze", "--cc", "8.6", "--op", "LDS.128", "--addr", "0"]);
    assert_eq!((v["wavefronts"].as_u64(), v["other_model_wavefronts"].as_u64()), (Some(2), Some(4)));
    let v = json(&["analyze", "--cc", "8.6", "--op", "LDS.128", "--addr", "0", "--shared-model", "documented"]);
    assert_eq!((v["wavefronts"].as_u64(), v["other_model_wavefronts"].as_u64()), (Some(4), Some(2)));
    // docs/model.md#asynchronous-copies: cp.async as a global read and a shared write.
    let v = json(&["analyze", "--cc", "8.0", "--op", "LDGSTS.E.BYPASS.128", "--addr", "16*lane from 4096 + 16*lane"]);
    assert_eq!(v["space"], "global_to_shared");
    assert_eq!((v["parts"][0]["sectors"].as_u64(), v["parts"][1]["wavefronts"].as_u64()), (Some(16), Some(4)));
    fails(&["analyze", "--cc", "8.0", "--op", "LDGSTS.E.128", "--addr", "16*lane"], &["write `SHARED from GLOBAL`"]);
    fails(&["analyze", "--cc", "8.0", "--op", "LDS.128", "--addr", "16*lane from 0"], &["1:9", "is not a copy"]);
    // A TMA box of 64x8 halves from 4096-byte rows with the 128-byte swizzle: 8 lines, 32 sectors
    // (docs/model.md#global-memory), chunk 0 of rows 0-7 in bank groups 0-7 (docs/model.md#swizzles).
    let v = json(&["tma", "--box", "64x8", "--elem-bytes", "2", "--pitch", "4096", "--swizzle", "128B"]);
    assert_eq!((v["cost"]["lines"].as_u64(), v["cost"]["sectors"].as_u64()), (Some(8), Some(32)));
    let groups: Vec<u64> = v["cost"]["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["chunk"] == 0)
        .map(|c| c["bank_group"].as_u64().unwrap())
        .collect();
    assert_eq!(groups, [0, 1, 2, 3, 4, 5, 6, 7]);
    fails(&["tma", "--box", "128x8", "--swizzle", "128B"], &["at most 128 bytes, not 256"]);
    // A TMA copy in SASS moves memory warpscope cannot see the box of: refused where it runs, never skipped.
    let (code, _, err) =
        warpscope_stdin(&["analyze", "--cc", "9.0", "--sass", "-"], "UTMALDG.2D [UR8], [UR4] ;\nEXIT ;\n");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1:1: UTMALDG at line 1 is a TMA (bulk or tensor) copy"), "{err}");
}

#[test]
fn options_change_the_result() {
    // PG-11 K.3.2: Kepler 3.5 with -dlcm=ca moves one 128-byte line for a coalesced warp.
    let v = json(&["analyze", "--cc", "3.5", "--op", "LD.E.32", "--addr", "4*lane", "--l1", "on"]);
    assert_eq!((v["transactions"].as_u64(), v["transaction_bytes"].as_u64()), (Some(1), Some(128)));
    // PG-11 K.3.3: 8-byte bank mode, 64-bit accesses at 8*lane: one pass.
    let v = json(&["analyze", "--cc", "3.5", "--op", "LDS.64", "--addr", "8*lane", "--bank-mode", "8"]);
    assert_eq!(v["wavefronts"].as_u64(), Some(1));
    // Half the lanes: 64 bytes, 2 sectors.
    let v = json(&["analyze", "--op", "LDG.E.32", "--addr", "4*lane", "--mask", "0xffff"]);
    assert_eq!((v["active_lanes"].as_u64(), v["sectors"].as_u64()), (Some(16), Some(2)));
}

#[test]
fn text_format_is_a_table() {
    let (code, out, _) = warpscope(&["analyze", "--cc", "8.0", "--op", "LDS.32", "--addr", "8*lane"]);
    assert_eq!(code, 0);
    assert!(out.contains("wavefronts           2"), "{out}");
    assert!(out.contains("conflict degree      2-way"), "{out}");
}

#[test]
fn facts_and_carveout() {
    // the KAUST memory lecture: CC 7.0, 50% of 96 KB = 48 KB, rounded up to 64 KB; CC 8.0, 50% of 164 KB -> 100 KB.
    let v = json(&["facts", "--cc", "7.0", "--carveout", "50"]);
    assert_eq!(v["carveout"]["shared_kb"].as_u64(), Some(64));
    let v = json(&["facts", "--cc", "8.0", "--carveout", "50"]);
    assert_eq!(v["carveout"]["shared_kb"].as_u64(), Some(100));
    let v = json(&["facts"]);
    assert_eq!(v["facts"].as_array().map(Vec::len), Some(16));
}

fn fails(args: &[&str], expect: &[&str]) {
    let (code, out, err) = warpscope(args);
    assert_eq!(code, 2, "exit code 2 for {args:?}; stderr: {err}");
    assert!(out.is_empty(), "nothing on stdout for bad input: {out}");
    for e in expect {
        assert!(err.contains(e), "stderr for {args:?} should contain `{e}`:\n{err}");
    }
}

#[test]
fn bad_input_exits_2_with_a_positioned_message() {
    fails(&["analyze", "--cc", "9.9", "--op", "LDS.32", "--addr", "lane"], &["unknown compute capability `9.9`"]);
    fails(&["analyze", "--op", "LDG.E.XX", "--addr", "lane"], &["--op 1:7", "unknown modifier `.XX`", "      ^^"]);
    fails(&["analyze", "--op", "LDX.32", "--addr", "lane"], &["--op 1:1", "`LDX` is not a memory instruction"]);
    fails(&["analyze", "--op", "LDS.32", "--addr", "4*lane + )"], &["--addr 1:10", "found `)`"]);
    fails(&["analyze", "--op", "LDS.32", "--addr", "4*lane + foo"], &["--addr 1:10", "unknown variable `foo`"]);
    fails(&["analyze", "--op", "LDS.32", "--addr", "lane / (lane - lane)"], &["--addr 1:6", "division by zero"]);
    fails(
        &["analyze", "--op", "LDS.32", "--addr", "lane", "--mask", "0x1ffffffff"],
        &["--mask 1:3", "mask out of range"],
    );
    fails(
        &["analyze", "--op", "LDS.32", "--addr", "lane", "--mask", "0xfg"],
        &["--mask 1:4", "`g` is not a hex digit"],
    );
    fails(&["analyze", "--op", "LDG.32", "--addr", "0x100000000 + lane"], &["--addr 1:1", "does not fit in 32 bits"]);
    fails(&["analyze", "--op", "LDG.E.32", "--addr", "0xffffffffffffffff + lane"], &["does not fit in 64 bits"]);
    fails(
        &["analyze", "--op", "LDG.E.32", "--addr", "(1 << 63) * (1 << 63) * (1 << 63)"],
        &["--addr 1:11", "overflow in `*`"],
    );
    fails(&["analyze", "--op", "LDG.E.32", "--addr", "lane - 4"], &["lane 0: the address is negative (-4)"]);
    fails(&["analyze", "--op", "LDS.E.32", "--addr", "lane"], &["`.E` (64-bit address) does not apply to LDS"]);
    fails(&["facts", "--cc", "3.5", "--carveout", "50"], &["no percentage carveout"]);
    fails(&["analyze", "--op", "LDS.32"], &["--addr"]);
    // Device settings out of range name the range and the preset (docs/model.md#the-memory-system), not clamped.
    fails(
        &["analyze", "--op", "LDG.E.32", "--addr", "4*lane", "--l2-ways", "0"],
        &["cache settings: L2 ways 0 is out of range: give 1 to 128 (8.0's example GPU, the A100, has 16)"],
    );
    fails(
        &["analyze", "--op", "LDG.E.32", "--addr", "4*lane", "--carveout-kb", "18014398509481984"],
        &["--carveout-kb 18014398509481984: too large for this setting"],
    );
}

fn warpscope_stdin(args: &[&str], input: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    let out = child.wait_with_output().expect("exit");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "no panic: {stderr}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn program_inputs_print_instructions() {
    let dir = std::env::temp_dir().join(format!("warpscope-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cu = dir.join("t.cu");
    std::fs::write(&cu, "__shared__ float t[32][33];\nfloat *in;\nt[threadIdx.x][0] = in[threadIdx.x];\n")
        .expect("write");
    let v = json(&["analyze", "--cuda", cu.to_str().expect("path"), "--block", "64"]);
    let list = v["instructions"].as_array().expect("instructions");
    // In program order: the global load, then the shared store (padded: conflict-free, PG 20.4.3).
    assert_eq!(list.len(), 2);
    for key in ["line", "text", "op", "space", "warps", "ncu", "notes", "warnings"] {
        assert!(list[0].get(key).is_some(), "missing `{key}`");
    }
    assert_eq!(
        (list[0]["op"].as_str(), list[0]["line"].as_u64(), list[0]["warps"].as_u64()),
        (Some("LDG.E.32"), Some(3), Some(2))
    );
    assert_eq!(list[0]["sectors"].as_u64(), Some(8), "2 warps x 4 sectors (BPG 9.2.1.1)");
    assert_eq!(
        (list[1]["op"].as_str(), list[1]["space"].as_str(), list[1]["bank_conflicts"].as_u64()),
        (Some("STS.32"), Some("shared"), Some(0))
    );

    // SASS from standard input, with a register from --set.
    let (code, out, err) = warpscope_stdin(
        &["analyze", "--sass", "-", "--set", "R2=0x7000", "--format", "json"],
        "S2R R0, SR_TID.X ;\nSHL R1, R0, 0x3 ;\nIADD R4, R1, R2 ;\nLDG.32 R5, [R4] ;\n",
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["instructions"][0]["sectors"].as_u64(), Some(8), "stride 8 bytes: 8 sectors (BPG 9.2.1.3)");

    // An address list with --op.
    let list_file = dir.join("a.txt");
    let addrs: Vec<String> = (0..32).map(|l| format!("{:#x}", 0x1000 + 4 * l)).collect();
    std::fs::write(&list_file, addrs.join(" ")).expect("write");
    let v = json(&["analyze", "--addresses", list_file.to_str().expect("path"), "--op", "LDG.E.32"]);
    assert_eq!(v["instructions"][0]["sectors"].as_u64(), Some(4));

    // Errors name the file, line and column.
    let bad = dir.join("bad.cu");
    std::fs::write(&bad, "__global__ void k(float *in) {\nfloat x = in[data[0]];\n}\n").expect("write");
    let path = bad.to_str().expect("path").to_string();
    fails(&["analyze", "--cuda", &path], &[&format!("{path} 2:14: unknown name `data`"), "             ^^^^"]);
    fails(&["analyze", "--cuda", "/nonexistent/x.cu"], &["/nonexistent/x.cu: No such file"]);
    fails(
        &["analyze", "--addr", "4*tid", "--op", "LDG.E.32", "--block", "2048"],
        &["block 2048x1x1 has 2048 threads; a block has at most 1024"],
    );
    fails(
        &["analyze", "--addr", "4*tid", "--op", "LDG.E.32", "--block", "0x4"],
        &["--block `0x4`: a size must be at least 1"],
    );
    fails(&["analyze", "--addr", "x", "--op", "LDG.E.32", "--set", "x"], &["--set `x`: expected NAME=VALUE"]);
    fails(&["analyze", "--preset", "nope"], &["unknown preset `nope`"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn presets_are_listed_and_runnable() {
    let (code, out, _) = warpscope(&["presets"]);
    assert_eq!(code, 0);
    assert!(out.lines().count() >= 20, "{out}");
    assert!(out.contains("transpose-padded"));
    // The padded transpose's column read is conflict-free (BPG 9.2.3.3), on any CC from 5.0 on.
    let v = json(&["analyze", "--preset", "transpose-padded", "--cc", "6.0"]);
    let lds = v["instructions"].as_array().expect("list").iter().find(|i| i["op"] == "LDS.32").cloned().expect("LDS");
    assert_eq!((lds["bank_conflicts"].as_u64(), v["cc"].as_str()), (Some(0), Some("6.0")));
    let v = json(&["analyze", "--preset", "coalesced", "--block", "64"]);
    assert_eq!(v["instructions"][0]["warps"].as_u64(), Some(2));
}

#[test]
fn figure_svg_matches_the_golden_files() {
    // The page and the CLI draw the same scene; these files pin the exported picture. Update with
    // UPDATE_EXPECT=1 after looking at the new file.
    let (code, out, err) = warpscope(&["figure", "--preset", "misaligned", "--step", "5"]);
    assert_eq!(code, 0, "{err}");
    expect_test::expect_file!["golden/misaligned-step5.svg"].assert_eq(&out);
    let (code, out, err) =
        warpscope(&["figure", "--preset", "transpose-naive", "--instr", "3", "--step", "3", "--theme", "dark"]);
    assert_eq!(code, 0, "{err}");
    expect_test::expect_file!["golden/transpose-naive-lds-step3-dark.svg"].assert_eq(&out);
}

#[test]
fn figure_writes_png_and_numbered_frames() {
    let dir = std::env::temp_dir().join(format!("warpscope-fig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let png = dir.join("f.png");
    let (code, _, err) =
        warpscope(&["figure", "--preset", "misaligned", "--format", "png", "-o", png.to_str().expect("path")]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&png).expect("png written");
    assert_eq!(&bytes[1..4], b"PNG");
    // 2x the 1200 px scene width.
    assert_eq!(u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]), 2400);
    // --step all: one frame per step plus the start, for a slide build (5 sectors -> 6 frames).
    let base = dir.join("frame.svg");
    let (code, out, err) =
        warpscope(&["figure", "--preset", "misaligned", "--step", "all", "-o", base.to_str().expect("path")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote 6 frames"), "{out}");
    assert!(dir.join("frame-00.svg").exists() && dir.join("frame-05.svg").exists());
    // -o FILE.zip: the same six frames, as one archive, each byte for byte the separate file.
    let zip = dir.join("frames.zip");
    let (code, out, err) =
        warpscope(&["figure", "--preset", "misaligned", "--step", "all", "-o", zip.to_str().expect("path")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote 6 frames in"), "{out}");
    let bytes = std::fs::read(&zip).expect("zip written");
    let archive = rawzip::ZipArchive::from_slice(&bytes).expect("a zip archive");
    let mut entries = archive.entries();
    let mut names = Vec::new();
    while let Some(e) = entries.next_entry().expect("entry") {
        let name = e.file_path().try_normalize().expect("name").as_ref().to_string();
        let data = archive.get_entry(e.wayfinder()).expect("data").data().to_vec();
        let file = name.replace("frames-", "frame-");
        assert_eq!(data, std::fs::read(dir.join(&file)).expect("frame"), "{name}");
        names.push(name);
    }
    assert_eq!(names, (0..6).map(|k| format!("frames-{k:02}.svg")).collect::<Vec<_>>());
    fails(&["figure", "--preset", "misaligned", "--step", "9"], &["--step `9`: give 0..5 or all"]);
    fails(
        &["figure", "--preset", "misaligned", "--instr", "2"],
        &["--instr 2: the program has 1 memory instruction(s)"],
    );
    fails(
        &["figure", "--preset", "misaligned", "--step", "all"],
        &["--step all writes one file per step: give -o FILE"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_grades_saved_answers() {
    let dir = std::env::temp_dir().join(format!("warpscope-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let lab_path = concat!(env!("CARGO_MANIFEST_DIR"), "/www/labs/memory.toml");
    let lab = warpscope::teach::lab_file::parse(&std::fs::read_to_string(lab_path).expect("lab")).expect("parses");
    // The teacher's solutions, saved as a student would: every goal passes, exit 0.
    let mut all = warpscope::teach::lab::Answers { lab: lab.title.clone(), ..Default::default() };
    for ex in &lab.exercises {
        all.answers.insert(ex.id.clone(), ex.solution.clone().expect("solution"));
    }
    let good = dir.join("good.json");
    std::fs::write(&good, serde_json::to_string(&all).expect("json")).expect("write");
    let (code, out, err) =
        warpscope(&["check", lab_path, "--answers", good.to_str().expect("path"), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["all_goals_pass"], true);
    assert_eq!(v["goals_met"], v["goals"]);
    // One exercise left as it started: exit 1, and the report says which goal is open.
    all.answers.remove("bank-padding");
    std::fs::write(&good, serde_json::to_string(&all).expect("json")).expect("write");
    let (code, out, _) = warpscope(&["check", lab_path, "--answers", good.to_str().expect("path")]);
    assert_eq!(code, 1);
    assert!(out.contains("✘ the column read (LDS) has no bank conflicts (bank_conflicts == 0): line 13 (LDS.32) does not meet it yet"), "{out}");
    // Bad answer files are input errors (exit 2) with their position.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"answers\": {\"coalescing\": {\"pattern\": 4}}}").expect("write");
    fails(
        &["check", lab_path, "--answers", bad.to_str().expect("path")],
        &["bad.json 1:40: invalid type: integer `4`, expected a string"],
    );
    std::fs::write(&bad, "{\"answers\": {\"nope\": {}}}").expect("write");
    fails(&["check", lab_path, "--answers", bad.to_str().expect("path")], &["no exercise `nope`"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn whole_grids_limits_and_steps() {
    let dir = std::env::temp_dir().join(format!("warpscope-cli-grid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cu = dir.join("v.cu");
    std::fs::write(
        &cu,
        "__global__ void k(const float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) { float x = a[i]; }\n}\n",
    )
    .expect("write");
    let cu = cu.to_str().expect("path");
    // --grid sums every block: 1024 blocks of 32 warps, 4 sectors per warp issue. JSON says how many blocks ran.
    let v = json(&["analyze", "--cuda", cu, "--block", "1024", "--grid", "1024", "--set", "n=1048576"]);
    assert_eq!(v["instructions"][0]["warps"].as_u64(), Some(32_768));
    assert_eq!(v["instructions"][0]["sectors"].as_u64(), Some(32_768 * 4));
    assert_eq!((v["blocks"]["total"].as_u64(), v["blocks"]["executed"].as_u64()), (Some(1024), Some(1)));
    assert_eq!(v["instructions"][0]["ncu_per_request"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], 4.0);
    // --every-block runs them all and agrees.
    let w = json(&["analyze", "--cuda", cu, "--block", "64", "--grid", "40", "--set", "n=2500", "--every-block"]);
    let f = json(&["analyze", "--cuda", cu, "--block", "64", "--grid", "40", "--set", "n=2500"]);
    assert_eq!(w["blocks"]["executed"].as_u64(), Some(40));
    assert_eq!(w["instructions"], f["instructions"]);
    // 2500 threads pass the test: 78 whole warps and one of 4 lanes (1 sector).
    assert_eq!(f["instructions"][0]["warps"].as_u64(), Some(79));
    assert_eq!(f["instructions"][0]["sectors"].as_u64(), Some(78 * 4 + 1));
    // --block-idx: one block, the old behaviour. Block 39 holds threads 2496..2559: 4 pass.
    let one = json(&["analyze", "--cuda", cu, "--block", "64", "--grid", "40", "--set", "n=2500", "--block-idx", "39"]);
    assert_eq!(
        (one["instructions"][0]["warps"].as_u64(), one["instructions"][0]["active_lanes"].as_u64()),
        (Some(1), Some(4))
    );
    fails(
        &["analyze", "--cuda", cu, "--grid", "4", "--block-idx", "4"],
        &["block index (4,0,0) is outside the grid 4x1x1"],
    );

    // --steps gives one issue's detail; --issue picks which (issue 1 = warp 1 of a 64-thread block).
    let s = json(&["analyze", "--cuda", cu, "--block", "64", "--set", "n=64", "--steps", "--issue", "1"]);
    let d = &s["instructions"][0]["detail"];
    assert_eq!((d["warp"].as_u64(), d["pass"].as_u64(), d["report"]["sectors"].as_u64()), (Some(1), Some(0), Some(4)));
    // Warp 1 starts 128 bytes into the array, at the first cudaMalloc-like base.
    assert_eq!(d["report"]["addresses"][0].as_u64(), Some(0x7000_0000_0080));
    assert_eq!(d["report"]["steps"][0]["transactions"].as_array().map(Vec::len), Some(4));

    // An endless loop stops at --max-seconds, and the message says so.
    let inf = dir.join("inf.cu");
    std::fs::write(
        &inf,
        "__global__ void k(float *a) {\n    for (int j = 0; j >= 0; j += 0)\n        a[threadIdx.x] = 0;\n}\n",
    )
    .expect("write");
    fails(
        &["analyze", "--cuda", inf.to_str().expect("path"), "--max-seconds", "0.3"],
        &["2:5", "the analysis stopped at the time limit (0.3 s; the command line's --max-seconds raises it)"],
    );
    fails(&["analyze", "--cuda", cu, "--block", "1024", "--max-memory-mb", "0"], &["--max-memory-mb"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn caches_from_the_command_line() {
    // docs/model.md#the-memory-system, the misaligned copy: one block on one SM reads 40 load sectors, 7 of them L1 hits (each
    // warp's first sector was fetched by the warp before it), and the device flags change the label.
    let dir = std::env::temp_dir().join(format!("warpscope-cli-caches-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("copy.cu");
    std::fs::write(
        &file,
        "__global__ void copy(const float *in, float *out) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    out[i] = in[i + 1];\n}\n",
    )
    .expect("write the kernel");
    let path = file.to_str().expect("utf-8 path");
    let v = json(&["analyze", "--cuda", path, "--block", "256", "--caches", "--sms", "4", "--l2-size", "2MB"]);
    let c = &v["caches"];
    assert_eq!(c["totals"]["l1"][0][0]["sectors"], 40);
    assert_eq!(c["totals"]["l1"][0][0]["hits"], 7);
    assert_eq!(c["label"], "modelled (LRU, lockstep schedule, 1 SM, 1 block per SM, 2 MB L2, 16 ways)");
    assert!(c["metrics"].as_array().expect("metrics").iter().any(|m| m["name"] == "dram__bytes_read.sum"));
    let (code, _, err) = warpscope(&["analyze", "--cuda", path, "--l2-size", "lots"]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("--l2-size `lots`: give bytes, or a size such as 40MB or 1536KB"), "{err}");
    let (_, text, _) = warpscope(&["analyze", "--cuda", path, "--block", "256", "--caches"]);
    assert!(text.contains("L1/TEX: 16 requests, 72 sectors; load hit rate 17.5 % (7 of 40)"), "{text}");
}

/// `cli::call`, what the Python package runs: the process's output byte for byte, texts given in place of
/// files, files written in memory, and the process's error messages.
#[test]
fn call_gives_what_the_process_prints() {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let none = std::collections::HashMap::new;
    let (code, out, _) = warpscope(&["analyze", "--preset", "transpose-naive", "--format", "json"]);
    assert_eq!(code, 0);
    let called = warpscope::cli::call(&args(&["analyze", "--preset", "transpose-naive", "--format", "json"]), none())
        .expect("runs");
    assert_eq!(format!("{}\n", called.text), out);
    assert!(called.files.is_empty() && called.pass);
    // A CUDA text given under a name of its own: no file is read, and errors name it with line:column.
    let kernel = "__global__ void k(float *a) {\n  a[threadIdx.x] = b;\n}\n";
    let inputs = std::collections::HashMap::from([("cuda".to_string(), kernel.to_string())]);
    let err = warpscope::cli::call(&args(&["analyze", "--cuda", "cuda"]), inputs).expect_err("unknown name");
    assert!(err.starts_with("cuda 2:20: unknown name `b`"), "{err}");
    // A figure comes back as the bytes the process writes to standard output.
    let (_, svg, _) = warpscope(&["figure", "--addr", "4*lane", "--op", "LDG.E.32", "--step", "2"]);
    let fig = warpscope::cli::call(&args(&["figure", "--addr", "4*lane", "--op", "LDG.E.32", "--step", "2"]), none())
        .expect("draws");
    assert_eq!(fig.files.len(), 1);
    assert_eq!(format!("{}\n", String::from_utf8(fig.files[0].1.clone()).expect("utf-8")), svg);
    // Flags are the command's: the Python package's keyword arguments.
    let flags = warpscope::cli::flags("analyze");
    let set = flags.iter().find(|f| f.name == "set").expect("--set");
    assert!(set.takes_value && set.repeats);
    assert!(flags.iter().any(|f| f.name == "caches" && !f.takes_value));
    assert!(warpscope::cli::call(&args(&["analyze", "--adr", "4*lane"]), none()).is_err());
}
