//! Data-driven engine cases. Each case gives the inputs, the expected numbers and where the numbers come from
//! (a guide section or figure, a forum answer by NVIDIA staff, or "derived from rule X" of docs/model.md with the
//! arithmetic). One `check` helper is the only caller of the API.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::lang::warp_from_expr;
use warpscope::model::arch::SharedModel;
use warpscope::{analyze, BankMode, Cc, Config, Cost, Instr, L1Choice, LaneSet, Report, SpaceTag, Windows};

/// What a case expects.
enum Expect {
    /// requests, lines, sectors, transactions, bytes per transaction.
    Mem(u32, u32, u32, u32, u32),
    /// wavefronts, ideal wavefronts, bank conflicts, conflict degree.
    Banks(u32, u32, u32, u32),
}

struct Case {
    cc: &'static str,
    op: &'static str,
    addr: &'static str,
    mask: u32,
    cfg: Config,
    expect: Expect,
    /// Where the expected numbers come from.
    source: &'static str,
}

fn case(cc: &'static str, op: &'static str, addr: &'static str, expect: Expect, source: &'static str) -> Case {
    Case { cc, op, addr, mask: u32::MAX, cfg: Config::default(), expect, source }
}

impl Case {
    fn mask(mut self, mask: u32) -> Case {
        self.mask = mask;
        self
    }
    fn l1(mut self, l1: L1Choice) -> Case {
        self.cfg.l1 = l1;
        self
    }
    fn bank8(mut self) -> Case {
        self.cfg.bank_mode = BankMode::EightByte;
        self
    }
    fn strict(mut self) -> Case {
        self.cfg.strict_align = true;
        self
    }
    fn documented(mut self) -> Case {
        self.cfg.shared_model = SharedModel::Documented;
        self
    }
    fn shared_bytes(mut self, n: u64) -> Case {
        self.cfg.windows = Windows { shared_alloc_bytes: Some(n), ..Windows::default() };
        self
    }
}

fn run(c: &Case) -> Report {
    let cc = Cc::parse(c.cc).expect("case CC");
    let instr = Instr::parse(c.op).expect("case op");
    let warp = warp_from_expr(c.addr, &instr, LaneSet(c.mask)).expect("case expression");
    analyze(cc, &instr, &warp, &c.cfg)
}

fn check(c: &Case) {
    let r = run(c);
    let label = format!("CC {} {} `{}` mask {:#x} (source: {})", c.cc, c.op, c.addr, c.mask, c.source);
    match (&c.expect, &r.cost) {
        (Expect::Mem(req, lines, sectors, tx, tx_bytes), Cost::Memory(m)) => {
            assert_eq!(
                (m.requests, m.lines, m.sectors, m.transactions, m.transaction_bytes),
                (*req, *lines, *sectors, *tx, *tx_bytes),
                "{label}: (requests, lines, sectors, transactions, transaction_bytes)"
            );
            assert_eq!(m.bytes_moved, u64::from(m.transactions) * u64::from(m.transaction_bytes), "{label}");
        }
        (Expect::Banks(w, ideal, conflicts, degree), Cost::Banks(b)) => {
            assert_eq!(
                (b.wavefronts, b.ideal_wavefronts, b.bank_conflicts, b.conflict_degree),
                (*w, *ideal, *conflicts, *degree),
                "{label}: (wavefronts, ideal, conflicts, degree)"
            );
        }
        _ => panic!("{label}: wrong kind of result: {}", r.summary()),
    }
}

const SHARED: &str = "0x7F0000000000";

