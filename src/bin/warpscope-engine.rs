//! `warpscope-engine`: the page's analysis worker for every language but PTX (built without the PTX front end,
//! see index.html). The loop itself is in `engine_worker`.

mod engine_worker;

fn main() {
    engine_worker::run();
}
