//! JSON in the page goes through the browser's own `JSON.parse` / `JSON.stringify` and serde-wasm-bindgen,
//! so the page's module carries no JSON parser or printer of its own.

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::JsValue;

/// A value as JSON text (plain objects for maps, as JSON has them).
pub fn to_json<T: Serialize>(value: &T) -> String {
    let ser = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&ser)
        .ok()
        .and_then(|v| js_sys::JSON::stringify(&v).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

/// A value as indented JSON text, for files people read.
pub fn to_json_pretty<T: Serialize>(value: &T) -> String {
    let ser = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&ser)
        .ok()
        .and_then(|v| js_sys::JSON::stringify_with_replacer_and_space(&v, &JsValue::NULL, &JsValue::from_f64(2.0)).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

/// JSON text as a value.
pub fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let v = js_sys::JSON::parse(text).map_err(|e| e.as_string().unwrap_or_else(|| "not JSON".to_string()))?;
    serde_wasm_bindgen::from_value(v).map_err(|e| e.to_string())
}

/// A share link for a view, or `None` when the view is too large for a link (a pasted file of tens of
/// kilobytes): links stay short enough for every browser and for [`crate::share::decode`].
pub fn encode_view(view: &crate::share::ViewState) -> Option<String> {
    let total: usize = view.panes.iter().map(|p| p.text.len()).sum();
    if total > crate::share::MAX_LINK_CHARS * 4 {
        return None;
    }
    Some(crate::share::pack(to_json(view).as_bytes())).filter(|l| l.len() <= crate::share::MAX_LINK_CHARS)
}

/// The view a share link holds. What went wrong is said in words a user reads, never as the deserialiser's
/// or the browser's message.
pub fn decode_view(link: &str) -> Result<crate::share::ViewState, crate::share::ShareError> {
    use crate::share::ShareError;
    let bytes = crate::share::unpack(link)?;
    let text = String::from_utf8(bytes).map_err(|_| ShareError::Corrupt("its data is not text".into()))?;
    // A view is an object: anything else (a number, a list, which serde would take as a struct's fields) is not.
    if !text.trim_start().starts_with('{') {
        return Err(ShareError::Corrupt("its data is not a warpscope view".into()));
    }
    // In words, whatever the deserialiser's complaint (its messages name Rust types).
    let view = from_json(&text).map_err(|_| ShareError::Corrupt("its data is not a warpscope view".into()))?;
    crate::share::validate(view)
}

/// Reads a value the page's own workers wrote (serde-wasm-bindgen). Serde's `flatten` of an optional group of
/// fields (an instruction's memory or bank totals) learns that the group is absent from an error it then
/// drops; serde-wasm-bindgen makes each error a JS `Error`, and the browser records a stack for every one.
/// Twenty thousand instructions made twenty thousand stacks on the main thread, about a quarter of the time
/// spent reading them (Chromium's profiler). Stacks are switched off while the value is read and restored after.
pub fn from_worker<T: DeserializeOwned>(value: JsValue) -> Result<T, serde_wasm_bindgen::Error> {
    let global = js_sys::global();
    let error = js_sys::Reflect::get(&global, &JsValue::from_str("Error")).unwrap_or(JsValue::UNDEFINED);
    let key = JsValue::from_str("stackTraceLimit");
    let limit = js_sys::Reflect::get(&error, &key).ok().filter(|v| !v.is_undefined());
    if limit.is_some() {
        let _ = js_sys::Reflect::set(&error, &key, &JsValue::from_f64(0.0));
    }
    let out = serde_wasm_bindgen::from_value(value);
    if let Some(limit) = limit {
        let _ = js_sys::Reflect::set(&error, &key, &limit);
    }
    out
}
