//! The few places the page talks to the browser: the URL, the clipboard and downloads. Each returns a
//! `Result`; failures become notices on the page, never panics.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

fn window() -> Result<web_sys::Window, String> {
    web_sys::window().ok_or_else(|| "no browser window".to_string())
}

/// The link text after `#`, and whether `?embed` is in the query.
pub fn location() -> (Option<String>, bool) {
    let Ok(loc) = window().map(|w| w.location()) else { return (None, false) };
    let hash = loc.hash().ok().map(|h| h.trim_start_matches('#').to_string()).filter(|h| !h.is_empty());
    let search = loc.search().unwrap_or_default();
    let embed = search.trim_start_matches('?').split('&').any(|kv| kv == "embed" || kv.starts_with("embed="));
    (hash, embed)
}

/// The page's URL without query or hash.
pub fn base_url() -> String {
    window()
        .ok()
        .and_then(|w| {
            let l = w.location();
            Some(format!("{}{}", l.origin().ok()?, l.pathname().ok()?))
        })
        .unwrap_or_default()
}

thread_local! {
    /// The link the page last wrote after `#`.
    static OWN_HASH: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Whether `link` is the one the page itself last wrote after `#` (not one pasted by the user).
pub fn is_own_hash(link: &str) -> bool {
    OWN_HASH.with(|h| *h.borrow() == link)
}

/// Writes `link` as the URL's hash: as a new history entry (`push`, so that Back returns to the view before),
/// or in place of the current one.
pub fn set_hash(link: &str, push: bool) {
    OWN_HASH.with(|h| link.clone_into(&mut h.borrow_mut()));
    if let Ok(w) = window() {
        if let Ok(h) = w.history() {
            let search = w.location().search().unwrap_or_default();
            let url = format!("{search}#{link}");
            let _ = if push {
                h.push_state_with_url(&JsValue::NULL, "", Some(&url))
            } else {
                h.replace_state_with_url(&JsValue::NULL, "", Some(&url))
            };
        }
    }
}

/// Copies text to the clipboard (asynchronously; the browser may refuse outside a user gesture).
pub fn copy(text: &str) -> Result<(), String> {
    let nav = window()?.navigator();
    let clip = js_sys::Reflect::get(&nav, &JsValue::from_str("clipboard")).map_err(|_| "no clipboard".to_string())?;
    let write = js_sys::Reflect::get(&clip, &JsValue::from_str("writeText"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| "this browser offers no clipboard here; copy the text from the box".to_string())?;
    write.call1(&clip, &JsValue::from_str(text)).map(|_| ()).map_err(|_| "the clipboard refused the text".to_string())
}

fn download_blob(name: &str, blob: &web_sys::Blob) -> Result<(), String> {
    let url =
        web_sys::Url::create_object_url_with_blob(blob).map_err(|_| "could not prepare the download".to_string())?;
    let doc = window()?.document().ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(|_| "no link element".to_string())?
        .dyn_into()
        .map_err(|_| "no link element".to_string())?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// Offers `text` as a file download.
pub fn download_text(name: &str, text: &str, mime: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)
        .map_err(|_| "could not build the file".to_string())?;
    download_blob(name, &blob)
}

/// Offers `bytes` as a file download.
pub fn download_bytes(name: &str, bytes: &[u8], mime: &str) -> Result<(), String> {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array);
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts)
        .map_err(|_| "could not build the file".to_string())?;
    download_blob(name, &blob)
}

