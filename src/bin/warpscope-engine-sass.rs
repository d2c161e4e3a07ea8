//! `warpscope-engine-sass`: the page's analysis worker for SASS panes (built with the SASS front end only, see
//! index.html). The loop itself is in `engine_worker`.

mod engine_worker;

fn main() {
    engine_worker::run();
}
