//! The memory system across warps and blocks (docs/model.md#the-memory-system): kernel totals and per-instruction hit counts for
//! the canonical examples of J, at sizes a debug build runs quickly, each number derived in its comment from
//! J's rules ("model" below means docs/model.md#the-memory-system, "The model" and "Exact reading").
#![cfg(not(target_arch = "wasm32"))]

use warpscope::analysis::caches::{CacheResult, CacheSettings};
use warpscope::lang::Lang;
use warpscope::model::arch::memsys::{residency, Preset};
use warpscope::model::cache::Totals;
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;
use warpscope::Cc;

const COPY: &str = "__global__ void copy(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}";

const MISALIGNED: &str = "__global__ void copy(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i + 1];
}";

const NAIVE: &str = "__global__ void sgemm(const float *A, const float *B, float *C, int M, int N, int K) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += A[r * K + k] * B[k * N + c];
    C[r * N + c] = sum;
}";

fn run(cc: Cc, text: &str, block: &str, grid: &str, sets: &[&str], block_idx: Option<Dim3>) -> CacheResult {
    let sc = Scenario {
        cc,
        lang: Lang::Cuda,
        text: text.into(),
        block: Dim3::parse(block, "block").expect("block"),
        grid: Dim3::parse(grid, "grid").expect("grid"),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        block_idx,
        caches: Some(CacheSettings::default()),
        ..Scenario::default()
    };
    let r = sc.run().unwrap_or_else(|e| panic!("{}:{}: {}", e.error.line, e.error.column, e.error.message));
    r.caches.expect("the run models the caches")
}

/// The whole grid of `sc` (a CUDA scenario) through the memory system with `settings`, its schedule check
/// included; `replay` false plays every SM's every wave (docs/model.md#the-memory-system).
fn grid_run(sc: Scenario, settings: &CacheSettings, replay: bool) -> CacheResult {
    let sc = Scenario { lang: Lang::Cuda, caches: Some(settings.clone()), ..sc };
    let mut a = sc.analysis().expect("lowers");
    a.replay = replay;
    let mut control = warpscope::scenario::Deadline::new(60.0);
    a.caches(None, settings, &mut control).expect("runs")
}

fn loads(t: &[[warpscope::model::cache::Traffic; 4]; 2]) -> (u64, u64) {
    let l = Totals::sum(t, &[0]);
    (l.hits, l.sectors)
}

const A100: Cc = Cc::new(8, 0);

#[test]
fn coalesced_copy_reads_and_writes_each_byte_once() {
    // J: "Coalesced copy out[i] = in[i], floats, N = 2^24, block 256: L1 load hit rate 0 %, DRAM read = DRAM
    // write = 64 MiB (2 x N x 4 in all), whatever the schedule." Here N = 2^20 (grid 4096): 4 MiB each way.
    let c = run(A100, COPY, "256", "4096", &[], None);
    let t = &c.totals;
    assert_eq!(loads(&t.l1), (0, 1 << 20 >> 3));
    assert_eq!(t.dram_read_bytes, 4 << 20);
    // J step 7: bytes written = dirty sectors evicted plus those still dirty at the end (the latter also apart).
    assert_eq!(t.dram_write_bytes, 4 << 20);
    assert!(t.dirty_at_end_bytes <= t.dram_write_bytes);
    // The bounds: every loaded sector is read first; every written byte is distinct.
    assert_eq!(t.compulsory_read_bytes, 4 << 20);
    assert_eq!(t.unique_written_bytes, 4 << 20);
    assert!(c.label.starts_with("modelled (LRU, lockstep schedule, 108 SMs, 8 blocks per SM, 40 MB L2, 16 ways"));
}

#[test]
fn misaligned_copy_hits_l1_on_the_sector_the_warp_before_fetched() {
    // J: "per block of 8 warps 40 load sectors, 7 of them L1 hits (17.5 %): each warp's first sector was
    // fetched by the warp before it. DRAM read N x 4 + 32 bytes."
    let one = run(A100, MISALIGNED, "256", "4096", &[], Some(Dim3 { x: 5, y: 0, z: 0 }));
    assert_eq!(loads(&one.totals.l1), (7, 40));
    assert_eq!(one.instructions[0].traffic.l2.sectors, 33);
    assert_eq!(one.sms, 1);
    assert!(one.notes.iter().any(|n| n.id == "cache-one-block"));
    let grid = run(A100, MISALIGNED, "256", "4096", &[], None);
    assert_eq!(grid.totals.dram_read_bytes, (1 << 20) * 4 + 32);
    assert_eq!(loads(&grid.totals.l1), (7 * 4096, 40 * 4096));
}