/// An SVG document drawn at 2x on a canvas, as PNG bytes.
pub async fn png_bytes(svg: &str, width: f64, height: f64) -> Result<Vec<u8>, String> {
    use wasm_bindgen_futures::JsFuture;
    let parts = js_sys::Array::of1(&JsValue::from_str(svg));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("image/svg+xml");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)
        .map_err(|_| "could not build the image".to_string())?;
    let url =
        web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| "could not prepare the image".to_string())?;
    let img = web_sys::HtmlImageElement::new().map_err(|_| "no image".to_string())?;
    let loaded = js_sys::Promise::new(&mut |resolve, reject| {
        img.set_onload(Some(&resolve));
        img.set_onerror(Some(&reject));
    });
    img.set_src(&url);
    let result = JsFuture::from(loaded).await;
    let _ = web_sys::Url::revoke_object_url(&url);
    result.map_err(|_| "the figure could not be drawn as an image".to_string())?;
    let doc = window()?.document().ok_or("no document")?;
    let canvas: web_sys::HtmlCanvasElement = doc
        .create_element("canvas")
        .map_err(|_| "no canvas".to_string())?
        .dyn_into()
        .map_err(|_| "no canvas".to_string())?;
    canvas.set_width((width * 2.0) as u32);
    canvas.set_height((height * 2.0) as u32);
    let ctx = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
        .ok_or("this browser gives no canvas to draw the PNG on")?;
    let _ = ctx.scale(2.0, 2.0);
    ctx.draw_image_with_html_image_element(&img, 0.0, 0.0).map_err(|_| "the figure could not be drawn".to_string())?;
    let encoded = js_sys::Promise::new(&mut |resolve, _| {
        let _ = canvas.to_blob(&resolve);
    });
    let png: web_sys::Blob = JsFuture::from(encoded)
        .await
        .ok()
        .and_then(|b| b.dyn_into().ok())
        .ok_or("the browser could not encode the PNG")?;
    let buffer = JsFuture::from(png.array_buffer()).await.map_err(|_| "the PNG could not be read back".to_string())?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Renders an SVG document at 2x on a canvas and offers it as a PNG download; failures come back as a
/// message through `done`.
pub fn download_png(name: &str, svg: &str, width: f64, height: f64, done: impl FnOnce(Result<(), String>) + 'static) {
    let (name, svg) = (name.to_string(), svg.to_string());
    wasm_bindgen_futures::spawn_local(async move {
        let r = match png_bytes(&svg, width, height).await {
            Ok(bytes) => download_bytes(&name, &bytes, "image/png"),
            Err(e) => Err(e),
        };
        done(r);
    });
}

/// The `?lab=` parameter: a lab name (`memory` loads `labs/memory.toml`) or a URL.
pub fn lab_param() -> Option<String> {
    let search = window().ok()?.location().search().ok()?;
    search.trim_start_matches('?').split('&').find_map(|kv| {
        kv.strip_prefix("lab=")
            .map(|v| js_sys::decode_uri_component(v).ok().and_then(|s| s.as_string()).unwrap_or_else(|| v.to_string()))
    })
}

/// Reads a value from localStorage.
pub fn load(key: &str) -> Option<String> {
    window().ok()?.local_storage().ok()??.get_item(key).ok()?
}

/// Writes a value to localStorage (quietly does nothing where storage is off).
pub fn save(key: &str, value: &str) {
    if let Some(s) = window().ok().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = s.set_item(key, value);
    }
}

/// The directory URL the page was served from (where Trunk put the worker's files).
fn base_dir() -> String {
    let url = base_url();
    match url.rfind('/') {
        Some(i) => url[..=i].to_string(),
        None => format!("{url}/"),
    }
}

/// Starts one of the page's workers (`warpscope-lab`, `warpscope-engine`): Trunk builds each as its own wasm
/// module with a loader script next to the page.
pub fn start_worker(name: &str) -> Result<web_sys::Worker, String> {
    let base = base_dir();
    let script =
        format!("importScripts(\"{base}{name}.js\");wasm_bindgen({{ module_or_path: \"{base}{name}_bg.wasm\" }});");
    let parts = js_sys::Array::of1(&JsValue::from_str(&script));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("text/javascript");
    let fail = || format!("this browser could not start a web worker ({name}), which warpscope needs");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(|_| fail())?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| fail())?;
    let worker = web_sys::Worker::new(&url).map_err(|_| fail());
    let _ = web_sys::Url::revoke_object_url(&url);
    worker
}