#[test]
fn global_memory_cases() {
    use Expect::Mem;
    let cases = [
        // --- CC 6.0 and later: one request, 32-byte sectors ---
        case("8.0", "LDG.E.32", "4*lane", Mem(1, 1, 4, 4, 32), "BPG 9.2.1.1 coalesced: 128 B in 4 sectors"),
        case(
            "8.0",
            "LDG.E.32",
            "4*lane + 4",
            Mem(1, 2, 5, 5, 32),
            "BPG 9.2.1.2 misaligned by one word: 5 sectors over 2 lines",
        ),
        case("6.0", "LDG.E.32", "8*lane", Mem(1, 2, 8, 8, 32), "BPG 9.2.1.3 stride 2: 8 sectors"),
        case(
            "7.0",
            "LDG.E.32",
            "4*lane",
            Mem(1, 1, 1, 1, 32),
            "docs/model.md#global-memory (7.x): 1 sector when one lane is active",
        )
        .mask(0x1),
        case(
            "9.0",
            "LDG.E.32",
            "128*lane",
            Mem(1, 32, 32, 32, 32),
            "docs/model.md#global-memory (7.x+): 32 sectors when every lane hits its own line",
        ),
        case(
            "8.6",
            "LDG.E.32",
            "0x1000",
            Mem(1, 1, 1, 1, 32),
            "derived from docs/model.md#global-memory: all lanes on one word touch one sector",
        ),
        case(
            "8.0",
            "LDG.E.128",
            "16*lane",
            Mem(1, 4, 16, 16, 32),
            "derived: 512 contiguous bytes = 4 lines of 4 sectors, one request on 7.x+",
        ),
        case("8.0", "LDG.E.64", "8*lane", Mem(1, 2, 8, 8, 32), "derived: 256 contiguous bytes = 2 lines, 8 sectors"),
        case("8.0", "LDG.E.U8", "lane", Mem(1, 1, 1, 1, 32), "derived: 32 contiguous bytes = 1 sector"),
        case("8.0", "LDG.E.U16", "2*lane", Mem(1, 1, 2, 2, 32), "derived: 64 contiguous bytes = 2 sectors"),
        case(
            "7.5",
            "STG.E.32",
            "4*lane",
            Mem(1, 1, 4, 4, 32),
            "derived from docs/model.md#global-memory: stores count sectors like loads",
        ),
        case(
            "8.9",
            "LDG.E.32",
            "0x1000 + 4*lane",
            Mem(1, 1, 2, 2, 32),
            "derived: 16 active lanes x 4 B = 64 B = 2 sectors",
        )
        .mask(0xffff),
        case(
            "8.0",
            "LDG.E.32",
            "4*((lane*7) % 32)",
            Mem(1, 1, 4, 4, 32),
            "BPG 9.2.1: any permutation of a coalesced access costs the same",
        ),
        case(
            "10.0",
            "LDG.E.32",
            "4*lane + 4",
            Mem(1, 2, 5, 5, 32),
            "derived: 10.0 follows the 7.x+ rule (docs/model.md#global-memory)",
        ),
        case(
            "12.0",
            "LDG.E.32",
            "8*lane",
            Mem(1, 2, 8, 8, 32),
            "derived: 12.0 follows the 7.x+ rule (docs/model.md#global-memory)",
        ),
        // --- CC 2.x: L1 on by default, 128-byte transactions, half/quarter-warp split ---
        case(
            "2.0",
            "LD.E.32",
            "4*lane",
            Mem(1, 1, 4, 1, 128),
            "PG-5.0 F.4.2: one 128-byte transaction for an aligned warp",
        ),
        case(
            "2.0",
            "LD.E.32",
            "4*lane + 4",
            Mem(1, 2, 5, 2, 128),
            "PG-5.0 F.4.2 / Fig. G-1 misaligned: 2 x 128-byte transactions",
        ),
        case(
            "2.0",
            "LD.E.CG.32",
            "4*lane + 4",
            Mem(1, 2, 5, 5, 32),
            "PG-5.0 F.4.2: L2-only (.cg) accesses use 32-byte transactions",
        ),
        case("2.0", "LD.E.32", "4*lane + 4", Mem(1, 2, 5, 5, 32), "PG-5.0 F.4.2: -dlcm=cg means 32-byte transactions")
            .l1(L1Choice::Off),
        case(
            "2.0",
            "LD.E.64",
            "8*lane",
            Mem(2, 2, 8, 2, 128),
            "PG-5.0 F.4.2: two requests (half-warps), one line each",
        ),
        case(
            "2.0",
            "LD.E.128",
            "16*lane",
            Mem(4, 4, 16, 4, 128),
            "PG-5.0 F.4.2: four requests (quarter-warps), one line each",
        ),
        case(
            "2.0",
            "LD.E.64",
            "8*lane + 8",
            Mem(2, 3, 9, 4, 128),
            "derived from PG-5.0 F.4.2: each half-warp spans 2 lines; line 1 is charged in both",
        ),
        case("2.0", "ST.E.32", "4*lane", Mem(1, 1, 4, 4, 32), "PG-5.0 F.4.2: stores bypass L1, 32-byte granularity"),
        case(
            "2.0",
            "LD.E.128",
            "16*lane",
            Mem(4, 4, 16, 16, 32),
            "PG-5.0 F.4.2: 4 requests x 4 segments of 32 B on the L2-only path",
        )
        .l1(L1Choice::Off),
        // --- CC 3.x: L2 only by default, opt-in L1, LDG is the read-only path ---
        case(
            "3.5",
            "LD.E.32",
            "4*lane",
            Mem(1, 1, 4, 4, 32),
            "PG-11 K.3.2: global loads cached in L2 only, 32-byte transactions",
        ),
        case(
            "3.5",
            "LD.E.32",
            "4*lane",
            Mem(1, 1, 4, 1, 128),
            "PG-11 K.3.2: with -dlcm=ca, L1 and 128-byte transactions",
        )
        .l1(L1Choice::On),
        case(
            "3.5",
            "LDG.E.32",
            "4*lane",
            Mem(1, 1, 4, 4, 32),
            "the KAUST memory lecture Kepler table: LDG is the non-coherent read-only path, 32 B",
        ),
        case("3.0", "LDG.E.32", "4*lane", Mem(1, 1, 4, 4, 32), "PG-11 K.3.2: 3.0 has no LDG; counted as an L2-only LD"),
        case("3.7", "LD.E.64", "8*lane", Mem(2, 2, 8, 2, 128), "PG-11 K.3.2: half-warp requests, L1 opt-in on 3.7")
            .l1(L1Choice::On),
        case("3.0", "LD.E.128", "16*lane", Mem(4, 4, 16, 16, 32), "PG-11 K.3.2: quarter-warps x 4 segments of 32 B"),
        case(
            "3.5",
            "LD.E.32",
            "128*lane",
            Mem(1, 32, 32, 32, 32),
            "PG-11 K.3.2: scattered access, 32-byte transactions reduce over-fetch",
        ),
        case(
            "3.5",
            "LD.E.32",
            "128*lane",
            Mem(1, 32, 32, 32, 128),
            "PG-11 K.3.2: the same access on the L1 path moves 32 whole lines",
        )
        .l1(L1Choice::On),
        // --- CC 5.x / 6.x ---
        case(
            "5.2",
            "LDG.E.32",
            "4*lane + 4",
            Mem(1, 2, 5, 2, 128),
            "BPG 9.2.1: with L1 on, count 128-byte aligned segments",
        )
        .l1(L1Choice::On),
        case(
            "5.0",
            "LDG.E.32",
            "4*lane + 4",
            Mem(1, 2, 5, 5, 32),
            "PG 5.x: 5.0 never L1-caches global data; -dlcm=ca has no effect",
        )
        .l1(L1Choice::On),
        case(
            "5.2",
            "LDG.E.64",
            "8*lane",
            Mem(1, 2, 8, 8, 32),
            "PG 5.x / NCU: one request per instruction from Maxwell on",
        ),
        case("6.1", "LDG.E.CG.32", "4*lane", Mem(1, 1, 4, 4, 32), "BPG 9.2.1: 32-byte access unit on 6.x"),
        // --- Local memory: interleaved, then section A ---
        case(
            "8.0",
            "LDL.32",
            "0",
            Mem(1, 1, 4, 4, 32),
            "PG Local Memory: same per-thread address is fully coalesced (32 words)",
        ),
        case("2.0", "LDL.32", "0", Mem(1, 1, 4, 1, 128), "PG-5.0: local memory cached in L1, one 128-byte transaction"),
        case(
            "8.0",
            "LDL.32",
            "4*lane",
            Mem(1, 32, 32, 32, 32),
            "derived from docs/model.md#local-memory: lane l lands at 132*l, a different line per lane",
        ),
        case(
            "8.0",
            "LDL.64",
            "0",
            Mem(1, 2, 8, 8, 32),
            "derived from docs/model.md#local-memory: 64-bit values interleaved at 8 bytes = 256 B",
        ),
        case(
            "8.0",
            "LDL.32",
            "0x1000000",
            Mem(0, 0, 0, 0, 32),
            "the LDL/LDS instruction reference: addresses outside the 16 MB window are error lanes",
        ),
        // --- Generic addresses ---
        case(
            "8.0",
            "LD.E.32",
            "0x7F0001000000",
            Mem(1, 1, 4, 4, 32),
            "MODEL (windows): the local window at 0x7F00_0100_0000; offset 0 interleaves",
        ),
        case(
            "8.0",
            "LD.32",
            "0x1000 + 4*lane",
            Mem(1, 1, 4, 4, 32),
            "MODEL (windows): a 32-bit generic address is always global",
        ),
        // --- Alignment ---
        case(
            "8.0",
            "LDG.E.32",
            "4*lane + 1",
            Mem(1, 1, 4, 4, 32),
            "the LDG instruction reference: LDG forces natural alignment (aligned down to 4*lane)",
        ),
    ];
    for c in &cases {
        check(c);
    }
    assert!(cases.len() >= 40, "this suite keeps at least 40 global cases");
}

