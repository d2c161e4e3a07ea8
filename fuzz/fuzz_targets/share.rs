//! Any text as a share link: a view or an error, never a panic; a decoded view encodes and decodes to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use warpscope::share::{decode, encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(view) = decode(text) {
            assert_eq!(decode(&encode(&view)), Ok(view));
        }
    }
});
