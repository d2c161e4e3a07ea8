//! `warpscope-engine`: the page's analysis worker for expressions, address lists and layouts (built without
//! any front end for a language of code, see index.html), what the default view and most lab exercises use.
//! The loop itself is in `engine_worker`.

mod engine_worker;

fn main() {
    engine_worker::run();
}
