//! `warpscope-engine-memory`: the page's analysis worker for panes with the memory system on (docs/model.md#the-memory-system: L1
//! per SM, L2 and DRAM across warps and blocks). It carries every language's front end and the cache model,
//! which the other analysis workers leave out (Cargo.toml's `caches` feature); the page starts it only when a
//! pane turns the memory system on. The loop itself is in `engine_worker`.

mod engine_worker;

fn main() {
    engine_worker::run();
}
