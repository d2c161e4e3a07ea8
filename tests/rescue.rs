//! The rescue screen in a browser (src/app/rescue.rs): a panic after the page has rendered shows it, with the
//! user's text saved for the reload. Yew installs its own panic hook when an app is rendered unless one was
//! set through it, so this mounts the page the way `app::start` does, rescue first, then the render.
//!
//! A test binary of its own: after a panic the module's panic state stays set, which would spoil the tests
//! after it.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn a_panic_after_the_page_rendered_shows_the_rescue_and_saves_the_text() {
    let doc = web_sys::window().and_then(|w| w.document()).expect("a document");
    let root = doc.create_element("div").expect("div");
    doc.body().expect("body").append_child(&root).expect("append");
    warpscope::app::rescue::install();
    let props = warpscope::app::AppProps { local: Some(warpscope::app::LocalEngine::service()) };
    yew::Renderer::<warpscope::app::App>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;

    // The user's text, typed as the page receives it.
    let pattern: web_sys::HtmlTextAreaElement =
        root.query_selector("#pattern").ok().flatten().expect("the editor").dyn_into().expect("a textarea");
    pattern.set_value("8*lane + 4");
    pattern.dispatch_event(&web_sys::InputEvent::new("input").expect("event")).expect("dispatch");
    yew::scheduler::flush().await;
    assert!(doc.get_element_by_id("crash").is_none(), "no rescue screen before anything failed");

    // A bug in the page's code: a panic in a function the browser calls. The module traps after the hook
    // has run; the caller sees the trap as an exception.
    let bug = Closure::<dyn Fn()>::new(|| panic!("a bug planted by the test"));
    let called = bug.as_ref().unchecked_ref::<js_sys::Function>().call0(&JsValue::NULL);
    assert!(called.is_err(), "the panic stopped the call");

    let crash = doc.get_element_by_id("crash").expect("the rescue screen, not Yew's console-only hook");
    let text = crash.text_content().unwrap_or_default();
    assert!(text.starts_with("warpscope hit a bug and stopped. Your text is saved"), "{text}");
    assert!(text.contains("a bug planted by the test"), "it says what went wrong: {text}");
    assert_eq!(crash.get_attribute("role").as_deref(), Some("alert"));
    assert!(doc.get_element_by_id("crash-reload").is_some(), "a reload button");
    let store = web_sys::window().and_then(|w| w.session_storage().ok().flatten()).expect("sessionStorage");
    assert_eq!(store.get_item("warpscope-rescue").expect("read").as_deref(), Some("8*lane + 4"), "the text typed");
}