#[test]
fn fermi_fills_whole_lines() {
    // J, 2.x: "a miss fills the whole line"; "the L1 counters count the 32-byte sectors the lanes touch; a
    // whole-line fill sends the line's 4 sectors to L2". Warp 0 of the misaligned copy (bytes 4..131) misses
    // two lines and fills both (8 sectors to L2). Warp k (bytes 128k+4 .. 128k+131) then finds its first line
    // whole, filled by warp k-1: 4 hits, where 8.0 has 1; its second line misses and is filled (4 sectors).
    // 7 x 4 = 28 hits of 40 sectors; 8 + 7 x 4 = 36 sectors reach L2, where 8.0 sends 33.
    let one = run(Cc::new(2, 0), MISALIGNED, "256", "1", &[], None);
    assert_eq!(loads(&one.totals.l1), (28, 40));
    assert_eq!(one.instructions[0].traffic.l2.sectors, 36);
    // J step 8: the compulsory read counts the sectors the lanes load before any write, also those a line
    // fill brought in and a later warp hit: in[1..256] is bytes 4..1027, sectors 0..32: 33 x 32 bytes.
    assert_eq!(one.totals.compulsory_read_bytes, 33 * 32);
    // 64 blocks: in[1..16384], bytes 4..65539, 2,049 sectors (an independent implementation of J agrees).
    let grid = run(Cc::new(2, 0), MISALIGNED, "256", "64", &[], None);
    assert_eq!(grid.totals.compulsory_read_bytes, 2049 * 32);
}

#[test]
fn naive_sgemm_reuses_rows_of_a_and_b_in_l1() {
    // J: the naive SGEMM's L1 load hit rate is 95.0 %. Per block of 32x32 and per k: each warp (one row r,
    // 32 columns) reads one sector of A (a new one every 8 k: 7 of 8 hit) and the same 4 sectors of B as the
    // other 31 warps (31 of 32 warps hit): A 32 sectors with 28 hits, B 128 with 124: 152 of 160 = 95 %.
    // M = N = K = 256: 64 blocks, each on its own SM (A100: 108 SMs), 256 values of k.
    let c = run(A100, NAIVE, "32x32", "8x8", &["M=256", "N=256", "K=256"], None);
    let per_block_k = 64 * 256;
    assert_eq!(loads(&c.totals.l1), (152 * per_block_k, 160 * per_block_k));
    let a = &c.instructions[0].traffic;
    let b = &c.instructions[1].traffic;
    assert_eq!((a.l1.hits, a.l1.sectors), (28 * per_block_k, 32 * per_block_k));
    assert_eq!((b.l1.hits, b.l1.sectors), (124 * per_block_k, 128 * per_block_k));
    // L2 sees the 8 missing sectors per block and k: 131,072; DRAM reads A and B once (2 x 256 KB, the
    // compulsory bound; 40 MB of L2 holds both), so 16,384 of them miss.
    let l2 = Totals::sum(&c.totals.l2, &[0]);
    assert_eq!((l2.hits, l2.sectors), (131_072 - 16_384, 131_072));
    assert_eq!(c.totals.dram_read_bytes, 2 * 256 * 1024);
    assert_eq!(c.totals.compulsory_read_bytes, 2 * 256 * 1024);
    // C: 256 x 256 floats written once, still dirty in L2 at the end.
    assert_eq!(c.totals.unique_written_bytes, 256 * 1024);
    assert_eq!(c.totals.dirty_at_end_bytes, 256 * 1024);
    // With one block per SM instead of 8 (fewer than 108 blocks: every block is alone on its SM either way),
    // nothing changes: not sensitive to the schedule.
    let s = c.schedule.expect("a grid run has a schedule check");
    assert!(!s.sensitive);
}

