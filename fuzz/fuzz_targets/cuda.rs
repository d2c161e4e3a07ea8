//! Any text as a CUDA file or snippet: an answer or an error, never a panic (one warp, so each run is quick).
//! The time limit is a tenth of a second, not the command line's 60: an endless loop (easy to make by
//! mutating a branch) must end in the limit's error. About one grown input in a hundred is one, and at a one
//! second limit those took most of the fuzzer's time.
#![no_main]
use libfuzzer_sys::fuzz_target;
use warpscope::lang::Lang;
use warpscope::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let mut sc = Scenario { lang: Lang::Cuda, text: text.to_string(), op: String::new(), ..Scenario::default() };
        sc.limits.max_seconds = 0.1;
        let _ = sc.run();
    }
});