/// Demangles kernel names in the `warpscope-demangle` worker (started for this and stopped after) and calls
/// `done` with (mangled, demangled) pairs; a name the worker could not read, or every name when the worker
/// could not start or failed, comes back with an empty demangled name.
pub fn demangle(symbols: Vec<String>, done: impl FnOnce(Vec<(String, String)>) + 'static) {
    type Done = Box<dyn FnOnce(Vec<(String, String)>)>;
    let unknown: Vec<(String, String)> = symbols.iter().map(|s| (s.clone(), String::new())).collect();
    let once: std::rc::Rc<std::cell::RefCell<Option<Done>>> =
        std::rc::Rc::new(std::cell::RefCell::new(Some(Box::new(done))));
    let Ok(worker) = start_worker("warpscope-demangle") else {
        if let Some(f) = once.borrow_mut().take() {
            f(unknown);
        }
        return;
    };
    let (w2, answered) = (worker.clone(), std::rc::Rc::clone(&once));
    // Through the browser's JSON (super::json): the page's module carries no JSON code of its own.
    let request = super::json::to_json(&symbols);
    let fallback = unknown.clone();
    let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
        let data = msg.data().as_string().unwrap_or_default();
        if data == "ready" {
            let _ = w2.post_message(&JsValue::from_str(&request));
            return;
        }
        let pairs = super::json::from_json(&data).unwrap_or_else(|_| fallback.clone());
        if let Some(f) = answered.borrow_mut().take() {
            f(pairs);
        }
        w2.terminate();
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let (w3, failed) = (worker.clone(), once);
    let onerror = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
        e.prevent_default();
        if let Some(f) = failed.borrow_mut().take() {
            f(unknown.clone());
        }
        w3.terminate();
    });
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onerror.forget();
}