#[test]
fn residency_and_carveout_follow_step_one() {
    // J step 1 on the A100 (8.0: 2048 threads, 32 blocks per SM, 192 KB unified, carveouts 0, 8, 16, 32, 64,
    // 100, 132, 164 KB): 1024-thread blocks with 8 KB of shared memory: R0 = min(32, 2048/1024) = 2; 2 x 8 =
    // 16 KB fits the 16 KB carveout; L1 = 192 - 16 = 176 KB.
    let r = residency(A100, &Preset::of(A100), 1024, 8 * 1024);
    assert_eq!((r.r0, r.r, r.carveout_bytes, r.l1_bytes), (2, 2, Some(16 * 1024), 176 * 1024));
    // V100 (7.0: capacities up to 96 KB of 128): 256 threads with 48 KB each: R0 = 8, 8 x 48 KB fits no
    // carveout, so the largest (96 KB) and R = 96 / 48 = 2; L1 = 32 KB.
    let v = Cc::new(7, 0);
    let r = residency(v, &Preset::of(v), 256, 48 * 1024);
    assert_eq!((r.r0, r.r, r.carveout_bytes, r.l1_bytes), (8, 2, Some(96 * 1024), 32 * 1024));
    // Before 7.0, R = R0 and L1 is the fixed size (J's table: 5.2 has 24 KB).
    let m = Cc::new(5, 2);
    let r = residency(m, &Preset::of(m), 256, 48 * 1024);
    assert_eq!((r.r0, r.r, r.carveout_bytes, r.l1_bytes), (8, 8, None, 24 * 1024));
}

#[test]
fn uncached_loads_on_maxwell_never_hit_l1() {
    // J: 5.0 caches only read-only loads in L1; an ordinary load "sends all its sectors to L2 ... with no
    // hits". The misaligned copy's block: 40 load sectors, 0 hits, all 40 reach L2 (one request per line).
    let one = run(Cc::new(5, 0), MISALIGNED, "256", "1", &[], None);
    assert_eq!(loads(&one.totals.l1), (0, 40));
    assert_eq!(one.instructions[0].traffic.l2.sectors, 40);
}

#[test]
fn a_given_pointer_leaves_the_others_at_their_defaults() {
    // Each pointer's default base is the one its position gives it (0x700000000000, then 256 MB apart),
    // whatever else is set: giving `in` its own default keeps `out` at the second base, so the copy's stores
    // never land on the lines it loads.
    let sc =
        Scenario { lang: Lang::Cuda, text: COPY.into(), sets: vec!["in=0x700000000000".into()], ..Scenario::default() };
    let t = sc.trace(1).expect("the copy runs");
    let first = |k: usize| t.items[k].issues[0].addrs.0[0].expect("lane 0 is active");
    assert_eq!(first(0), 0x7000_0000_0000);
    assert_eq!(first(1), 0x7000_1000_0000);
    // A given value inside another pointer's default region says so.
    let sc = Scenario { sets: vec!["in=0x700010000040".into()], ..sc };
    let r = sc.run().expect("the copy runs");
    let n = r.notes.iter().find(|n| n.id == "cuda-overlapping-bases").expect("the overlap is noted");
    assert!(n.text.contains("`in` = 0x700010000040 is inside `out`'s default region"), "{}", n.text);
}

#[test]
fn the_device_setting_reads_sizes_and_names_its_errors() {
    use warpscope::analysis::caches::parse_size;
    assert_eq!(parse_size("40MB"), Ok(40 << 20));
    assert_eq!(parse_size("1.5MB"), Ok(3 << 19));
    assert_eq!(parse_size("1536KB"), Ok(1536 << 10));
    assert_eq!(parse_size("4096"), Ok(4096));
    assert!(parse_size("lots").is_err());
    assert!(parse_size("64").is_err());
    let c = CacheSettings::parse("on sms=20 l2=2MB ways=8").expect("valid").expect("on");
    assert_eq!((c.sms, c.l2_bytes, c.l2_ways), (Some(20), Some(2 << 20), Some(8)));
    assert_eq!(CacheSettings::text(Some(&c)), "on sms=20 l2=2MB ways=8");
    assert_eq!(CacheSettings::parse("off"), Ok(None));
    assert_eq!(
        CacheSettings::parse("on colour=red").unwrap_err(),
        "caches: unknown setting `colour` (sms, l2, ways, blocks_per_sm, carveout_kb, shared_bytes)"
    );
}

