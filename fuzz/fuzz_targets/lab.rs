//! Any text as a lab file: a checked course or an error with a position, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = warpscope::teach::lab_file::parse(text);
    }
});
