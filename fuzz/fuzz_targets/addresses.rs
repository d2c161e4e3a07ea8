//! Any text as a addresses pattern: an answer or an error, never a panic (one warp, so each run is quick).
#![no_main]
use libfuzzer_sys::fuzz_target;
use warpscope::lang::Lang;
use warpscope::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let sc = Scenario { lang: Lang::Addresses, text: text.to_string(), op: String::new(), ..Scenario::default() };
        let _ = sc.run();
    }
});
