//! `warpscope-lab`: reads a lab file (TOML with Markdown) and writes the checked, compiled lab as JSON.
//!
//! In the browser it is the page's lab worker: it receives the file's text, answers `{"course": ...}` or
//! `{"error": "line:column: ..."}`, and keeps the TOML and Markdown parsers out of the page's main module.
//! Natively, `warpscope-lab FILE.toml` prints the same JSON, or the error with exit code 2.

/// Compiles a lab file's text into the worker's answer.
fn answer(text: &str) -> String {
    match warpscope::teach::lab_file::parse(text) {
        Ok(course) => serde_json::json!({ "course": course }).to_string(),
        Err(e) => serde_json::json!({ "error": e.to_string() }).to_string(),
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
        let text = msg.data().as_string().unwrap_or_default();
        let _ = reply.post_message(&JsValue::from_str(&answer(&text)));
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // Messages sent before the wasm was loaded are dropped: say when the worker is listening.
    let _ = scope.post_message(&JsValue::from_str("ready"));
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: warpscope-lab FILE.toml   (prints the checked lab as JSON)");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            std::process::exit(2);
        }
    };
    match warpscope::teach::lab_file::parse(&text) {
        Ok(_) => println!("{}", answer(&text)),
        Err(e) => {
            eprintln!("error: {path} {e}");
            std::process::exit(2);
        }
    }
}
