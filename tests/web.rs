//! Browser tests: mount the page in headless Chromium, read the DOM, change inputs, read it again.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().and_then(|w| w.document()).expect("a document")
}

fn set_url(query_and_hash: &str) {
    let w = web_sys::window().expect("window");
    let path = w.location().pathname().expect("path");
    w.history()
        .expect("history")
        .replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("{path}{query_and_hash}")))
        .expect("url");
}

/// Mounts the page on a clean URL (the page writes its view into the URL, and reads it when it starts).
async fn mount() -> Element {
    set_url("");
    mount_here().await
}

async fn mount_here() -> Element {
    let root = document().create_element("div").expect("div");
    document().body().expect("body").append_child(&root).expect("append");
    // The analyses run in-thread here (the page runs them in a web worker that Trunk builds).
    let props = warpscope::app::AppProps { local: Some(warpscope::app::LocalEngine::service()) };
    yew::Renderer::<warpscope::app::App>::with_root_and_props(root.clone(), props).render();
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
    let el = root.query_selector(&format!("#{id}")).ok().flatten().expect(id);
    match el.clone().dyn_into::<HtmlTextAreaElement>() {
        Ok(t) => t.set_value(text),
        Err(_) => el.clone().dyn_into::<HtmlInputElement>().expect("an input").set_value(text),
    }
    let ev = web_sys::InputEvent::new("input").expect("event");
    el.dispatch_event(&ev).expect("dispatch");
    yew::scheduler::flush().await;
}

async fn choose(root: &Element, id: &str, value: &str) {
    let select: HtmlSelectElement = by_id(root, id);
    select.set_value(value);
    select.dispatch_event(&web_sys::Event::new("change").expect("event")).expect("dispatch");
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
    let result: Element = by_id(&root, "result");
    let class = result.get_attribute("class").unwrap_or_default();
    assert!(class.split(' ').any(|c| c == "stale"), "and is dimmed, with a label saying so: {class}");
    assert!(result.text_content().unwrap_or_default().contains("Showing the last pattern that ran"));

    type_into(&root, "pattern", "8*lane").await;
    assert!(root.query_selector("#error").ok().flatten().is_none(), "the error goes away once fixed");
    let class = by_id::<Element>(&root, "result").get_attribute("class").unwrap_or_default();
    assert!(!class.split(' ').any(|c| c == "stale"), "no longer dimmed: {class}");
    assert_eq!(metric(&root, "sectors"), "8", "stride 2: 8 sectors (BPG 9.2.1.3)");
}

#[wasm_bindgen_test]
async fn changing_the_cc_changes_the_numbers() {
    let root = mount().await;
    choose(&root, "cc", "2.0").await;
    // PG-5.0 F.4.2: on Fermi the misaligned warp costs 2 x 128-byte transactions.
    assert_eq!(metric(&root, "transactions"), "2");
    assert_eq!(metric(&root, "transaction_bytes"), "128");
}

#[wasm_bindgen_test]
async fn a_preset_opens_its_program_and_instructions_can_be_selected() {
    let root = mount().await;
    choose(&root, "preset", "transpose-naive").await;
    let buttons = root.query_selector_all(".instructions button").expect("list");
    assert_eq!(buttons.length(), 4, "LDG, STS, LDS, STG");
    // Select the shared load: the column read of a 32x32 tile, 32 issues x 32 wavefronts (BPG 9.2.3.3).
    let lds = buttons.item(2).expect("third").dyn_into::<web_sys::HtmlElement>().expect("button");
    lds.click();
    yew::scheduler::flush().await;
    assert_eq!(metric(&root, "wavefronts"), "1,024");
    assert_eq!(metric(&root, "bank_conflicts"), "992");
    let block: HtmlInputElement = by_id(&root, "block");
    assert_eq!(block.value(), "32x8");
}

#[wasm_bindgen_test]
async fn languages_switch_and_report_errors_with_positions() {
    let root = mount().await;
    choose(&root, "lang", "cuda").await;
    assert!(root.query_selector("#op").ok().flatten().is_none(), "CUDA needs no instruction field");
    type_into(&root, "pattern", "float *in;\nfloat x = in[threadIdx.x * 2];\n").await;
    assert_eq!(metric(&root, "sectors"), "8", "stride 2 floats: 8 sectors (BPG 9.2.1.3)");
    type_into(&root, "pattern", "float *in;\nfloat x = in[data[0]];\n").await;
    let text = by_id::<Element>(&root, "error").text_content().unwrap_or_default();
    // `data` is undeclared, so the fragment takes it for a global array; the index then depends on loaded data.
    assert!(text.contains("2:14") && text.contains("depends on data loaded from memory"), "{text}");
    assert_eq!(metric(&root, "sectors"), "8", "the last good result stays");
    type_into(&root, "block", "64x").await;
    assert!(by_id::<Element>(&root, "error").text_content().unwrap_or_default().contains("block"));
    let block: HtmlInputElement = by_id(&root, "block");
    assert_eq!(block.value(), "64x", "a half-typed block size is kept");
}