#[test]
fn shared_memory_cases() {
    use Expect::Banks;
    let cases = [
        case("8.0", "LDS.32", "4*lane", Banks(1, 1, 0, 1), "PG Fig. 39 left: stride 1, conflict-free"),
        case("8.0", "LDS.32", "8*lane", Banks(2, 1, 1, 2), "PG Fig. 39 middle: stride 2, 2-way"),
        case("8.0", "LDS.32", "12*lane", Banks(1, 1, 0, 1), "PG Fig. 39 right: stride 3, conflict-free"),
        case("8.0", "LDS.32", "4*((lane*13) % 32)", Banks(1, 1, 0, 1), "PG Fig. 40: a permutation is conflict-free"),
        case("8.0", "LDS.32", "128*lane", Banks(32, 1, 31, 32), "BPG 9.2.3.3: 32x32 tile read by column, 32-way"),
        case("8.0", "LDS.32", "132*lane", Banks(1, 1, 0, 1), "BPG 9.2.3.3: tile padded to [32][33], conflict-free"),
        case("8.0", "LDS.32", "0", Banks(1, 1, 0, 1), "PG Fig. 40: broadcast"),
        case(
            "8.0",
            "LDS.64",
            "8*lane",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory: LDS.64 8*lane = 2 wavefronts, 0 conflicts",
        ),
        case(
            "8.0",
            "LDS.128",
            "16*lane",
            Banks(4, 4, 0, 1),
            "docs/model.md#shared-memory: LDS.128 16*lane = 4 wavefronts, 0 conflicts",
        ),
        case(
            "8.0",
            "LDS.128",
            "128*lane",
            Banks(32, 4, 28, 8),
            "docs/model.md#shared-memory: every lane on one 16-byte bank group = 32 wavefronts, not 128",
        ),
        case(
            "7.0",
            "LDS.128",
            "0",
            Banks(4, 4, 0, 1),
            "docs/model.md#shared-memory phase model, chosen with --shared-model documented",
        )
        .documented(),
        case("8.0", "LDS.U8", "lane", Banks(1, 1, 0, 1), "PG 20.4.3: 8-bit accesses to the same word do not conflict"),
        case("8.0", "STS.32", "4*lane", Banks(1, 1, 0, 1), "docs/model.md#shared-memory: stores counted like loads"),
        case(
            "5.0",
            "LDS.32",
            "128*lane + 4*(lane ^ 5)",
            Banks(1, 1, 0, 1),
            "derived: XOR swizzle puts row r's column in bank r^5",
        ),
        case("6.0", "LDS.32", "16*lane", Banks(4, 1, 3, 4), "derived from PG 20.4.3: stride 4 words, 4-way"),
        // Kepler.
        case(
            "3.5",
            "LDS.32",
            "8*lane",
            Banks(1, 1, 0, 1),
            "docs/model.md#shared-memory (GTC 2012): stride 2 is conflict-free in Kepler's 4-byte mode",
        ),
        case(
            "3.5",
            "LDS.64",
            "8*lane",
            Banks(1, 1, 0, 1),
            "PG-11 K.3.3: 8-byte mode, successive 64-bit words in successive banks",
        )
        .bank8(),
        case(
            "3.5",
            "LDS.64",
            "8*lane",
            Banks(1, 1, 0, 1),
            "derived from docs/model.md#shared-memory: 4-byte mode, all words in one 256 B segment",
        ),
        case(
            "3.5",
            "LDS.32",
            "128*lane",
            Banks(16, 1, 15, 16),
            "derived from docs/model.md#shared-memory: key addr>>8 gives 16 distinct keys in bank 0",
        ),
        case(
            "3.0",
            "LDS.32",
            "4*lane",
            Banks(1, 1, 0, 1),
            "PG-11 K.3.3: 8-byte mode, lanes 2k, 2k+1 share a 64-bit word",
        )
        .bank8(),
        case(
            "3.5",
            "LDS.128",
            "16*lane",
            Banks(2, 2, 0, 1),
            "derived from docs/model.md#shared-memory: half-warps of 256 B each in one segment",
        ),
        // Fermi.
        case("2.0", "LDS.32", "8*lane", Banks(2, 1, 1, 2), "PG-5.0 F.4.3: stride 2 is 2-way on 2.x"),
        case("2.0", "LDS.64", "8*lane", Banks(2, 2, 0, 1), "PG-5.0 F.4.3: 64-bit accesses by half-warp, conflict-free"),
        case("2.0", "LDS.128", "16*lane", Banks(4, 4, 0, 2), "PG-5.0 F.4.3: most 128-bit accesses are 2-way"),
        // Windows, alignment, allocation.
        case(
            "8.0",
            "LD.E.32",
            "0x7F0000000000 + 4*lane",
            Banks(1, 1, 0, 1),
            "MODEL (windows): generic address in the shared window goes to shared",
        ),
        case(
            "8.0",
            "LDS.32",
            "4*lane + 2",
            Banks(0, 0, 0, 0),
            "the LDL/LDS instruction reference: misaligned lanes raise an error under the strict option",
        )
        .strict(),
        case(
            "8.0",
            "LDS.32",
            "4*lane",
            Banks(1, 1, 0, 1),
            "the LDL/LDS instruction reference: lanes past the allocation are error lanes",
        )
        .shared_bytes(64),
    ];
    for c in &cases {
        check(c);
    }
    assert!(cases.len() >= 20);
}

