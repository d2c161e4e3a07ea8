//! Property tests: invariants the engine must keep for every CC, instruction and address pattern.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use warpscope::{analyze, BankMode, Cc, Config, Cost, Instr, L1Choice, Report, WarpAddrs, ALL_CCS, WARP_LANES};

const OPS: [&str; 16] = [
    "LDG.E.U8",
    "LDG.E.U16",
    "LDG.E.32",
    "LDG.E.64",
    "LDG.E.128",
    "LDG.E.CG.32",
    "STG.E.64",
    "LD.E.32",
    "LDS.U8",
    "LDS.32",
    "LDS.64",
    "LDS.128",
    "STS.128",
    "LDL.32",
    "LDL.128",
    "ST.E.64",
];

fn cc() -> impl Strategy<Value = Cc> {
    (0..ALL_CCS.len()).prop_map(|i| ALL_CCS[i])
}

fn op() -> impl Strategy<Value = Instr> {
    (0..OPS.len()).prop_map(|i| Instr::parse(OPS[i]).expect("listed ops parse"))
}

fn cfg() -> impl Strategy<Value = Config> {
    (0..3u8, any::<bool>()).prop_map(|(l1, b8)| Config {
        l1: [L1Choice::Default, L1Choice::On, L1Choice::Off][l1 as usize],
        bank_mode: if b8 { BankMode::EightByte } else { BankMode::FourByte },
        ..Config::default()
    })
}

/// Addresses in a small range (so lines and banks collide often), aligned to `size`, with a random mask.
fn warp() -> impl Strategy<Value = (Vec<Option<u64>>, u32)> {
    (prop::collection::vec(0u64..8192, WARP_LANES), any::<u32>()).prop_map(|(a, mask)| {
        let addrs = a.iter().enumerate().map(|(l, &x)| (mask & (1 << l) != 0).then_some(x)).collect();
        (addrs, mask)
    })
}

fn to_warp(v: &[Option<u64>], size: u32) -> WarpAddrs {
    let mut a = [None; WARP_LANES];
    for (slot, x) in a.iter_mut().zip(v) {
        *slot = x.map(|x| x - x % u64::from(size));
    }
    WarpAddrs(a)
}

