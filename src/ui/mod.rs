//! The web page (wasm32 only). It computes nothing itself: it parses the user's input with the core's
//! parsers, calls [`crate::analyze`] and shows the report. Errors are values all the way to the screen.

mod app;

pub use app::App;

/// Mounts the app on the page's body.
pub fn start() {
    yew::Renderer::<App>::new().render();
}
