//! Any text as an address expression, with any instruction from the first byte and a 2-warp block.
#![no_main]
use libfuzzer_sys::fuzz_target;
use warpscope::program::launch::Dim3;
use warpscope::lang::Lang;
use warpscope::scenario::Scenario;

const OPS: [&str; 8] = ["LDG.E.32", "LDG.32", "LDS.128", "LDL.64", "LD.E.64", "ST.E.U8", "STS.64", "LDG.E.CG.128"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    if let Ok(text) = std::str::from_utf8(rest) {
        let sc = Scenario {
            lang: Lang::Expr,
            text: text.to_string(),
            op: OPS[usize::from(first) % OPS.len()].to_string(),
            block: Dim3::linear(64),
            sets: vec!["base=0x1000".into()],
            ..Scenario::default()
        };
        let _ = sc.run();
    }
});
