//! `warpscope-zip`: files packed into one zip archive ([`warpscope::export::zip_files`]).
//!
//! In the browser it is the page's zip worker, started when "all steps" is pressed: it receives an array
//! `[name, bytes, name, bytes, ...]` (strings and `Uint8Array`s) and answers the archive as a `Uint8Array`, or
//! a message string when it cannot. The archive code (CRC tables included) stays out of the page's main
//! module, and packing megabytes of frames does not hold up the page. Natively, `warpscope-zip OUT.zip
//! FILE...` packs the files under their base names.

#[cfg(target_arch = "wasm32")]
fn main() {
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
        let items = js_sys::Array::from(&msg.data());
        let mut files = Vec::with_capacity(items.length() as usize / 2);
        for k in (0..items.length()).step_by(2) {
            let name = items.get(k).as_string().unwrap_or_else(|| format!("file{k}"));
            let bytes = items.get(k + 1).dyn_into::<js_sys::Uint8Array>().map(|a| a.to_vec()).unwrap_or_default();
            files.push((name, bytes));
        }
        let answer = match warpscope::export::zip_files(&files) {
            Ok(zip) => JsValue::from(js_sys::Uint8Array::from(zip.as_slice())),
            Err(e) => JsValue::from_str(&e),
        };
        let _ = reply.post_message(&answer);
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // Messages sent before the wasm was loaded are dropped: say when the worker is listening.
    let _ = scope.post_message(&JsValue::from_str("ready"));
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, inputs)) = args.split_first().filter(|(_, rest)| !rest.is_empty()) else {
        eprintln!("usage: warpscope-zip OUT.zip FILE...   (packs the files, under their base names, uncompressed)");
        std::process::exit(2);
    };
    let run = || -> Result<(), String> {
        let mut files = Vec::new();
        for path in inputs {
            let name =
                std::path::Path::new(path).file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned());
            files.push((name, std::fs::read(path).map_err(|e| format!("{path}: {e}"))?));
        }
        std::fs::write(out, warpscope::export::zip_files(&files)?).map_err(|e| format!("{out}: {e}"))
    };
    if let Err(e) = run() {
        eprintln!("warpscope-zip: {e}");
        std::process::exit(1);
    }
}