fn text_of(root: &Element, id: &str) -> String {
    by_id::<Element>(root, id).text_content().unwrap_or_default()
}

async fn click(root: &Element, selector: &str) {
    let el = root.query_selector(selector).ok().flatten().unwrap_or_else(|| panic!("no {selector}"));
    el.dyn_into::<web_sys::HtmlElement>().expect("an element").click();
    yew::scheduler::flush().await;
}

#[wasm_bindgen_test]
async fn the_player_steps_through_transactions() {
    let root = mount().await;
    // The finished picture first: 5 steps for the misaligned warp (BPG 9.2.1.2).
    assert_eq!(text_of(&root, "step-label"), "step 5 / 5");
    click(&root, "#first").await;
    assert_eq!(text_of(&root, "caption"), "The warp issues LDG.E.32; 5 steps follow.");
    click(&root, "#step").await;
    assert_eq!(text_of(&root, "caption"), "Step 1 of 5: 32 B sector at 0x0 for lanes 0-6.");
    click(&root, "#last").await;
    assert_eq!(text_of(&root, "caption"), "Step 5 of 5: 32 B sector at 0x80 for lane 31.");
    click(&root, "#back").await;
    assert_eq!(text_of(&root, "step-label"), "step 4 / 5");
    // Play from the end starts over at step 0 and shows "pause".
    click(&root, "#last").await;
    click(&root, "#play").await;
    assert_eq!(text_of(&root, "step-label"), "step 0 / 5");
    assert!(text_of(&root, "play").contains("pause"));
    click(&root, "#play").await;
    assert!(text_of(&root, "play").contains("play"));
    // The figure is one SVG with the lanes and sectors.
    let rects = root.query_selector_all("svg#figure rect").expect("rects").length();
    assert!(rects > 40, "32 lanes and the sector cells: {rects}");
}

#[wasm_bindgen_test]
async fn arrow_keys_step_and_space_plays() {
    let root = mount().await;
    let key = |k: &str| {
        let init = web_sys::KeyboardEventInit::new();
        init.set_key(k);
        init.set_bubbles(true);
        let ev = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).expect("event");
        document().dispatch_event(&ev).expect("dispatch");
    };
    key("Home");
    yew::scheduler::flush().await;
    key("ArrowRight");
    key("ArrowRight");
    yew::scheduler::flush().await;
    assert_eq!(text_of(&root, "step-label"), "step 2 / 5");
    key(" ");
    yew::scheduler::flush().await;
    assert!(text_of(&root, "play").contains("pause"));
    key(" ");
    yew::scheduler::flush().await;
}

#[wasm_bindgen_test]
async fn compare_mode_marks_the_differences() {
    let root = mount().await;
    click(&root, "#compare").await;
    assert!(root.query_selector("#pane-b").ok().flatten().is_some());
    // The second pane starts on the previous generation: 8.0 -> 7.5; the same 5 sectors, so no delta.
    let cc_b: HtmlSelectElement = by_id(&root, "cc-b");
    assert_eq!(cc_b.value(), "7.5");
    choose(&root, "cc-b", "2.0").await;
    // Fermi: 2 transactions of 128 B against 5 of 32 B (PG-5.0 F.4.2 vs BPG 9.2.1.2).
    let b_tx = root.query_selector("#pane-b [data-metric=\"transactions\"]").ok().flatten().expect("metric");
    assert_eq!(b_tx.text_content().unwrap_or_default(), "2");
    let deltas = root.query_selector_all("#pane-b .delta.better").expect("deltas").length();
    assert!(deltas >= 1, "fewer transactions is marked better");
    click(&root, "#compare").await;
    assert!(root.query_selector("#pane-b").ok().flatten().is_none());
}

/// Lets the tasks the page schedules after a repaint (checking suggested fixes) run, then renders.
async fn settle() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = web_sys::window().expect("window").set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 20);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    yew::scheduler::flush().await;
}