#[test]
fn generic_op_splits_across_windows() {
    // Lanes 0-15 at 0x1000 + 4*lane (global), lanes 16-31 in the shared window at offset 4*lane.
    let addr = "0x1000 + 4*lane + (lane >> 4) * (0x7F0000000000 - 0x1000)";
    let r = run(&case("8.0", "LD.E.32", addr, Expect::Mem(0, 0, 0, 0, 0), "MODEL (generic LD/ST)"));
    assert_eq!(r.space, SpaceTag::Generic);
    let parts = r.parts();
    assert_eq!(parts.len(), 2);
    let g = parts[0].memory().expect("global part first");
    // 16 lanes x 4 B = 64 B at 0x1000: 1 line, 2 sectors (derived from docs/model.md#global-memory).
    assert_eq!((parts[0].active_lanes, g.lines, g.sectors), (16, 1, 2));
    let s = parts[1].banks().expect("shared part second");
    // Offsets 64..127: banks 16..31, one wavefront (derived from docs/model.md#shared-memory).
    assert_eq!((parts[1].active_lanes, s.wavefronts, s.bank_conflicts), (16, 1, 0));
    assert_eq!(SHARED, "0x7F0000000000");
}

#[test]
fn measured_shared_rules_on_cc_7_and_later() {
    use Expect::Banks;
    let cases = [
        // docs/model.md#shared-memory-as-measured, "So on 8.0": the four figures it states.
        case(
            "8.0",
            "LDS.64",
            "8*(lane/2)",
            Banks(1, 1, 0, 1),
            "docs/model.md#shared-memory-as-measured: LDS.64 8*(lane/2) = 1 wavefront on 8.0",
        ),
        case(
            "8.0",
            "LDS.128",
            "16*(lane/2)",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory-as-measured: LDS.128 16*(lane/2) = 2 on 8.0",
        ),
        case(
            "8.0",
            "LDS.128",
            "0",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory-as-measured: LDS.128 broadcast = 2 (Nsight Compute on 8.6/9.0)",
        ),
        case("8.0", "LDS.64", "0", Banks(1, 1, 0, 1), "docs/model.md#shared-memory-as-measured: LDS.64 broadcast = 1"),
        case(
            "9.0",
            "LDS.128",
            "16*(lane/16)",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory-as-measured: each half-warp on one address, t/373160",
        ),
        case(
            "7.0",
            "LDS.128",
            "16*(lane/4)",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory-as-measured: lane i^1 and i^2 share (V100 multicast)",
        ),
        // The same patterns with the documented phase model (docs/model.md#shared-memory): half-warps for 8 bytes, quarter-warps for 16.
        case("8.0", "LDS.64", "8*(lane/2)", Banks(2, 2, 0, 1), "docs/model.md#shared-memory: two half-warp phases")
            .documented(),
        case(
            "8.0",
            "LDS.128",
            "16*(lane/2)",
            Banks(4, 4, 0, 1),
            "docs/model.md#shared-memory: four quarter-warp phases",
        )
        .documented(),
        // Distinct addresses: the measured rule does not apply, the phase model counts (docs/model.md#shared-memory-as-measured: "otherwise").
        case(
            "8.0",
            "LDS.64",
            "8*lane",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory-as-measured otherwise clause: 2 half-warp phases",
        ),
        // Pairs that conflict inside a merged phase: 16 lanes of LDS.128 in pairs (i, i^1) on rows 128 bytes
        // apart: 8 distinct 16-byte words per half-warp all in banks 0-3 = 8 wavefronts per merged phase, x2.
        case(
            "8.0",
            "LDS.128",
            "128*(lane/2)",
            Banks(16, 2, 14, 8),
            "docs/model.md#shared-memory-as-measured: within a phase the cost is unchanged",
        ),
        // Same pattern, phase model: each quarter-warp holds 4 distinct rows in banks 0-3: 4 x 4 = 16 too.
        case(
            "8.0",
            "LDS.128",
            "128*(lane/2)",
            Banks(16, 4, 12, 4),
            "docs/model.md#shared-memory: 4 quarter-warps, 4-way each",
        )
        .documented(),
        // Stores follow the same rule (docs/model.md#shared-memory-as-measured: LDS/STS).
        case(
            "8.0",
            "STS.128",
            "0",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory-as-measured: STS.128 with one address",
        ),
        // Before 7.0 the measured rule is not claimed: the phase model counts (docs/model.md#shared-memory-as-measured, Kepler K80 matches B).
        case("6.0", "LDS.128", "0", Banks(4, 4, 0, 1), "docs/model.md#shared-memory on 6.0: quarter-warp phases"),
        case(
            "5.2",
            "LDS.64",
            "0",
            Banks(2, 2, 0, 1),
            "docs/model.md#shared-memory on 5.2: half-warp phases (unverified note)",
        ),
    ];
    for c in &cases {
        check(c);
    }
}

