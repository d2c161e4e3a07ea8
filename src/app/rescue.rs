//! If the page hits a bug (a panic), it must not lose the user's work: the hook saves the editors' text,
//! shows what happened and offers a reload; the reloaded page restores the text. The view itself is always
//! in the URL, so the last good state survives too.

use wasm_bindgen::JsCast;

/// Where the editors' text is kept across a reload after a panic.
const KEY: &str = "warpscope-rescue";

/// Installs the panic hook.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
        // Save every editor's text before anything else.
        let texts: Vec<String> = ["#pattern", "#pattern-b"]
            .iter()
            .filter_map(|sel| doc.query_selector(sel).ok().flatten())
            .filter_map(|e| match e.dyn_ref::<web_sys::HtmlTextAreaElement>() {
                Some(t) => Some(t.value()),
                None => super::editor::editor_text(&e),
            })
            .collect();
        if let Some(store) = web_sys::window().and_then(|w| w.session_storage().ok().flatten()) {
            let _ = store.set_item(KEY, &texts.join("\u{0}"));
        }
        // Say so on the page, with plain DOM calls (the app itself can no longer run).
        if let (Ok(div), Some(body)) = (doc.create_element("div"), doc.body()) {
            div.set_id("crash");
            div.set_attribute("role", "alert").ok();
            div.set_text_content(Some(&format!(
                "warpscope hit a bug and stopped: {message}. Your text is saved and the link keeps your view: reload to continue."
            )));
            if let Ok(button) = doc.create_element("button") {
                button.set_text_content(Some("reload"));
                button.set_id("crash-reload");
                // A listener, not an inline handler: the page's Content-Security-Policy forbids those.
                let reload = wasm_bindgen::closure::Closure::<dyn Fn()>::new(|| {
                    if let Some(w) = web_sys::window() {
                        let _ = w.location().reload();
                    }
                });
                let _ = button.add_event_listener_with_callback("click", reload.as_ref().unchecked_ref());
                reload.forget();
                let _ = div.append_child(&button);
            }
            let _ = body.prepend_with_node_1(&div);
        }
        web_sys::console::error_1(&format!("warpscope: {message}").into());
    }));
}

/// The text saved by the panic hook, if the last page stopped on a bug (read once).
pub fn take_saved() -> Option<Vec<String>> {
    let store = web_sys::window()?.session_storage().ok()??;
    let saved = store.get_item(KEY).ok()??;
    let _ = store.remove_item(KEY);
    Some(saved.split('\u{0}').map(String::from).collect())
}
