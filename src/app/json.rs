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