thread_local! {
    /// Set by the cancel button while "all steps" draws its frames.
    static EXPORT_CANCELLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

thread_local! {
    /// Set when Back or Forward (or a pasted link) brought a view: its first settled address replaces the
    /// entry instead of adding one (which would cut off the entries after it).
    static ARRIVED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that the view now shown came from the address bar (Back, Forward, a pasted link).
pub fn note_arrival() {
    ARRIVED.with(|a| a.set(true));
}

/// Whether the view came from the address bar since this was last asked.
pub fn take_arrival() -> bool {
    ARRIVED.with(|a| a.replace(false))
}

/// Asks the running "all steps" export to stop (or clears the request before one starts).
pub fn set_export_cancelled(on: bool) {
    EXPORT_CANCELLED.with(|c| c.set(on));
}

/// Whether the running export was asked to stop.
pub fn export_cancelled() -> bool {
    EXPORT_CANCELLED.with(|c| c.get())
}

/// What the page embeds (`?embed=KIND`): `slides` (the figures), `chart` (the memory chart), or `None`.
pub fn embed_kind() -> Option<String> {
    let q = window().ok().and_then(|w| w.location().search().ok())?;
    q.trim_start_matches('?').split('&').find_map(|kv| kv.strip_prefix("embed=")).map(str::to_string)
}

/// Whether the page is embedded in a slide deck (`?embed=slides`, or the memory chart's `?embed=chart`): the
/// keys pass back to the deck at the first and last step.
pub fn slides_mode() -> bool {
    matches!(embed_kind().as_deref(), Some("slides" | "chart"))
}

/// Takes the keyboard focus into this embedded page, so that a presenter's clicker steps the figure: the
/// frame's window and its main element (which has `tabindex="-1"`).
pub fn focus_embed() {
    HANDED_BACK.with(|h| h.set(false));
    let Ok(w) = window() else { return };
    let _ = w.focus();
    if let Some(el) = w.document().and_then(|d| d.get_element_by_id("embed-main")) {
        if let Ok(h) = el.dyn_into::<web_sys::HtmlElement>() {
            let _ = h.focus();
        }
    }
}

thread_local! {
    /// The keys were handed back to the deck ([`hand_back_to_deck`]) since the frame last took them.
    static HANDED_BACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

thread_local! {
    /// When the deck last showed this frame's slide (ms since the epoch), while reveal.js may still take the
    /// focus back from the frame once; `None` after that.
    static SLIDE_SHOWN: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
    /// The listeners of [`on_slide_start`], kept for the page's life.
    static SLIDE_LISTENERS: std::cell::RefCell<Vec<gloo_events::EventListener>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Calls `arrive` whenever the deck around this frame shows its slide (reveal.js posts `slide:start` to the
/// iframes of the slide it arrives on), and takes the keyboard focus into the frame ([`focus_embed`]). reveal.js
/// blurs an iframe that takes the focus in the first second after its slide starts (its
/// `preventIframeAutoFocus`), once: the focus is taken back then (unless the page handed the keys back).
pub fn on_slide_start(arrive: Box<dyn Fn()>) {
    let Ok(w) = window() else { return };
    let message = gloo_events::EventListener::new(&w, "message", move |e| {
        let data = e.dyn_ref::<web_sys::MessageEvent>().map(|m| m.data());
        if data.and_then(|d| d.as_string()).as_deref() == Some("slide:start") {
            SLIDE_SHOWN.with(|a| a.set(Some(js_sys::Date::now())));
            arrive();
            focus_embed();
        }
    });
    let blur = gloo_events::EventListener::new(&w, "blur", move |_| {
        let recent = SLIDE_SHOWN.with(|a| a.take()).is_some_and(|t| js_sys::Date::now() - t < 1500.0);
        if !HANDED_BACK.with(|h| h.replace(false)) && recent {
            gloo_timers::callback::Timeout::new(0, focus_embed).forget();
        }
    });
    SLIDE_LISTENERS.with(|l| l.borrow_mut().extend([message, blur]));
}

/// Hands the presenter's keys back to the deck around this frame: reveal.js's postMessage API
/// (`{"method": "next"}` / `"prev"`), a plain `{"warpscope": "next"}` message for other decks, and the focus
/// returned to the parent page (so Slidev's and any deck's own key handling sees the next key).
pub fn hand_back_to_deck(forward: bool) {
    HANDED_BACK.with(|h| h.set(true));
    let Ok(w) = window() else { return };
    let Ok(Some(parent)) = w.parent() else { return };
    if parent == w {
        return;
    }
    let method = if forward { "next" } else { "prev" };
    let _ = parent.post_message(&JsValue::from_str(&format!("{{\"method\":\"{method}\",\"args\":[]}}")), "*");
    let _ = parent.post_message(&JsValue::from_str(&format!("{{\"warpscope\":\"{method}\"}}")), "*");
    if let Some(el) = w.document().and_then(|d| d.active_element()) {
        if let Ok(h) = el.dyn_into::<web_sys::HtmlElement>() {
            let _ = h.blur();
        }
    }
    let _ = parent.focus();
}

/// Sets each `<select data-value=...>` to its value.
pub fn sync_selects() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    let Ok(list) = doc.query_selector_all("select[data-value]") else { return };
    for k in 0..list.length() {
        if let Some(sel) = list.item(k).and_then(|n| n.dyn_into::<web_sys::HtmlSelectElement>().ok()) {
            let want = sel.get_attribute("data-value").unwrap_or_default();
            if sel.value() != want {
                sel.set_value(&want);
            }
        }
    }
}

/// Whether the system asks for dark colours (`prefers-color-scheme: dark`).
pub fn prefers_dark() -> bool {
    media("(prefers-color-scheme: dark)")
}

/// Whether the page is as narrow as a phone's (the style sheet's phone layout): the figure is then laid out
/// 16 lanes a row, to fit the screen's width.
pub fn narrow() -> bool {
    media("(max-width: 600px)")
}

fn media(query: &str) -> bool {
    web_sys::window().and_then(|w| w.match_media(query).ok().flatten()).is_some_and(|m| m.matches())
}

/// Packs files into one zip archive in the `warpscope-zip` worker (started for this and stopped after).
pub async fn zip(files: Vec<(String, Vec<u8>)>) -> Result<Vec<u8>, String> {
    let worker = start_worker("warpscope-zip")?;
    let items = js_sys::Array::new();
    for (name, bytes) in &files {
        items.push(&JsValue::from_str(name));
        items.push(&js_sys::Uint8Array::from(bytes.as_slice()));
    }
    let answer = js_sys::Promise::new(&mut |resolve, reject| {
        let w2 = worker.clone();
        let items = items.clone();
        let onmessage = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
            let data = msg.data();
            if data.as_string().as_deref() == Some("ready") {
                let _ = w2.post_message(&items);
            } else {
                let _ = resolve.call1(&JsValue::NULL, &data);
            }
        });
        worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
        onmessage.forget();
        let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            e.prevent_default();
            let _ = reject.call1(&JsValue::NULL, &JsValue::from_str("the zip worker stopped"));
        });
        worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
        onerror.forget();
    });
    let result = wasm_bindgen_futures::JsFuture::from(answer).await;
    worker.terminate();
    let data = result.map_err(|e| e.as_string().unwrap_or_else(|| "the zip worker stopped".to_string()))?;
    match data.dyn_into::<js_sys::Uint8Array>() {
        Ok(bytes) => Ok(bytes.to_vec()),
        Err(message) => Err(message.as_string().unwrap_or_else(|| "the zip worker answered nothing".to_string())),
    }
}

