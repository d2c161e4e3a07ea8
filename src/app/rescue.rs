//! If the page hits a bug, it must not lose the user's work: the rescue saves the editors' text, shows what
//! happened and offers a reload; the reloaded page restores the text. The view itself is always in the URL,
//! so the last good state survives too.
//!
//! Two kinds of failure stop the page's module for good, and both end here:
//! - a Rust panic, through the panic hook. It is installed with [`yew::set_custom_panic_hook`], because Yew
//!   otherwise puts its own in place when the app is rendered, and ours would never run;
//! - a trap that is no panic (the wasm stack overflowing shows as a `RangeError`, an abort as a
//!   `RuntimeError`), through the window's `error` event: once the module has trapped, Yew's state is left
//!   borrowed and every later event fails, so the page is as dead as after a panic.

use std::cell::{Cell, RefCell};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Where the editors' text is kept across a reload after a crash.
const KEY: &str = "warpscope-rescue";

thread_local! {
    /// Every pane's text as the page last knew it (kept by [`remember`]): what a crash saves.
    static TEXTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Whether the rescue screen is up (it is shown once, whatever fails after).
    static SHOWN: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the panes' text for a crash to save. Cheap when nothing changed (the page calls it after every
/// change of its state).
pub fn remember<'a>(texts: impl ExactSizeIterator<Item = &'a str>) {
    TEXTS.with(|t| {
        let Ok(mut kept) = t.try_borrow_mut() else { return };
        kept.resize(texts.len(), String::new());
        for (k, text) in texts.enumerate() {
            if kept[k] != text {
                kept[k] = text.to_string();
            }
        }
    });
}

/// Installs the panic hook (so that Yew keeps it) and the listener for traps. Call before rendering.
pub fn install() {
    yew::set_custom_panic_hook(Box::new(|info| show(&info.to_string())));
    if let Some(w) = web_sys::window() {
        let on_error = Closure::<dyn Fn(web_sys::Event)>::new(|e: web_sys::Event| {
            if let Some(message) = fatal(&e) {
                show(&message);
            }
        });
        let _ = w.add_event_listener_with_callback("error", on_error.as_ref().unchecked_ref());
        on_error.forget();
    }
}

/// The message of an uncaught error that means the page's module stopped: a wasm trap (`RuntimeError`) or
/// a stack overflow (`RangeError`). Other errors (a resource that failed to load, a browser's benign
/// `ResizeObserver` report) leave the page running and are not the rescue's business.
fn fatal(e: &web_sys::Event) -> Option<String> {
    let error = js_sys::Reflect::get(e, &JsValue::from_str("error")).ok()?;
    let name = js_sys::Reflect::get(&error, &JsValue::from_str("name")).ok()?.as_string()?;
    if name != "RuntimeError" && name != "RangeError" {
        return None;
    }
    let message = js_sys::Reflect::get(&error, &JsValue::from_str("message")).ok().and_then(|m| m.as_string());
    Some(format!("{name}: {}", message.unwrap_or_default()))
}

/// Saves the text and shows the rescue screen (once), with plain DOM calls: the app itself can no longer
/// run.
pub fn show(message: &str) {
    web_sys::console::error_1(&format!("warpscope: {message}").into());
    if SHOWN.with(|s| s.replace(true)) {
        return;
    }
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    let texts = TEXTS.with(|t| t.try_borrow().map(|t| t.clone()).unwrap_or_default());
    if let Some(store) = web_sys::window().and_then(|w| w.session_storage().ok().flatten()) {
        if !texts.is_empty() {
            let _ = store.set_item(KEY, &texts.join("\u{0}"));
        }
    }
    let Ok(div) = doc.create_element("div") else { return };
    div.set_id("crash");
    let _ = div.set_attribute("role", "alert");
    if let Ok(p) = doc.create_element("p") {
        let kept = if texts.is_empty() { "" } else { " Your text is saved, and the link keeps your view:" };
        p.set_text_content(Some(&format!("warpscope hit a bug and stopped.{kept} reload to continue where you were.")));
        let _ = div.append_child(&p);
    }
    if let Ok(detail) = doc.create_element("p") {
        detail.set_class_name("crash-detail");
        detail.set_text_content(Some(&format!("What went wrong: {message}")));
        let _ = div.append_child(&detail);
    }
    if let Ok(button) = doc.create_element("button") {
        button.set_text_content(Some("reload"));
        button.set_id("crash-reload");
        // A listener, not an inline handler: the page's Content-Security-Policy forbids those.
        let reload = Closure::<dyn Fn()>::new(|| {
            if let Some(w) = web_sys::window() {
                let _ = w.location().reload();
            }
        });
        let _ = button.add_event_listener_with_callback("click", reload.as_ref().unchecked_ref());
        reload.forget();
        let _ = div.append_child(&button);
    }
    if let Some(body) = doc.body() {
        let _ = body.prepend_with_node_1(&div);
    }
}

/// The text saved by the rescue, if the last page stopped on a bug (read once).
pub fn take_saved() -> Option<Vec<String>> {
    let store = web_sys::window()?.session_storage().ok()??;
    let saved = store.get_item(KEY).ok()??;
    let _ = store.remove_item(KEY);
    Some(saved.split('\u{0}').map(String::from).collect())
}