#[test]
fn ldmatrix_and_stmatrix_take_one_phase_per_matrix() {
    use Expect::Banks;
    // docs/model.md#ldmatrix-and-stmatrix: threads 0-7 give matrix 0's rows, 8-15 matrix 1's, ...; a phase per matrix costs the most
    // distinct words one bank serves among its 8 rows.
    let tile = "128*(lane%8) + 16*(lane/8)";
    let swizzled = "(128*(lane%8) + 16*(lane/8)) ^ (((128*(lane%8) + 16*(lane/8)) >> 3) & 0x70)";
    let cases = [
        case(
            "8.0",
            "LDSM.16.M88.4",
            tile,
            Banks(32, 4, 28, 8),
            "docs/model.md#ldmatrix-and-stmatrix: unswizzled 64-half rows, x4 = 32",
        ),
        case(
            "8.0",
            "LDSM.16.M88.4",
            swizzled,
            Banks(4, 4, 0, 1),
            "docs/model.md#ldmatrix-and-stmatrix/H: the 128B swizzle makes it 4",
        ),
        case(
            "7.5",
            "LDSM.16.MT88.4",
            swizzled,
            Banks(4, 4, 0, 1),
            "docs/model.md#ldmatrix-and-stmatrix: .trans reads the same rows",
        ),
        // .x2 uses threads 0-15 only: lanes 16-31's addresses (here on the same bank group) are not read.
        case(
            "8.0",
            "LDSM.16.M88.2",
            tile,
            Banks(16, 2, 14, 8),
            "docs/model.md#ldmatrix-and-stmatrix: .x2 = 2 matrices, 8-way each",
        ),
        case(
            "8.0",
            "LDSM.16.M88",
            "16*lane",
            Banks(1, 1, 0, 1),
            "docs/model.md#ldmatrix-and-stmatrix: .x1, 8 rows on 8 bank groups = 1",
        ),
        // Rows of 64 bytes (a 32-half tile): two rows per 128 bytes, 4 rows per bank group: 4-way.
        case(
            "8.0",
            "LDSM.16.M88.4",
            "64*(lane%8) + 16*(lane/8)",
            Banks(16, 4, 12, 4),
            "docs/model.md#ldmatrix-and-stmatrix: 4-way per matrix",
        ),
        // Lanes that share a row read it once (distinct words per bank): the broadcast case.
        case(
            "8.0",
            "LDSM.16.M88.4",
            "0",
            Banks(4, 4, 0, 1),
            "docs/model.md#ldmatrix-and-stmatrix: the same row 8 times, 1 per matrix",
        ),
        case(
            "9.0",
            "STSM.16.M88.4",
            tile,
            Banks(32, 4, 28, 8),
            "docs/model.md#ldmatrix-and-stmatrix: stmatrix costs like ldmatrix",
        ),
    ];
    for c in &cases {
        check(c);
    }
    let r = run(&case("8.0", "LDSM.16.M88.2", tile, Banks(0, 0, 0, 0), "docs/model.md#ldmatrix-and-stmatrix"));
    assert_eq!(r.active_lanes, 16, "docs/model.md#ldmatrix-and-stmatrix: .x2 uses threads 0-15");
}