#[test]
fn out_of_range_device_settings_are_errors_naming_the_range() {
    use warpscope::scenario::Field;
    // Each error names the setting, its value, the range and the CC's preset (docs/model.md#device-presets);
    // nothing is clamped. 8.0's preset is the A100: 108 SMs, 40 MB of L2 in 16 ways, 32 blocks per SM, and
    // shared-memory carveouts of 0, 8, 16, 32, 64, 100, 132 and 164 KB (the CUDA C++ Programming Guide's
    // compute-capability table).
    let check = |text: &str, cc: Cc| CacheSettings::parse(text).expect("parses").expect("on").check(cc);
    assert_eq!(
        check("on sms=0", A100).unwrap_err(),
        "SMs 0 is out of range: give 1 to 1024 (8.0's example GPU, the A100, has 108)"
    );
    assert_eq!(
        check("on ways=999", A100).unwrap_err(),
        "L2 ways 999 is out of range: give 1 to 128 (8.0's example GPU, the A100, has 16)"
    );
    // 40 MB in 24 ways is 13,653.3 sets: not a whole number.
    assert_eq!(
        check("on l2=40MB ways=24", A100).unwrap_err(),
        "L2 size 40 MB is not a whole number of sets of 24 ways of 128-byte lines: give a multiple of 3 KB"
    );
    assert_eq!(
        check("on l2=512MB", A100).unwrap_err(),
        "L2 size 512 MB is out of range: give 2 KB to 256 MB with 16 ways (8.0's example GPU, the A100, has 40 MB)"
    );
    assert_eq!(
        check("on blocks_per_sm=0", A100).unwrap_err(),
        "blocks per SM 0 is out of range: CC 8.0 holds 1 to 32 resident blocks per SM"
    );
    assert_eq!(
        check("on carveout_kb=64", Cc::new(5, 2)).unwrap_err(),
        "a carveout of 64 KB: CC 5.2's L1 is not shared with shared memory (it is 24 KB), so there is no carveout \
         to set (7.0 and later)"
    );
    assert_eq!(
        check("on carveout_kb=99", A100).unwrap_err(),
        "a carveout of 99 KB is not one CC 8.0 offers: it chooses among 0, 8, 16, 32, 64, 100, 132, 164 KB of \
         shared memory per SM"
    );
    assert!(check("on sms=20 l2=2MB ways=8 carveout_kb=100 blocks_per_sm=32", A100).is_ok());
    // A value too large for the setting's type is an error when it is read, not cut.
    assert_eq!(
        CacheSettings::parse("on sms=4294967296").unwrap_err(),
        "caches: sms `4294967296` is too large for this setting"
    );
    // Through a scenario, the error belongs to the memory system's field.
    let sc = Scenario {
        cc: A100,
        lang: Lang::Cuda,
        text: COPY.into(),
        caches: CacheSettings::parse("on ways=0").expect("parses"),
        ..Scenario::default()
    };
    let e = sc.run().expect_err("0 ways is refused");
    assert_eq!(e.field, Field::Caches);
    assert!(e.error.message.starts_with("L2 ways 0 is out of range"), "{}", e.error.message);
    // Called directly, the model refuses the same settings by the same words (it clamped them to 1 way before).
    let a = Scenario { caches: None, ..sc.clone() }.analysis().expect("lowers");
    let mut control = warpscope::scenario::Deadline::new(60.0);
    let zero_ways = CacheSettings { l2_ways: Some(0), ..CacheSettings::default() };
    match a.caches(None, &zero_ways, &mut control) {
        Err(warpscope::program::grid::RunError::Settings(m)) => {
            assert!(m.starts_with("L2 ways 0 is out of range"), "{m}")
        }
        r => panic!("not refused: {:?}", r.map(|c| c.totals)),
    }
    // A block using more shared memory than a CC gives one block has no residency to model (8.0: 163 KB).
    let sc = Scenario { caches: CacheSettings::parse("on shared_bytes=200000").expect("parses"), ..sc };
    let e = sc.run().expect_err("the block is too large");
    assert_eq!(
        e.error.message,
        "shared memory per block 200000 bytes is out of range: CC 8.0 gives a block at most 166912 bytes"
    );
}

