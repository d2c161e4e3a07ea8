//! The web page (wasm32 only). It computes nothing itself: it runs [`crate::scenario::Scenario`]s and draws
//! the results. Errors are values all the way to the screen.

mod app;
mod browser;
mod figure;
pub mod json;
mod lab;
mod perf;
pub mod rescue;
pub mod state;

pub use app::App;

/// Mounts the app on the page's body, after installing the hook that keeps the user's work if it crashes.
pub fn start() {
    rescue::install();
    yew::Renderer::<App>::new().render();
}