#[test]
fn matrix_and_copy_instructions_are_refused_before_their_first_cc() {
    // PTX ISA target notes: ldmatrix sm_75, cp.async sm_80, stmatrix sm_90 (docs/model.md#ldmatrix-and-stmatrix, docs/model.md#asynchronous-copies).
    use warpscope::scenario::Scenario;
    for (cc, op, first) in
        [("7.0", "LDSM.16.M88.4", "7.5"), ("7.5", "LDGSTS.E.128", "8.0"), ("8.9", "STSM.16.M88", "9.0")]
    {
        let sc = Scenario { cc: Cc::parse(cc).unwrap(), op: op.into(), ..Scenario::default() };
        let e = sc.instr().unwrap_err();
        assert!(
            e.error.message.contains(&format!("needs CC {first} or later; CC {cc} does not have it")),
            "{}",
            e.error.message
        );
    }
}

#[test]
fn cp_async_costs_a_global_read_and_a_shared_write() {
    // docs/model.md#asynchronous-copies: the global side as a global load of the width, the shared side as a shared store of it.
    let cc = Cc::parse("8.0").unwrap();
    let instr = Instr::parse("LDGSTS.E.BYPASS.128").unwrap();
    let dst = warp_from_expr("16*lane", &Instr::parse("STS.128").unwrap(), LaneSet::ALL).unwrap();
    let src = warp_from_expr("4096 + 16*lane", &Instr::parse("LDG.E.128").unwrap(), LaneSet::ALL).unwrap();
    let r = warpscope::model::cost::analyze_with(cc, &instr, &dst, None, Some(&src), &Config::default());
    assert_eq!(r.space, SpaceTag::GlobalToShared);
    let Cost::Split { parts } = &r.cost else { panic!("two parts: {:?}", r.cost) };
    let (Cost::Memory(g), Cost::Banks(b)) = (&parts[0].cost, &parts[1].cost) else { panic!("global then shared") };
    // 512 contiguous aligned bytes: 4 lines, 16 sectors (docs/model.md#global-memory); 16*lane as STS.128: 4 quarter-warp
    // phases, conflict-free (docs/model.md#shared-memory).
    assert_eq!((g.requests, g.lines, g.sectors), (1, 4, 16));
    assert_eq!(
        g.path,
        warpscope::model::arch::DataPath::L2,
        ".BYPASS is cp.async.cg: L2 only (docs/model.md#asynchronous-copies)"
    );
    assert_eq!((b.wavefronts, b.ideal_wavefronts, b.bank_conflicts), (4, 4, 0));
    // A 128-byte row stride on the shared side: every lane on banks 0-3, 8 rows per quarter-warp = 32.
    let dst = warp_from_expr("128*lane", &Instr::parse("STS.128").unwrap(), LaneSet::ALL).unwrap();
    let r = warpscope::model::cost::analyze_with(cc, &instr, &dst, None, Some(&src), &Config::default());
    let Cost::Split { parts } = &r.cost else { panic!() };
    let Cost::Banks(b) = &parts[1].cost else { panic!() };
    assert_eq!((b.wavefronts, b.conflict_degree), (32, 8));
    // The fast path agrees.
    let c = warpscope::model::count::count_with(cc, &instr, &dst, None, Some(&src), &Config::default()).sums();
    assert_eq!((c.sectors, c.wavefronts), (16, 32));
}