#[test]
fn a_set_value_wider_than_its_parameter_is_an_error_at_the_declaration() {
    // `int n` is 32 bits: 2^32 would be cut to 0 and move every address that uses it.
    let k = "__global__ void k(float *p, int n) {\n    p[threadIdx.x + n] = 0;\n}";
    let sc = Scenario { lang: Lang::Cuda, text: k.into(), sets: vec!["n=4294967296".into()], ..Scenario::default() };
    let e = sc.run().expect_err("too wide");
    assert_eq!(e.error.message, "--set n=4294967296 does not fit in `n`, a 32-bit integer");
    assert_eq!((e.error.line, e.error.column), (1, 29), "at the declaration `int n`");
    // The largest value it holds runs; so does -1 (signed).
    for v in ["n=2147483647", "n=-1", "n=4294967295"] {
        let sc = Scenario { sets: vec![v.into()], ..sc.clone() };
        assert!(sc.run().is_ok(), "{v}");
    }
    // PTX: a `.u32` parameter is 32 bits whatever the kernel's name says; the error reaches the access it moves.
    let ptx = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{\n\
               .reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\n\
               mov.u32 %r2, %tid.x;\nadd.s32 %r3, %r2, %r1;\nmul.wide.s32 %rd2, %r3, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
               st.global.f32 [%rd3], 0f00000000;\nret;\n}\n";
    let p = |n: &str| Scenario {
        lang: Lang::Ptx,
        text: ptx.into(),
        sets: vec!["p=0x10000".into(), n.into()],
        ..Scenario::default()
    };
    let e = p("n=4294967296").run().expect_err("too wide");
    assert!(
        e.error.message.ends_with("parameter n is 32 bits wide; --set n=4294967296 does not fit in it"),
        "{}",
        e.error.message
    );
    assert_eq!(e.error.line, 14, "at the store whose address it moves");
    assert!(p("n=4294967295").run().is_ok());
    // No kernel value is wider than 64 bits.
    let sc = Scenario { sets: vec!["n=0x1000000000000000000".into()], ..sc };
    let e = sc.run().expect_err("wider than 64 bits");
    assert!(e.error.message.contains("does not fit in 64 bits"), "{}", e.error.message);
}

#[test]
fn the_drawn_issue_knows_where_each_sector_was_served() {
    use warpscope::model::cache::Served;
    // J, the misaligned copy: each warp's first sector is the one the warp before fetched (an L1 hit); the
    // other four are first reads, from DRAM. Warp 0 of block 0 has no warp before it: five DRAM reads.
    let c = run(A100, MISALIGNED, "256", "64", &[], None);
    let base = c.served[&(0, 1, 0)][0].0;
    assert_eq!(
        c.served[&(0, 1, 0)],
        vec![
            (base, Served::L1),
            (base + 32, Served::Dram),
            (base + 64, Served::Dram),
            (base + 96, Served::Dram),
            (base + 128, Served::Dram)
        ]
    );
    assert!(c.served[&(0, 0, 0)].iter().all(|&(_, s)| s == Served::Dram));
    assert_eq!(c.served[&(0, 0, 0)].len(), 5);
    // The store (site 1) writes through to L2: every sector is served there.
    assert!(c.served[&(1, 3, 0)].iter().all(|&(_, s)| s == Served::L2));
}

#[test]
fn kepler_reads_ordinary_loads_through_l2_and_ldg_through_the_read_only_cache() {
    // J: "3.5/3.7 ... LDG/.CI through the 48 KB read-only cache instead"; ordinary loads are nvcc's generic LD
    // (the Kepler instruction table: LDG is the non-coherent load), cached in L1 only with -dlcm=ca. A 3-point
    // blur, 16 blocks of 256: without __ldg no load hits; with it each float's second and third reads hit
    // (624 + 640 of the 1,792 load sectors: 70.5357 %).
    let plain = "__global__ void blur(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    out[i] = in[i - 1] + in[i] + in[i + 1];
}";
    let ldg = plain.replace("in[i - 1] + in[i] + in[i + 1]", "__ldg(&in[i - 1]) + __ldg(&in[i]) + __ldg(&in[i + 1])");
    let kepler = Cc::new(3, 5);
    let c = run(kepler, plain, "256", "16", &[], None);
    assert_eq!(c.instructions[0].op, "LD.E.32");
    assert_eq!(loads(&c.totals.l1), (0, 1792));
    let c = run(kepler, &ldg, "256", "16", &[], None);
    assert_eq!(c.instructions[0].op, "LDG.E.CONSTANT.32");
    assert_eq!(loads(&c.totals.l1), (1264, 1792));
}

#[test]
fn the_charts_short_counts_round_before_they_choose_the_unit() {
    use warpscope::analysis::caches::short_count;
    // Three significant digits: the arrows of the memory chart are short; their tips give the exact counts.
    let cases = [
        (9_999, "9,999"),
        (10_000, "10.0 K"),
        (99_995, "100 K"),
        (999_999, "1.00 M"),
        (1_050_624, "1.05 M"),
        (67_141_632, "67.1 M"),
        (999_500_000, "1.00 G"),
        (1_073_741_824, "1.07 G"),
    ];
    for (n, text) in cases {
        assert_eq!(short_count(n), text, "{n}");
    }
}