/// A lab loaded and checked by the lab worker.
pub struct LoadedLab {
    /// The checked course, as JSON.
    pub course: String,
    /// The URL it was read from.
    pub url: String,
    /// The other site it came from, `None` for this site.
    pub origin: Option<String>,
}

/// Loads the lab that `?lab=` names in the lab worker (`warpscope-lab`), which resolves it against this page,
/// checks where it comes from, reads it with a size limit and compiles it: the file's text never reaches
/// the page's main thread. `done` gets the lab or the message to show.
pub fn load_lab(param: String, done: impl FnOnce(Result<LoadedLab, String>) + 'static) -> Result<(), String> {
    let worker = start_worker("warpscope-lab")?;
    let w2 = worker.clone();
    // Whichever comes first, the answer or a failure, reports once.
    type Done = Box<dyn FnOnce(Result<LoadedLab, String>)>;
    let fail_once: std::rc::Rc<std::cell::RefCell<Option<Done>>> =
        std::rc::Rc::new(std::cell::RefCell::new(Some(Box::new(done))));
    let done = std::rc::Rc::clone(&fail_once);
    let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
        let data = msg.data().as_string().unwrap_or_default();
        if data == "ready" {
            let ask = js_sys::Array::of2(&JsValue::from_str(&param), &JsValue::from_str(&base_dir()));
            let _ = w2.post_message(&ask);
            return;
        }
        // The worker answers {"course": ..., "url": ..., "origin": ...} or {"error": "..."}.
        let reply = js_sys::JSON::parse(&data).unwrap_or(JsValue::NULL);
        let field = |name: &str| {
            js_sys::Reflect::get(&reply, &JsValue::from_str(name)).ok().filter(|v| !v.is_undefined() && !v.is_null())
        };
        let result = match (field("course"), field("error").and_then(|e| e.as_string())) {
            (Some(c), _) => js_sys::JSON::stringify(&c)
                .ok()
                .and_then(|s| s.as_string())
                .map(|course| LoadedLab {
                    course,
                    url: field("url").and_then(|u| u.as_string()).unwrap_or_default(),
                    origin: field("origin").and_then(|o| o.as_string()),
                })
                .ok_or_else(|| "the lab reader gave no answer".to_string()),
            (None, Some(e)) => Err(e),
            _ => Err("the lab reader gave no answer".to_string()),
        };
        if let Some(f) = done.borrow_mut().take() {
            f(result);
        }
        w2.terminate();
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // If the reader itself fails on a file, say so instead of waiting for an answer that never comes.
    let (w3, failed) = (worker.clone(), std::rc::Rc::clone(&fail_once));
    let onerror = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
        e.prevent_default();
        if let Some(f) = failed.borrow_mut().take() {
            f(Err("The lab reader stopped on this file; check it with `warpscope-lab FILE.toml`".to_string()));
        }
        w3.terminate();
    });
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onerror.forget();
    Ok(())
}