#[wasm_bindgen_test]
async fn try_it_applies_a_checked_fix() {
    let root = mount().await;
    // The fixes are checked right after the first repaint.
    settle().await;
    // The misaligned warp: "Align the start" -> 4 sectors (BPG 9.2.1.1).
    click(&root, "button.try").await;
    assert_eq!(metric(&root, "sectors"), "4");
    let pattern: HtmlTextAreaElement = by_id(&root, "pattern");
    assert_eq!(pattern.value(), "4*lane + 0x0");
}

#[wasm_bindgen_test]
async fn facts_and_carveout_follow_the_cc() {
    let root = mount().await;
    // the KAUST memory lecture: CC 8.0, 50% of 164 KB is 82 KB, rounded up to 100 KB.
    assert!(text_of(&root, "carveout-result").contains("100 KB"));
    choose(&root, "cc", "7.0").await;
    assert!(text_of(&root, "carveout-result").contains("64 KB"), "7.0: 48 KB rounds up to 64 KB");
    choose(&root, "cc", "3.5").await;
    assert!(text_of(&root, "carveout-result").contains("no percentage carveout"));
    assert!(root.query_selector("#bank-mode").ok().flatten().is_some(), "Kepler shows its bank modes");
    click(&root, "#theme").await;
    assert!(root.query_selector(".app.theme-dark").ok().flatten().is_some());
}

#[wasm_bindgen_test]
async fn a_link_restores_the_view_and_a_bad_one_says_why() {
    // A view with the padded transpose on CC 7.0, the shared load selected, at step 1.
    let p = warpscope::teach::presets::find("transpose-padded").expect("preset");
    let mut sc = p.scenario();
    sc.cc = warpscope::Cc::new(7, 0);
    let view = warpscope::share::ViewState {
        panes: vec![warpscope::share::PaneState::from_scenario(&sc, p.name, 2, 0)],
        step: Some(1),
        theme: warpscope::figure::scene::Theme::Dark,
        ..Default::default()
    };
    set_url(&format!("#{}", warpscope::share::encode(&view)));
    let root = mount_here().await;
    let cc: HtmlSelectElement = by_id(&root, "cc");
    assert_eq!(cc.value(), "7.0");
    // BPG 9.2.3.3: padded, the column read is conflict-free: 32 issues x 1 wavefront.
    assert_eq!(metric(&root, "wavefronts"), "32");
    assert_eq!(text_of(&root, "step-label"), "step 1 / 1");
    assert!(root.query_selector(".app.theme-dark").ok().flatten().is_some());
    // A damaged link: a message, and the default view (BPG 9.2.1.2's 5 sectors).
    set_url("#1.not-a-real-link");
    let root = mount_here().await;
    assert!(text_of(&root, "notice").contains("damaged"), "{}", text_of(&root, "notice"));
    assert_eq!(metric(&root, "sectors"), "5");
    set_url("");
}

#[wasm_bindgen_test]
async fn all_warps_stacks_every_warp_and_steps_them_together() {
    let root = mount().await;
    choose(&root, "preset", "transpose-naive").await;
    click(&root, ".instructions li:nth-child(3) button").await;
    click(&root, "#all-warps").await;
    // 8 warps x 4 loop passes = 32 issues, one row each.
    let labels = root.query_selector_all("svg#figure text").expect("texts");
    let rows = (0..labels.length())
        .filter_map(|i| labels.item(i).and_then(|n| n.text_content()))
        .filter(|t| t.starts_with('w') && t.contains(" p"))
        .count();
    assert_eq!(rows, 32);
    // Every issue of the column read takes 32 wavefronts (BPG 9.2.3.3): 32 steps, in every row at once.
    assert_eq!(text_of(&root, "step-label"), "step 32 / 32");
    click(&root, "#first").await;
    click(&root, "#step").await;
    assert_eq!(text_of(&root, "caption"), "Step 1 of 32 in every warp at once.");
}

/// After a panic the hook saved the editor's text in sessionStorage (src/app/rescue.rs); the next page start
/// restores it, says so, and analyses it: `8*lane` over 32 lanes of 4 bytes touches 8 sectors (256 B / 32 B).
#[wasm_bindgen_test]
async fn text_saved_by_the_panic_hook_comes_back_on_the_next_start() {
    let store = web_sys::window().and_then(|w| w.session_storage().ok().flatten()).expect("sessionStorage");
    store.set_item("warpscope-rescue", "8*lane").expect("store");
    let root = mount().await;
    let pattern: HtmlTextAreaElement = by_id(&root, "pattern");
    assert_eq!(pattern.value(), "8*lane");
    assert_eq!(metric(&root, "sectors"), "8");
    let notice = root.query_selector("#notice").ok().flatten().expect("a notice").text_content().unwrap_or_default();
    assert!(notice.contains("your text was restored"), "{notice}");
    assert_eq!(store.get_item("warpscope-rescue").expect("read"), None, "read once");
}