#[test]
fn notes_and_warnings_name_the_lanes() {
    let src = "model notes are attached where the rule is disputed";
    let r = run(&case("3.0", "LD.E.32", "4*lane", Expect::Mem(0, 0, 0, 0, 0), src));
    assert!(r.notes.iter().any(|n| n.id == "kepler-3.0-l1-default"), "{:?}", r.notes);

    // docs/model.md#shared-memory-as-measured: the measured figure is counted and the note gives the phase model's.
    let r = run(&case("8.0", "LDS.128", "0", Expect::Banks(0, 0, 0, 0), src));
    let n = r.notes.iter().find(|n| n.id == "shared-measured").expect("measured note");
    assert!(n.text.contains("costs 2 wavefronts; the documented phase model counts 4"), "{}", n.text);
    let r = run(&case("8.0", "LDS.128", "0", Expect::Banks(0, 0, 0, 0), src).documented());
    let n = r.notes.iter().find(|n| n.id == "shared-documented").expect("documented note");
    assert!(n.text.contains("phase model: 4 wavefronts") && n.text.contains("this costs 2"), "{}", n.text);
    // Distinct addresses: both models agree, no note.
    let r = run(&case("8.0", "LDS.128", "16*lane", Expect::Banks(0, 0, 0, 0), src));
    assert!(!r.notes.iter().any(|n| n.id.starts_with("shared-")), "{:?}", r.notes);
    // Before 7.0 the measurements do not apply.
    let r = run(&case("6.0", "LDS.64", "0", Expect::Banks(0, 0, 0, 0), src));
    assert!(r.notes.iter().any(|n| n.id == "lds64-uniform-unverified"), "{:?}", r.notes);

    let r = run(&case("8.0", "LDG.E.32", "4*lane + 4*(lane / 31)", Expect::Mem(0, 0, 0, 0, 0), src));
    assert!(r.warnings.is_empty());
    let r = run(&case("8.0", "LDG.E.64", "8*lane + 4*(lane & 1)", Expect::Mem(0, 0, 0, 0, 0), src));
    let w = &r.warnings[0];
    assert_eq!(w.lanes, LaneSet(0xAAAA_AAAA), "odd lanes are misaligned by 4 bytes");

    let r = run(&case("8.0", "STS.32", "4*(lane / 2)", Expect::Banks(0, 0, 0, 0), src));
    assert!(r.warnings.iter().any(|w| w.lanes == LaneSet::ALL), "every lane shares its word with a neighbour");

    // Fermi's split charges a line twice when a half-warp straddles it.
    let r = run(&case("2.0", "LD.E.64", "8*lane + 8", Expect::Mem(0, 0, 0, 0, 0), src));
    assert!(r.notes.iter().any(|n| n.id == "split-double-count"));
    let r = run(&case("2.0", "LD.E.64", "8*lane", Expect::Mem(0, 0, 0, 0, 0), src));
    assert!(!r.notes.iter().any(|n| n.id == "split-double-count"));
}