fn check_invariants(r: &Report) -> Result<(), TestCaseError> {
    for p in r.parts() {
        match &p.cost {
            Cost::Memory(m) => {
                prop_assert!(
                    m.lines <= m.sectors && m.sectors <= 4 * m.lines,
                    "lines {} sectors {}",
                    m.lines,
                    m.sectors
                );
                prop_assert!(m.bytes_unique <= m.bytes_requested);
                prop_assert!(m.bytes_unique <= m.bytes_moved);
                prop_assert!(m.efficiency <= 1.0);
                prop_assert!(m.transactions >= m.requests);
                // Every sector touched is carried by some transaction.
                prop_assert!(u64::from(m.transactions) * u64::from(m.transaction_bytes) >= 32 * u64::from(m.sectors));
                let lanes_in_steps: u32 =
                    m.steps.iter().flat_map(|s| &s.transactions).map(|t| t.lanes.0).fold(0, |a, b| a | b);
                prop_assert_eq!(lanes_in_steps.count_ones(), p.active_lanes);
            }
            Cost::Banks(b) => {
                prop_assert!(b.wavefronts >= b.ideal_wavefronts);
                prop_assert_eq!(b.bank_conflicts, b.wavefronts - b.ideal_wavefronts);
                prop_assert!(b.conflict_degree <= 32);
                let in_steps: u32 = b.phases.iter().map(|ph| ph.wavefronts.len() as u32).sum();
                prop_assert_eq!(in_steps, b.wavefronts);
            }
            Cost::Split { .. } | Cost::Constant(_) => prop_assert!(false, "parts are never split again or constant"),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn counts_keep_their_invariants(cc in cc(), op in op(), cfg in cfg(), (addrs, _) in warp()) {
        let r = analyze(cc, &op, &to_warp(&addrs, op.size_bytes), &cfg);
        check_invariants(&r)?;
    }

    /// The warp's footprint (lines, sectors, unique bytes) does not depend on which lane holds which address;
    /// from CC 5.0 on (one request per warp) neither do transactions, and for shared accesses of at most 4
    /// bytes (one phase) neither do wavefronts.
    #[test]
    fn permuting_lanes_keeps_the_counts(cc in cc(), op in op(), cfg in cfg(), (addrs, _) in warp(), seed in any::<u64>()) {
        let warp = to_warp(&addrs, op.size_bytes);
        let mut perm: Vec<usize> = (0..WARP_LANES).collect();
        let mut s = seed | 1;
        for i in (1..WARP_LANES).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            perm.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let mut permuted = [None; WARP_LANES];
        for (i, &p) in perm.iter().enumerate() { permuted[i] = warp.0[p]; }
        let a = analyze(cc, &op, &warp, &cfg);
        let b = analyze(cc, &op, &WarpAddrs(permuted), &cfg);
        match (&a.cost, &b.cost) {
            (Cost::Memory(x), Cost::Memory(y)) if op.base != warpscope::Base::Ldl => {
                prop_assert_eq!((x.lines, x.sectors, x.bytes_unique), (y.lines, y.sectors, y.bytes_unique));
                if !cc.splits_wide_requests() { prop_assert_eq!(x.transactions, y.transactions); }
            }
            (Cost::Banks(x), Cost::Banks(y)) if op.size_bytes <= 4 && !cc.has_bank_mode() => {
                prop_assert_eq!(x.wavefronts, y.wavefronts);
            }
            _ => {}
        }
    }

    /// One active lane costs the minimum: one request, line, sector and transaction, or one wavefront.
    #[test]
    fn a_single_lane_costs_the_minimum(cc in cc(), op in op(), cfg in cfg(), lane in 0..WARP_LANES, addr in 0u64..1 << 20) {
        let mut a = [None; WARP_LANES];
        a[lane] = Some(addr - addr % u64::from(op.size_bytes));
        let r = analyze(cc, &op, &WarpAddrs(a), &cfg);
        match &r.cost {
            Cost::Memory(m) => prop_assert_eq!((m.requests, m.lines, m.sectors, m.transactions), (1, 1, 1, 1)),
            Cost::Banks(b) => prop_assert_eq!((b.wavefronts, b.ideal_wavefronts, b.bank_conflicts), (1, 1, 0)),
            Cost::Split { .. } | Cost::Constant(_) => prop_assert!(false),
        }
    }

    /// Moving the whole warp by a multiple of 4 KB changes no count (lines, sectors and banks repeat).
    #[test]
    fn shifting_by_4k_changes_nothing(cc in cc(), op in op(), cfg in cfg(), (addrs, _) in warp(), k in 1u64..64) {
        let warp = to_warp(&addrs, op.size_bytes);
        let shifted = WarpAddrs(warp.0.map(|a| a.map(|a| a + 4096 * k)));
        let (x, y) = (analyze(cc, &op, &warp, &cfg), analyze(cc, &op, &shifted, &cfg));
        prop_assert_eq!(x.summary(), y.summary());
    }

    /// No input makes the engine panic: any 64-bit address, mask, CC and op.
    #[test]
    fn any_address_is_answered(cc in cc(), op in op(), cfg in cfg(), raw in prop::collection::vec(any::<Option<u64>>(), WARP_LANES)) {
        let mut a = [None; WARP_LANES];
        for (slot, x) in a.iter_mut().zip(&raw) { *slot = *x; }
        let r = analyze(cc, &op, &WarpAddrs(a), &cfg);
        check_invariants(&r)?;
    }

    /// Expressions never panic, whatever the text.
    #[test]
    fn expressions_never_panic(text in "[ -~]{0,40}") {
        let instr = Instr::parse("LDG.E.32").expect("valid op");
        let _ = warpscope::lang::warp_from_expr(&text, &instr, warpscope::LaneSet::ALL);
    }

    /// Mnemonics never panic, whatever the text.
    #[test]
    fn mnemonics_never_panic(text in "[A-Z0-9.]{0,24}") {
        let _ = Instr::parse(&text);
    }
}

fn run_text(lang: warpscope::lang::Lang, text: &str) {
    let sc = warpscope::scenario::Scenario { lang, text: text.to_string(), ..warpscope::scenario::Scenario::default() };
    // Any answer is fine; a panic is not.
    let _ = sc.run();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every language answers any text with a result or an error, never a panic.
    #[test]
    fn languages_never_panic(text in "(\\PC|\n){0,120}", lang in 0..warpscope::lang::Lang::ALL.len()) {
        run_text(warpscope::lang::Lang::ALL[lang], &text);
    }

    /// Real compiler PTX with a random slice cut out or a random token put in never panics: random text rarely
    /// gets past a PTX module's first line, so the edits start from whole modules.
    #[test]
    fn edited_ptx_never_panics(which in 0..4usize, a in 0usize..40_000, len in 0usize..60, insert in 0..12usize) {
        let files = ["vectorAdd/nvrtc_sm_80.ptx", "transpose/sm_80.ptx", "reduction/nvrtc_sm_90.ptx", "matrixMul/sm_75.ptx"];
        let path = format!("{}/tests/data/kernels/{}", env!("CARGO_MANIFEST_DIR"), files[which]);
        let text = std::fs::read_to_string(&path).expect("corpus");
        let tokens = ["", "%r1", "[", "{", "}", ";", "@%p1 bra $L__BB0_2;", ".reg .b32 %r<2>;", "-1", "0f7FFFFFFF", "call f;", "ret;"];
        let start = a.min(text.len());
        let end = (start + len).min(text.len());
        if text.is_char_boundary(start) && text.is_char_boundary(end) {
            let edited = format!("{}{}{}", &text[..start], tokens[insert], &text[end..]);
            let sc = warpscope::scenario::Scenario {
                lang: warpscope::lang::Lang::Ptx,
                text: edited,
                op: String::new(),
                block: warpscope::program::launch::Dim3::linear(64),
                ..warpscope::scenario::Scenario::default()
            };
            let _ = sc.run();
        }
    }

    /// Presets with a random slice cut out (the edits a student makes) never panic either.
    #[test]
    fn edited_presets_never_panic(which in 0..warpscope::teach::presets::PRESETS.len(), a in 0usize..2000, len in 0usize..40) {
        let p = &warpscope::teach::presets::PRESETS[which];
        let text = p.text;
        let start = a.min(text.len());
        let end = (start + len).min(text.len());
        if text.is_char_boundary(start) && text.is_char_boundary(end) {
            let edited = format!("{}{}", &text[..start], &text[end..]);
            let mut sc = p.scenario();
            sc.text = edited;
            let _ = sc.run();
        }
    }
}

/// Addresses that are small, in the shared window, in the local window, or anywhere.
fn any_space_addr() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..16384,
        (0u64..8192).prop_map(|o| warpscope::model::access::DEFAULT_SHARED_WINDOW + o),
        (0u64..8192).prop_map(|o| warpscope::model::access::DEFAULT_LOCAL_WINDOW + o),
        any::<u64>(),
    ]
}