/// The grid input sums every block: vectorAdd-style 4*tid reads over 64 blocks of 256 threads are 64 x 8 = 512
/// warp issues of 4 sectors (BPG 9.2.1.1), and the page says how the totals were reached. A grid that does
/// not parse is an error naming the input, and the last good result stays.
#[wasm_bindgen_test]
async fn the_grid_input_counts_every_block() {
    let root = mount().await;
    choose(&root, "lang", "cuda").await;
    type_into(&root, "pattern", "float *a;\nfloat x = a[blockIdx.x * blockDim.x + threadIdx.x];\n").await;
    type_into(&root, "block", "256").await;
    type_into(&root, "grid", "64").await;
    assert_eq!(metric(&root, "warps"), "512");
    assert_eq!(metric(&root, "sectors"), "2,048");
    let note = text_of(&root, "blocks");
    assert!(note.starts_with("Totals over the grid 64x1x1 (64 blocks)"), "{note}");
    assert!(note.contains("1 block ran"), "{note}");
    type_into(&root, "grid", "0x4").await;
    assert!(text_of(&root, "error").contains("grid"), "{}", text_of(&root, "error"));
    assert_eq!(metric(&root, "sectors"), "2,048", "the last good result stays");
    type_into(&root, "grid", "1").await;
    assert_eq!(metric(&root, "warps"), "8");
    assert!(root.query_selector("#blocks").ok().flatten().is_none(), "one block: no grid note");
}

#[wasm_bindgen_test]
fn in_the_page_kernel_names_come_from_the_page_and_parameters_then_get_defaults() {
    use warpscope::service::{serve, Cache, Reply, Request};
    // The page's analysis workers have no demangler: a SASS listing whose parameter types need its kernel names
    // is answered with the mangled names it needs, and nothing else.
    let listing = include_str!("data/kernels/vectorAdd/sm_80.sass");
    let scenario = warpscope::scenario::Scenario {
        lang: warpscope::lang::Lang::Sass,
        text: listing.to_string(),
        op: String::new(),
        block: warpscope::program::launch::Dim3::parse("256", "block").expect("block"),
        ..Default::default()
    };
    let mut req = Request::new(1, scenario);
    let mut out = Vec::new();
    serve(&req, &mut Cache::default(), &mut |r| out.push(r));
    let symbol = "_Z9vectorAddPKfS0_Pfi".to_string();
    assert_eq!(out, vec![Reply::Names { id: 1, symbols: vec![symbol.clone()] }, Reply::Done { id: 1 }]);
    // With the names (as the demangler worker gives them), the kernel runs with its parameters' defaults:
    // vectorAdd(A, B, C, numElements = 256): two loads and a store of 8 warps x 4 sectors each.
    req.names = vec![(symbol.clone(), warpscope::lang::params::demangle_symbol(&symbol).expect("demangles"))];
    let mut out = Vec::new();
    serve(&req, &mut Cache::default(), &mut |r| out.push(r));
    let Some(Reply::Result { result, .. }) = out.iter().find(|r| matches!(r, Reply::Result { .. })) else {
        panic!("no result: {out:?}")
    };
    assert_eq!(result.kernel.as_deref(), Some("vectorAdd"));
    let sectors: Vec<u64> = result.instructions.iter().map(|i| i.memory.as_ref().map_or(0, |m| m.sectors)).collect();
    assert_eq!(sectors, vec![32, 32, 32]);
    // A name the demangler could not read stays unknown without asking again.
    let other = warpscope::service::Request { names: vec![(symbol, String::new())], id: 2, ..req };
    let mut out = Vec::new();
    serve(&other, &mut Cache::default(), &mut |r| out.push(r));
    assert!(!out.iter().any(|r| matches!(r, Reply::Names { .. })));
}

fn figure_texts(root: &Element) -> Vec<String> {
    let nodes = root.query_selector_all("svg#figure text").expect("texts");
    (0..nodes.length()).filter_map(|i| nodes.item(i).and_then(|n| n.text_content())).collect()
}