#[test]
fn a_block_translated_backwards_from_its_class_moves_its_lines_back() {
    // `blockIdx.x + blockIdx.y >= 3` makes block (3,0) the first of its class, and block (2,1) its member one
    // block back in x: its lines are the first block's minus one. The same kernel with the block's column
    // computed through a division (no proof: every block runs itself) must give every figure the same. L2 of
    // 3 sets of one way (384 bytes): a line's set moves with it, so a line put anywhere else changes the hits.
    let moved = "__global__ void k(float *a, float *x, float *out) {
    if (blockIdx.x + blockIdx.y >= 3) {
        float v = __ldcg(&a[blockIdx.x * 32 + threadIdx.x]);
        float w = __ldcg(&x[threadIdx.x]);
        out[threadIdx.x] = v + w;
    }
}";
    let each = moved.replace("blockIdx.x * 32", "blockIdx.x * (blockIdx.x + 1) / (blockIdx.x + 1) * 32");
    let settings = CacheSettings {
        sms: Some(1),
        l2_bytes: Some(384),
        l2_ways: Some(1),
        blocks_per_sm: Some(1),
        ..Default::default()
    };
    let with = |text: &str| {
        let sc = Scenario {
            cc: A100,
            text: text.into(),
            block: Dim3 { x: 32, y: 1, z: 1 },
            grid: Dim3 { x: 8, y: 8, z: 1 },
            ..Scenario::default()
        };
        grid_run(sc, &settings, true)
    };
    let (translated, run) = (with(moved), with(&each));
    // 58 of 64 blocks pass the test (all but the six with x + y < 3): 58 loads of `a` and 58 of `x`, one line
    // each, none cached in L1 (.cg).
    assert_eq!(translated.totals.l2[0][0].requests, 116);
    assert_eq!(translated.totals, run.totals);
    let traffic = |r: &CacheResult| r.instructions.iter().map(|i| i.traffic).collect::<Vec<_>>();
    assert_eq!(traffic(&translated), traffic(&run));
    assert_eq!(translated.schedule, run.schedule);
}

#[test]
fn replayed_waves_give_the_figures_of_played_ones() {
    // docs/model.md#the-memory-system: an SM whose blocks in a wave are a translation of another SM's, and whose
    // caches hold none of the lines it is about to touch early enough to hit them, replays the other's record
    // instead of playing. Every figure (totals, per instruction, the schedule check, the drawn issue's served
    // sectors) must be the one playing every wave gives, on kernels whose waves reuse lines across waves
    // (naive SGEMM's rows of A), store through L1, go through 3.5's read-only cache, fill whole lines (2.0),
    // translate backwards, or do atomics; with small L1s (the A100 with a 164 KB carveout: 28 KB, 56 ways) and
    // few SMs, so that old lines stay in L1 across waves.
    let tiled = include_str!("../benches/sgemm.cu");
    let transpose = "__global__ void t(const float *in, float *out, int n) {
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        out[x * n + y + j] = in[(y + j) * n + x];
}";
    let blur = "__global__ void blur(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < 16; k++)
        s += __ldg(&in[i + 33 * k]);
    out[i] = s;
}";
    let moved = "__global__ void k(float *a, float *x, float *out) {
    if (blockIdx.x + blockIdx.y >= 3) {
        float v = a[blockIdx.x * 32 + threadIdx.x];
        float w = x[threadIdx.x];
        out[blockIdx.y * 32 + threadIdx.x] = v + w;
    }
}";
    let hist = "__global__ void hist(int *bins, const int *in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 8; k++)
        atomicAdd(&bins[(in[i] + k) % 64], 1);
}";
    let small = |sms: u32, carveout_kb: Option<u64>, r: u32| CacheSettings {
        sms: Some(sms),
        carveout_bytes: carveout_kb.map(|k| k << 10),
        blocks_per_sm: Some(r),
        ..Default::default()
    };
    // The last field: whether some SM wave must be replayed (the others check that nothing changes where few or
    // none are).
    type Case<'a> = (Cc, &'a str, &'a str, &'a str, Vec<&'a str>, CacheSettings, bool);
    let cases: Vec<Case> = vec![
        (A100, NAIVE, "16x16", "8x8", vec!["M=128", "N=128", "K=128"], small(3, Some(164), 2), false),
        (A100, NAIVE, "32x32", "8x8", vec!["M=256", "N=256", "K=256"], small(5, None, 2), true),
        (A100, tiled, "32x32", "6x6", vec!["N=192"], small(4, Some(164), 1), true),
        (A100, transpose, "32x8", "8x8", vec!["n=256"], small(3, Some(164), 2), false),
        (Cc::new(3, 5), blur, "128", "48", vec![], small(4, None, 2), true),
        (Cc::new(2, 0), NAIVE, "16x16", "8x8", vec!["M=128", "N=128", "K=128"], small(3, None, 2), false),
        (A100, moved, "32", "16x8", vec![], small(3, Some(164), 2), false),
        (Cc::new(7, 0), hist, "128", "24", vec![], small(4, None, 2), true),
    ];
    for (cc, text, block, grid, sets, settings, replays) in cases {
        let with = |replay: bool| {
            let sc = Scenario {
                cc,
                text: text.into(),
                block: Dim3::parse(block, "block").expect("block"),
                grid: Dim3::parse(grid, "grid").expect("grid"),
                sets: sets.iter().map(|s| s.to_string()).collect(),
                block_idx: Some(Dim3 { x: 1, y: 0, z: 0 }),
                ..Scenario::default()
            };
            grid_run(sc, &settings, replay)
        };
        let (played, replayed) = (with(false), with(true));
        assert_eq!(played.replayed, 0, "{text}");
        assert!(!replays || replayed.replayed > 0, "no wave was replayed: {text}");
        assert_eq!(replayed.totals, played.totals, "{text}");
        assert_eq!(replayed.instructions, played.instructions, "{text}");
        assert_eq!(replayed.schedule, played.schedule, "{text}");
        assert_eq!(replayed.served, played.served, "{text}");
    }
}

