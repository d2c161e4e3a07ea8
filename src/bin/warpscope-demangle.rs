//! `warpscope-demangle`: C++ kernel names (Itanium-mangled, as nvcc and clang write them) demangled.
//!
//! In the browser it is the page's demangler worker, loaded only when a SASS listing needs it: it receives
//! a JSON array of mangled symbols and answers a JSON array of `[symbol, demangled]` pairs (an empty
//! demangled name where the symbol cannot be read). The analysis workers carry no demangler of their own
//! (it would take the SASS worker past its size budget); they learn the names from the page. Natively,
//! `warpscope-demangle SYMBOL...` prints each name.

/// Each symbol with its demangled name, or an empty one.
fn answer(symbols: &[String]) -> Vec<(String, String)> {
    symbols.iter().map(|s| (s.clone(), warpscope::lang::params::demangle_symbol(s).unwrap_or_default())).collect()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
        let symbols: Vec<String> =
            serde_json::from_str(&msg.data().as_string().unwrap_or_default()).unwrap_or_default();
        let text = serde_json::to_string(&answer(&symbols)).unwrap_or_else(|_| "[]".to_string());
        let _ = reply.post_message(&JsValue::from_str(&text));
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // Messages sent before the wasm was loaded are dropped: say when the worker is listening.
    let _ = scope.post_message(&JsValue::from_str("ready"));
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let symbols: Vec<String> = std::env::args().skip(1).collect();
    if symbols.is_empty() {
        eprintln!("usage: warpscope-demangle SYMBOL...   (prints each demangled name, or nothing it cannot read)");
        std::process::exit(2);
    }
    for (s, d) in answer(&symbols) {
        println!("{s}\t{d}");
    }
}
