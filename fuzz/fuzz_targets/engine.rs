//! The engine on any warp: any CC, instruction, settings, addresses and Plg; the fast path must give exactly
//! the detailed path's numbers (a difference is a crash).
#![no_main]
use libfuzzer_sys::fuzz_target;
use warpscope::model::count::{count, Counts};
use warpscope::{model::cost as engine, BankMode, Config, Instr, L1Choice, LaneSet, WarpAddrs, ALL_CCS};

const OPS: [&str; 16] = [
    "LDG.E.U8",
    "LDG.E.64",
    "LDG.E.128",
    "LDG.E.CG.32",
    "STG.E.16",
    "LD.E.32",
    "LD.E.128",
    "ST.E.64",
    "LD.32",
    "LDS.U16",
    "LDS.32",
    "LDS.64",
    "LDS.128",
    "LDL.32",
    "STL.128",
    "LDG.E.CI.32",
];

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let cc = ALL_CCS[usize::from(data[0]) % ALL_CCS.len()];
    let instr = Instr::parse(OPS[usize::from(data[1]) % OPS.len()]).expect("listed op");
    let cfg = Config {
        l1: [L1Choice::Default, L1Choice::On, L1Choice::Off][usize::from(data[2]) % 3],
        bank_mode: if data[3] & 1 == 1 { BankMode::EightByte } else { BankMode::FourByte },
        strict_align: data[3] & 2 == 2,
        ..Config::default()
    };
    let plg = (data[3] & 4 == 4).then(|| LaneSet(u32::from_le_bytes([data[4], data[5], data[6], data[7]])));
    let mut a = [None; 32];
    for (lane, chunk) in data[8..].chunks(9).take(32).enumerate() {
        if chunk.len() == 9 && chunk[0] & 1 == 1 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&chunk[1..]);
            let v = u64::from_le_bytes(b);
            // Mix far addresses with ones near the windows, where generic splits happen.
            a[lane] = Some(match chunk[0] >> 1 & 3 {
                0 => v,
                1 => warpscope::model::access::DEFAULT_SHARED_WINDOW + (v & 0xffff),
                2 => warpscope::model::access::DEFAULT_LOCAL_WINDOW + (v & 0xffff),
                _ => v & 0xffff,
            });
            if !instr.extended {
                a[lane] = a[lane].map(|x| x & 0xffff_ffff);
            }
        }
    }
    let warp = WarpAddrs(a);
    let r = engine::analyze_lanes(cc, &instr, &warp, plg, &cfg);
    let c = count(cc, &instr, &warp, plg, &cfg);
    let e = Counts { misaligned: c.misaligned, ..Counts::of_report(&r) };
    assert_eq!(c, e);
});
