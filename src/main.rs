//! The `warpscope` binary: the command line natively, the lab page on wasm32.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(warpscope::cli::run(std::env::args_os()));
}

#[cfg(target_arch = "wasm32")]
fn main() {
    warpscope::app::start();
}
