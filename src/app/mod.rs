//! The web page (wasm32 only). It computes nothing itself: its analyses run in a web worker (the
//! [`crate::service`], see `engine.rs`), and it draws the replies. Errors are values all the way to the
//! screen.
//!
//! May import: anything of the library (it is a front end); nothing imports it except `main`. Its main thread
//! runs no analysis (`tests/layers.rs`).

mod browser;
mod chart;
mod cite;
mod common;
mod editor;
pub mod engine;
mod figure;
pub mod json;
mod lab;
mod perf;
pub mod rescue;
mod slides;
pub mod source;
pub mod state;
mod view;

pub use engine::LocalEngine;
pub use view::{App, AppProps};

/// Mounts the app on the page's body, after installing the hook that keeps the user's work if it crashes.
pub fn start() {
    rescue::install();
    yew::Renderer::<App>::new().render();
}
