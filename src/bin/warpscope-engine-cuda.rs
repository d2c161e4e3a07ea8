//! `warpscope-engine-cuda`: the page's analysis worker for CUDA panes (built with the CUDA front end only, see
//! index.html), started when a pane first shows CUDA. The loop itself is in `engine_worker`.

mod engine_worker;

fn main() {
    engine_worker::run();
}