/// ldmatrix with rows 128 bytes apart (docs/model.md#ldmatrix-and-stmatrix): each matrix's 8 rows share 4 banks, 8-way: 32 wavefronts;
/// the tile view marks all 32 chunks; the shared-model choice appears on 7.0+ and changes the count of an
/// LDS.128 whose lanes share addresses in pairs (docs/model.md#shared-memory-as-measured: 2 measured, 4 documented).
#[wasm_bindgen_test]
async fn ldmatrix_tile_view_and_the_shared_model() {
    let root = mount().await;
    choose(&root, "cc", "8.0").await;
    type_into(&root, "op", "LDSM.16.M88.4").await;
    type_into(&root, "pattern", "128*(lane%8) + 16*(lane/8)").await;
    assert_eq!(metric(&root, "wavefronts"), "32");
    assert!(figure_texts(&root).iter().any(|t| t == "matrix 2"));
    click(&root, "#tile-view").await;
    assert_eq!(figure_texts(&root).iter().filter(|t| *t == "8-way").count(), 32);
    click(&root, "#tile-view").await;
    assert!(figure_texts(&root).iter().all(|t| t != "8-way"), "back to the lanes");

    type_into(&root, "op", "LDS.128").await;
    type_into(&root, "pattern", "16*(lane/2)").await;
    assert_eq!(metric(&root, "wavefronts"), "2");
    assert_eq!(metric(&root, "other_model_wavefronts"), "2 wavefronts (measured; documented phase model: 4)");
    choose(&root, "shared-model", "documented").await;
    assert_eq!(metric(&root, "wavefronts"), "4");
    choose(&root, "cc", "6.1").await;
    assert!(root.query_selector("#shared-model").ok().flatten().is_none(), "no choice before 7.0");
}

/// The cells of the source view's row for 1-based `line`: (op names, sectors/request, sectors, excess sectors,
/// wavefronts, conflicts, heat level).
fn source_row(root: &Element, line: usize) -> (Vec<String>, [String; 5], String) {
    let row = root
        .query_selector(&format!("#source-view tr[data-line=\"{line}\"]"))
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("no source row {line}"));
    let cell = |col: &str| {
        row.query_selector(&format!("td[data-col=\"{col}\"]"))
            .ok()
            .flatten()
            .map(|c| c.text_content().unwrap_or_default())
            .unwrap_or_default()
    };
    let chips = row.query_selector_all(".op-chip").expect("chips");
    let ops = (0..chips.length()).filter_map(|k| chips.item(k)).map(|c| c.text_content().unwrap_or_default()).collect();
    let cells = ["sectors_per_request", "sectors", "excess_sectors", "wavefronts", "bank_conflicts"].map(cell);
    (ops, cells, row.get_attribute("data-heat").unwrap_or_default())
}

#[wasm_bindgen_test]
async fn the_source_view_shows_each_lines_metrics_and_selects_its_instruction() {
    let root = mount().await;
    choose(&root, "lang", "cuda").await;
    type_into(&root, "block", "32").await;
    let kernel = "__global__ void k(float *in, float *out) {\n\
                  \x20   __shared__ float t[32][32];\n\
                  \x20   int x = threadIdx.x;\n\
                  \x20   t[x][0] = in[x * 2];\n\
                  \x20   __syncthreads();\n\
                  \x20   out[x] = t[0][x];\n\
                  }\n";
    type_into(&root, "pattern", kernel).await;
    click(&root, "#show-source").await;
    assert_eq!(root.query_selector_all("#source-view tbody tr").expect("rows").length(), 7, "every line");
    // Line 4, one warp of 32 threads. The load in[2x]: 32 floats 8 bytes apart span 256 bytes, 8 sectors for
    // one request (BPG 9.2.1.3); its 128 distinct bytes need 4, so 4 are excess. The store t[x][0]: every lane
    // writes a different word of bank 0 (rows of 128 bytes), 32 wavefronts where 1 would do: 31 conflicts
    // (BPG 9.2.3.3). Excess 4 + 31 = 35, the worst line: the hottest colour.
    let (ops, cells, heat) = source_row(&root, 4);
    assert_eq!(ops, ["LDG.E.32", "STS.32"]);
    assert_eq!(cells, ["8.00", "8", "4", "32", "31"].map(String::from));
    assert_eq!(heat, "4");
    // Line 6: the row read t[0][x] is one wavefront, no conflict; the store out[x] 4 sectors, none excess.
    let (ops, cells, heat) = source_row(&root, 6);
    assert_eq!(ops, ["LDS.32", "STG.E.32"]);
    assert_eq!(cells, ["4.00", "4", "0", "1", "0"].map(String::from));
    assert_eq!(heat, "0");
    // A line with no memory instruction has no numbers, and its text is the pasted line's, as text.
    let (ops, cells, _) = source_row(&root, 3);
    assert!(ops.is_empty() && cells.iter().all(String::is_empty));
    assert!(text_of(&root, "source-view").contains("int x = threadIdx.x;"));

    // Clicking line 6 selects its first instruction (the shared load) in the list and the figure.
    click(&root, "#source-view tr[data-line=\"6\"]").await;
    assert_eq!(metric(&root, "wavefronts"), "1");
    let selected = root.query_selector("#source-view tr.selected").ok().flatten().expect("a selected row");
    assert_eq!(selected.get_attribute("data-line").as_deref(), Some("6"));
    // Its second chip selects the global store: 4 sectors.
    click(&root, "#source-view tr[data-line=\"6\"] .op-chip:nth-child(2)").await;
    assert_eq!(metric(&root, "sectors"), "4");

    // The code comes back with its toggle; the expression language has no source view.
    click(&root, "#show-code").await;
    assert!(root.query_selector("#source-view").ok().flatten().is_none());
    choose(&root, "lang", "expr").await;
    assert!(root.query_selector("#show-source").ok().flatten().is_none());
}