/// A warp's raw addresses: lane by lane from anywhere, or `base + stride * lane` in one space (the shape real
/// accesses have, which reaches the full-phase and coalesced cases).
fn warp_addrs() -> impl Strategy<Value = Vec<Option<u64>>> {
    prop_oneof![
        prop::collection::vec(prop::option::of(any_space_addr()), WARP_LANES),
        (any_space_addr(), 0u64..300, any::<u32>()).prop_map(|(base, stride, mask)| {
            (0..WARP_LANES as u64)
                .map(|l| (mask & (1 << l) != 0 || mask % 3 == 0).then(|| base.wrapping_add(stride * l)))
                .collect()
        }),
    ]
}

const ALL_OPS: [&str; 23] = [
    "LDG.E.U8",
    "LDG.E.U16",
    "LDG.E.32",
    "LDG.E.64",
    "LDG.E.128",
    "LDG.E.CG.32",
    "LDG.E.CI.64",
    "STG.E.64",
    "LD.E.32",
    "LD.E.128",
    "ST.E.64",
    "LD.32",
    "LDS.U8",
    "LDS.32",
    "LDS.64",
    "LDS.128",
    "STS.128",
    "LDL.32",
    "LDL.128",
    "STL.64",
    "LDSM.16.M88.4",
    "LDSM.16.MT88.2",
    "STSM.16.M88",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The fast path gives exactly the detailed path's numbers, summed over the spaces an issue reaches.
    #[test]
    fn count_matches_analyze(cc in cc(), op in 0..ALL_OPS.len(), cfg in cfg(), strict in any::<bool>(),
                             raw in warp_addrs(),
                             plg in prop::option::of(any::<u32>())) {
        let instr = Instr::parse(ALL_OPS[op]).expect("listed op");
        let cfg = Config { strict_align: strict, ..cfg };
        let mut a = [None; WARP_LANES];
        for (slot, x) in a.iter_mut().zip(&raw) {
            *slot = x.filter(|&v| instr.extended || v <= u64::from(u32::MAX));
        }
        let warp = WarpAddrs(a);
        let plg = plg.map(warpscope::LaneSet);
        let r = warpscope::model::cost::analyze_lanes(cc, &instr, &warp, plg, &cfg);
        let c = warpscope::model::count::count(cc, &instr, &warp, plg, &cfg);
        let e = warpscope::model::count::Counts { misaligned: c.misaligned, ..warpscope::model::count::Counts::of_report(&r) };
        prop_assert_eq!(c, e);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// cp.async: the fast path's two parts equal the detailed report's, for any sources and destinations.
    #[test]
    fn copy_count_matches_analyze(cc in cc(), size in 0..3u32, cfg in cfg(), dst in warp_addrs(), src in warp_addrs()) {
        let op = ["LDGSTS.E.32", "LDGSTS.E.64", "LDGSTS.E.BYPASS.128"][size as usize];
        let instr = Instr::parse(op).expect("listed op");
        let dst = WarpAddrs(std::array::from_fn(|l| dst[l].map(|a| a & 0xFF_FFFF)));
        let src = WarpAddrs(std::array::from_fn(|l| dst.0[l].and(src[l]).or(dst.0[l].map(|a| a << 4))));
        let r = warpscope::model::cost::analyze_with(cc, &instr, &dst, None, Some(&src), &cfg);
        let c = warpscope::model::count::count_with(cc, &instr, &dst, None, Some(&src), &cfg);
        let e = warpscope::model::count::Counts { misaligned: c.misaligned, ..warpscope::model::count::Counts::of_report(&r) };
        prop_assert_eq!(c, e);
    }
}

/// Found by `cargo fuzz run engine`: the last word of the 64-bit address space, [2^64 - 4, 2^64), is 4 bytes.
/// The detailed path once ended that interval at u64::MAX and counted 3; the fast path counted 4.
#[test]
fn the_last_word_of_the_address_space_is_four_bytes() {
    let instr = Instr::parse("LDG.E.32").expect("listed op");
    let mut a = [None; WARP_LANES];
    a[0] = Some(u64::MAX - 3);
    a[1] = Some(0x1000);
    let warp = WarpAddrs(a);
    let cc = Cc::parse("8.0").expect("known CC");
    let r = warpscope::model::cost::analyze_lanes(cc, &instr, &warp, None, &Config::default());
    let c = warpscope::model::count::count(cc, &instr, &warp, None, &Config::default());
    let unique = warpscope::model::count::Counts::of_report(&r).sums().bytes_unique;
    // Two lanes, 4 bytes each, no overlap: 8 bytes (docs/model.md#global-memory: bytes unique is the union of the lanes' bytes).
    assert_eq!(unique, 8);
    assert_eq!(c.sums().bytes_unique, 8);
}

/// Found by `cargo fuzz run engine`: a byte load at u64::MAX, the last byte of the address space, is 1 unique
/// byte; the fast path once took that address for its "no address yet" marker and counted 0.
#[test]
fn a_byte_at_the_top_of_the_address_space_is_one_unique_byte() {
    let instr = Instr::parse("LDG.E.U8").expect("listed op");
    let mut a = [None; WARP_LANES];
    a[7] = Some(u64::MAX);
    let warp = WarpAddrs(a);
    let cc = Cc::parse("7.0").expect("known CC");
    let c = warpscope::model::count::count(cc, &instr, &warp, None, &Config::default());
    // One lane, one byte (docs/model.md#global-memory: bytes unique is the union of the lanes' bytes).
    assert_eq!(c.sums().bytes_unique, 1);
    assert_eq!(c.sums().bytes_requested, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Print-parse round trip: an expression's warp, printed as a raw address list (the report's addresses,
    /// `-` for inactive lanes), parses back to the same addresses and costs the same.
    #[test]
    fn an_expression_printed_as_an_address_list_analyses_the_same(
        a in 0u64..300, b in 0u64..100_000, c in 1u64..40, shape in 0..3usize, op in 0..6usize, mask in 1u32..32,
    ) {
        const ROUND_TRIP_OPS: [&str; 6] = ["LDG.E.32", "LDG.E.64", "LDG.E.128", "LDS.32", "LDS.64", "STG.E.U16"];
        let size = [4, 8, 16, 4, 8, 2][op];
        let text = match shape {
            0 => format!("{}*lane + {} if lane < {mask}", a * size, b * size),
            1 => format!("({}*lane) ^ {}", a * size, b * size),
            _ => format!("{}*(lane/{c}) + {}", a * size, b * size),
        };
        let sc = warpscope::scenario::Scenario {
            lang: warpscope::lang::Lang::Expr,
            text,
            op: ROUND_TRIP_OPS[op].to_string(),
            ..warpscope::scenario::Scenario::default()
        };
        let first = sc.run().expect("the expression runs");
        let r = &sc.report(&first, 0, 0).expect("runs").expect("an issue");
        let list: Vec<String> = r.addresses.iter().map(|x| x.map_or("-".into(), |v| format!("{v:#x}"))).collect();
        let printed = warpscope::scenario::Scenario {
            lang: warpscope::lang::Lang::Addresses,
            text: format!("{}\n{}\n", ROUND_TRIP_OPS[op], list.join(" ")),
            op: String::new(),
            ..warpscope::scenario::Scenario::default()
        };
        let again = printed.run().expect("the printed list parses");
        let back = &printed.report(&again, 0, 0).expect("runs").expect("an issue");
        prop_assert_eq!(&back.addresses, &r.addresses);
        prop_assert_eq!(&back.cost, &r.cost);
        prop_assert_eq!(back.active_lanes, r.active_lanes);
    }

    /// Print-parse round trip for launch sizes: `Dim3`'s `XxYxZ` text parses back to itself.
    #[test]
    fn block_sizes_print_and_parse_back(x in 1u32..2000, y in 1u32..70, z in 1u32..70) {
        let d = warpscope::program::launch::Dim3 { x, y, z };
        prop_assert_eq!(warpscope::program::launch::Dim3::parse(&d.to_string(), "block"), Ok(d));
    }
}