#[test]
fn steps_say_which_lanes_cause_each_sector() {
    // BPG 9.2.1.2: the misaligned warp's 5th sector holds only lane 31's word (bytes 128..131).
    let r = run(&case("8.0", "LDG.E.32", "4*lane + 4", Expect::Mem(0, 0, 0, 0, 0), "BPG 9.2.1.2"));
    let m = r.memory().expect("global");
    let fifth = &m.steps[0].transactions[4];
    assert_eq!((fifth.addr, fifth.lanes), (128, LaneSet(1 << 31)));

    // PG Fig. 39 stride 2: wavefront 1 serves lanes 0-15, wavefront 2 lanes 16-31.
    let r = run(&case("8.0", "LDS.32", "8*lane", Expect::Banks(0, 0, 0, 0), "PG Fig. 39"));
    let b = r.banks().expect("shared");
    let lanes: Vec<String> = b.phases[0].wavefronts.iter().map(|w| w.lanes.ranges()).collect();
    assert_eq!(lanes, ["0-15", "16-31"]);

    // PG-5.0 F.4.2: the 8-byte access on 2.0 is two requests, lanes 0-15 and 16-31.
    let r = run(&case("2.0", "LD.E.64", "8*lane", Expect::Mem(0, 0, 0, 0, 0), "PG-5.0 F.4.2"));
    let m = r.memory().expect("global");
    let req: Vec<String> = m.steps.iter().map(|s| s.lanes.ranges()).collect();
    assert_eq!(req, ["0-15", "16-31"]);
}

#[test]
fn text_form_snapshot() {
    let r = run(&case("8.0", "LDG.E.32", "4*lane + 4", Expect::Mem(0, 0, 0, 0, 0), "BPG 9.2.1.2"));
    expect_test::expect![[r#"
        LDG.E.32 on CC 8.0 (Ampere, A100 (GA100)): 4 bytes per lane, 32 active lanes
        global memory, L1 path
          requests             1
          lines (128 B)        2
          sectors (32 B)       5
          sectors/request      5.00
          transactions         5 x 32 B
          bytes requested      128
          bytes unique         128
          bytes moved          160
          efficiency           80.0%
        steps:
          request 1 (lanes 0-31):
            32 B at 0x0: lanes 0-6
            32 B at 0x20: lanes 7-14
            32 B at 0x40: lanes 15-22
            32 B at 0x60: lanes 23-30
            32 B at 0x80: lanes 31
        model notes:
          - [counts-not-performance] These counts are per warp, not performance: neighbouring warps often reuse the same lines from cache (the Best Practices Guide's misaligned copy reaches about 9/10 of peak bandwidth, not the 4/5 the sector count suggests) (Best Practices Guide 9.2.1.2)
    "#]]
    .assert_eq(&r.to_text());
}