#[test]
fn the_figures_do_not_depend_on_the_number_of_threads() {
    // docs/model.md#the-memory-system: SMs' L1 parts run on several threads and L2 serves their requests in the
    // model's order, so every figure, the schedule check and the drawn issue's served sectors are the same for 1, 2
    // and 8 threads. Each case has enough warp issues per round to run its SMs on threads: the naive SGEMM at
    // N = 256 (64 blocks, one wave, 2,048 warp issues a step); a 64-point sum with __ldg on 3.5, through the
    // read-only cache (512 a step); a histogram's 128 atomics per thread, written through to L2 (256 a step).
    let blur = "__global__ void blur(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < 64; k++)
        s += __ldg(&in[i + 33 * k]);
    out[i] = s;
}";
    let hist = "__global__ void hist(int *bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 128; k++)
        atomicAdd(&bins[(i * 7 + k) % 64], 1);
}";
    let cases: [(Cc, &str, &str, &str, &[&str]); 3] = [
        (A100, NAIVE, "32x32", "8x8", &["M=256", "N=256", "K=256"]),
        (Cc::new(3, 5), blur, "256", "64", &[]),
        (Cc::new(7, 0), hist, "256", "32", &[]),
    ];
    for (cc, text, block, grid, sets) in cases {
        let with = |threads: usize| {
            let mut sc = Scenario {
                cc,
                lang: Lang::Cuda,
                text: text.into(),
                block: Dim3::parse(block, "block").expect("block"),
                grid: Dim3::parse(grid, "grid").expect("grid"),
                sets: sets.iter().map(|s| s.to_string()).collect(),
                block_idx: Some(Dim3 { x: 1, y: 0, z: 0 }),
                caches: Some(CacheSettings::default()),
                ..Scenario::default()
            };
            sc.limits.threads = threads;
            let a = sc.analysis().expect("lowers");
            let mut control = warpscope::scenario::Deadline::new(60.0);
            a.caches(None, &CacheSettings::default(), &mut control).expect("runs")
        };
        let one = with(1);
        assert!(Totals::sum(&one.totals.l1, &[0, 1, 2, 3]).sectors > 0 && !one.served.is_empty(), "{text}");
        assert_eq!(with(2), one, "2 threads, {text}");
        assert_eq!(with(8), one, "8 threads, {text}");
    }
}

