//! Browser tests: mount the page in headless Chromium, read the DOM, change inputs, read it again.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement};

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().and_then(|w| w.document()).expect("a document")
}

async fn mount() -> Element {
    let root = document().create_element("div").expect("div");
    document().body().expect("body").append_child(&root).expect("append");
    yew::Renderer::<warpscope::ui::App>::with_root(root.clone()).render();
    yew::scheduler::flush().await;
    root
}

fn metric(root: &Element, name: &str) -> String {
    root.query_selector(&format!("[data-metric=\"{name}\"]"))
        .ok()
        .flatten()
        .map(|e| e.text_content().unwrap_or_default())
        .unwrap_or_else(|| panic!("no metric {name}"))
}

fn by_id<T: JsCast>(root: &Element, id: &str) -> T {
    root.query_selector(&format!("#{id}")).ok().flatten().expect(id).dyn_into::<T>().expect("element type")
}

async fn type_into(root: &Element, id: &str, text: &str) {
    let input: HtmlInputElement = by_id(root, id);
    input.set_value(text);
    let ev = web_sys::InputEvent::new("input").expect("event");
    input.dispatch_event(&ev).expect("dispatch");
    yew::scheduler::flush().await;
}

#[wasm_bindgen_test]
async fn shows_the_default_pattern_and_updates_as_you_type() {
    let root = mount().await;
    // The default view is the Best Practices Guide's misaligned example: 5 sectors over 2 lines (BPG 9.2.1.2).
    assert_eq!(metric(&root, "sectors"), "5");
    assert_eq!(metric(&root, "lines"), "2");

    type_into(&root, "pattern", "4*lane").await;
    assert_eq!(metric(&root, "sectors"), "4", "coalesced: 4 sectors (BPG 9.2.1.1)");

    // Shared memory column read: 32-way (BPG 9.2.3.3).
    type_into(&root, "op", "LDS.32").await;
    type_into(&root, "pattern", "128*lane").await;
    assert_eq!(metric(&root, "wavefronts"), "32");
    assert_eq!(metric(&root, "bank_conflicts"), "31");
}

#[wasm_bindgen_test]
async fn bad_input_shows_an_error_and_keeps_the_last_result() {
    let root = mount().await;
    type_into(&root, "pattern", "4*lane + )").await;
    let err: Element = by_id(&root, "error");
    let text = err.text_content().unwrap_or_default();
    assert!(text.contains("1:10"), "the error names its position: {text}");
    assert_eq!(metric(&root, "sectors"), "5", "the last good result stays on screen");

    type_into(&root, "pattern", "8*lane").await;
    assert!(root.query_selector("#error").ok().flatten().is_none(), "the error goes away once fixed");
    assert_eq!(metric(&root, "sectors"), "8", "stride 2: 8 sectors (BPG 9.2.1.3)");
}

#[wasm_bindgen_test]
async fn changing_the_cc_changes_the_numbers() {
    let root = mount().await;
    let select: HtmlSelectElement = by_id(&root, "cc");
    select.set_value("2.0");
    select.dispatch_event(&web_sys::Event::new("change").expect("event")).expect("dispatch");
    yew::scheduler::flush().await;
    // PG-5.0 F.4.2: on Fermi the misaligned warp costs 2 x 128-byte transactions.
    assert_eq!(metric(&root, "transactions"), "2");
    assert_eq!(metric(&root, "transaction_bytes"), "128");
}
