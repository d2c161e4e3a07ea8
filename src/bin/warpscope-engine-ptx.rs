//! `warpscope-engine-ptx`: the page's analysis worker for PTX panes (built with the PTX front end only, see
//! index.html). The loop itself is in `engine_worker`.

mod engine_worker;

fn main() {
    engine_worker::run();
}