#[wasm_bindgen_test]
fn heat_levels_and_folding() {
    use warpscope::app::source::{heat, rows, LineMetrics, Row};
    // Four equal steps of the worst line's excess: up to a quarter is level 1, over three quarters level 4.
    assert_eq!([0, 1, 8, 9, 18, 26, 27, 35].map(|e| heat(e, 35)), [0, 1, 1, 2, 3, 3, 4, 4]);
    assert_eq!(heat(5, 0), 0);
    // A text over 80 lines folds runs of 5 or more lines more than 3 lines from every instruction.
    let marked: std::collections::BTreeMap<usize, LineMetrics> = [(50, LineMetrics::default())].into();
    let r = rows(100, &marked);
    assert_eq!(r[0], Row::Fold { from: 1, n: 46 });
    assert_eq!(r[1..8], (47..=53).map(Row::Line).collect::<Vec<_>>()[..]);
    assert_eq!(r[8], Row::Fold { from: 54, n: 47 });
    assert_eq!(r.len(), 9);
    assert_eq!(rows(80, &marked).len(), 80, "a short text shows every line");
}

#[wasm_bindgen_test]
async fn an_edit_inside_a_comment_does_not_run_the_program_again() {
    // A memory-system run can take seconds: typing a comment, or spaces after a line's code, keeps its result
    // (the program, its lines and columns are unchanged) instead of restarting it on every key.
    set_url("");
    let runs = std::rc::Rc::new(std::cell::Cell::new(0u32));
    let service = warpscope::app::LocalEngine::service();
    let counted = std::rc::Rc::clone(&runs);
    let local = warpscope::app::LocalEngine(std::rc::Rc::new(move |pane, req, reply| {
        counted.set(counted.get() + 1);
        (service.0)(pane, req, reply)
    }));
    let root = document().create_element("div").expect("div");
    document().body().expect("body").append_child(&root).expect("append");
    yew::Renderer::<warpscope::app::App>::with_root_and_props(
        root.clone(),
        warpscope::app::AppProps { local: Some(local) },
    )
    .render();
    yew::scheduler::flush().await;
    choose(&root, "preset", "transpose-naive").await;
    let text = by_id::<HtmlTextAreaElement>(&root, "pattern").value();
    let sectors = metric(&root, "sectors");
    let before = runs.get();
    let first = text.lines().next().expect("a first line").to_string();
    type_into(&root, "pattern", &text.replacen(&first, &format!("{first} // the tile's column read conflicts"), 1))
        .await;
    type_into(&root, "pattern", &text.replacen(&first, &format!("{first}   "), 1)).await;
    assert_eq!(runs.get(), before, "no new run for a comment or trailing spaces");
    assert_eq!(metric(&root, "sectors"), sectors, "the result stays");
    // A change to the code runs again.
    type_into(&root, "pattern", &format!("{text}\n__global__ void other(float *p) {{ p[threadIdx.x] = 0; }}\n")).await;
    assert!(runs.get() > before, "an edit of the code runs again");
}