#[test]
fn a_whole_grid_holds_no_more_than_the_caches_and_the_memory_it_touches() {
    use warpscope::scenario::{Field, Limits};
    // The largest legal grid of a one-line kernel: 4,294,836,225 blocks are made as they are needed, so the run
    // starts at once and stops at its time limit with a message, holding only the caches and the record of the
    // memory it touched.
    let one = "__global__ void k(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 0; }";
    let mut sc = Scenario {
        cc: A100,
        lang: Lang::Cuda,
        text: one.into(),
        block: Dim3::parse("256", "block").expect("block"),
        grid: Dim3::parse("65535x65535", "grid").expect("grid"),
        caches: Some(CacheSettings::default()),
        ..Scenario::default()
    };
    sc.limits = Limits { max_seconds: 0.5, ..Limits::default() };
    let e = sc.run().expect_err("4 billion blocks do not finish in half a second");
    assert_eq!(e.field, Field::Limit);
    assert!(e.error.message.starts_with("the run reached the time limit (0.5 s)"), "{}", e.error.message);
    assert!(e.error.message.contains("of 4,294,836,225 blocks"), "{}", e.error.message);
    // Each block writes a MiB page of its own (a 4 MiB stride): 256 pages of the record, a 4 KiB bit map of the
    // sectors seen and one of those written in full each (8,256 bytes with the page's own), 2,113,536 bytes in
    // all, over a 1 MB limit.
    let stride = "__global__ void k(float *p) { p[blockIdx.x * 1048576 + threadIdx.x] = 0; }";
    let mut sc = Scenario { text: stride.into(), grid: Dim3::parse("256", "grid").expect("grid"), ..sc };
    sc.limits = Limits { max_memory_mb: 1, ..Limits::default() };
    let e = sc.run().expect_err("over the limit");
    assert_eq!(e.field, Field::Limit);
    assert!(
        e.error
            .message
            .starts_with("the memory system's record of the memory this grid touches reached the limit of 1 MB"),
        "{}",
        e.error.message
    );
    sc.limits = Limits { max_memory_mb: 3, ..Limits::default() };
    assert!(sc.run().is_ok(), "within 3 MB");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// docs/model.md#the-memory-system: replaying an SM's wave changes no figure, whatever the kernel's reuse
    /// across blocks and waves, its stores, its cache path (3.5's read-only cache, 2.0's whole lines) and the device.
    /// The saved cases (caches.proptest-regressions) include one where a held line is met one allocation before
    /// it would have been evicted: replaying that wave would change the figures.
    #[test]
    fn replay_never_changes_a_figure(
        cc in proptest::sample::select(vec![Cc::new(2, 0), Cc::new(3, 5), Cc::new(7, 0), Cc::new(8, 0)]),
        bx in proptest::sample::select(vec![0i64, 32, 64, 96, 128, 512, 1024]),
        by in proptest::sample::select(vec![0i64, 32, 256, 4096]),
        tx in 1i64..3,
        steps in 1i64..17,
        stride in proptest::sample::select(vec![1i64, 8, 32, 33, 128, 1024]),
        ldg in proptest::bool::ANY,
        store_x in proptest::sample::select(vec![0i64, 32, 64]),
        grid in (1u32..9, 1u32..5),
        sms in 1u32..5,
        r in 1u32..4,
        small_l1 in proptest::bool::ANY,
    ) {
        let load = if ldg { "__ldg(&a[i + j * S])" } else { "a[i + j * S]" };
        let text = format!("__global__ void k(const float *a, float *b) {{
    int i = blockIdx.x * {bx} + blockIdx.y * {by} + threadIdx.x * {tx};
    float s = 0.0f;
    for (int j = 0; j < {steps}; j++)
        s += {load};
    b[blockIdx.x * {store_x} + threadIdx.x] = s;
}}").replace('S', &stride.to_string());
        let settings = CacheSettings {
            sms: Some(sms),
            blocks_per_sm: Some(r),
            carveout_bytes: (small_l1 && cc == A100).then_some(164 << 10),
            ..Default::default()
        };
        let with = |replay: bool| {
            let sc = Scenario {
                cc,
                text: text.clone(),
                block: Dim3 { x: 128, y: 1, z: 1 },
                grid: Dim3 { x: grid.0, y: grid.1, z: 1 },
                ..Scenario::default()
            };
            grid_run(sc, &settings, replay)
        };
        let (played, replayed) = (with(false), with(true));
        proptest::prop_assert_eq!(&replayed.totals, &played.totals, "{}", text);
        proptest::prop_assert_eq!(&replayed.instructions, &played.instructions, "{}", text);
        proptest::prop_assert_eq!(&replayed.schedule, &played.schedule, "{}", text);
    }
}
