//! The page's analysis worker loop, shared by `warpscope-engine`, `-ptx` and `-sass` (the same code
//! built with different language front ends, see Cargo.toml's features). It receives requests (a scenario and
//! the issue the figure shows) and answers with progress, the result, the figure's issue and the checked fixes
//! ([`warpscope::service`]), so that no analysis runs on the page's main thread. Natively it has nothing to
//! do: the `warpscope` command line runs the same service code directly.

#[cfg(target_arch = "wasm32")]
pub fn run() {
    use serde::Serialize;
    use std::cell::RefCell;
    use warpscope::service::{serve, Cache, Reply, Request};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;

    thread_local! {
        static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
    }
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
        // Addresses are 64-bit: they travel as BigInts, never as lossy JS numbers.
        let ser = serde_wasm_bindgen::Serializer::new().serialize_large_number_types_as_bigints(true);
        let mut post = |r: Reply| {
            // A result of many instructions goes in parts, each read quickly on the page's main thread.
            let (parts, r) = warpscope::service::split_result(r);
            for part in parts {
                if let Ok(v) = part.serialize(&ser) {
                    let _ = reply_to.post_message(&v);
                }
            }
            if let Ok(v) = r.serialize(&ser) {
                let _ = reply_to.post_message(&v);
            }
        };
        match serde_wasm_bindgen::from_value::<Request>(msg.data()) {
            Ok(req) => CACHE.with(|c| serve(&req, &mut c.borrow_mut(), &mut post)),
            Err(e) => {
                post(Reply::Error {
                    id: 0,
                    field: warpscope::scenario::Field::Pattern,
                    message: format!("1:1: the page sent a request the analysis worker cannot read ({e})"),
                });
                post(Reply::Done { id: 0 });
            }
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // Messages sent before the wasm was loaded are dropped: say when the worker is listening.
    let _ = scope.post_message(&JsValue::from_str("ready"));
}

#[cfg(not(target_arch = "wasm32"))]
pub fn run() {
    eprintln!("warpscope's analysis workers run in the page (WebAssembly); natively, use `warpscope analyze`");
    std::process::exit(2);
}
