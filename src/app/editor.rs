//! The pattern editor: a plain textarea that becomes a code editor (CodeMirror 6: highlighting for every input
//! language, line numbers, the error marked at its line:column) once the page's editor script
//! (`warpscope-editor.js`, bundled from `www/editor/` at build time) has loaded. The page never depends on that
//! script: without it, or if creating an editor fails, the textarea stays.
//!
//! The text lives in the page's state. The editor reports each edit (as the textarea's input events do) and is
//! brought to the state's text after each render; the script ignores the echoes of its own reports.

use crate::lang::Lang;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

/// Where the analysis error is in the pattern: 1-based line and column, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorAt {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The message, without its position and excerpt.
    pub message: String,
}

/// The position of a pane's error when it is in the pattern: the page shows errors as `pattern L:C: message`
/// followed by the line and a caret (see `state.rs`, `Reply::Error`).
pub fn error_at(error: &str) -> Option<ErrorAt> {
    let rest = error.strip_prefix("pattern ")?;
    let (line, rest) = rest.split_once(':')?;
    let (column, rest) = rest.split_once(':')?;
    let message = rest.lines().next().unwrap_or("").trim().to_string();
    Some(ErrorAt { line: line.parse().ok()?, column: column.parse().ok()?, message })
}

/// The editor script's API, once it has loaded.
fn api() -> Option<JsValue> {
    let window = web_sys::window()?;
    let api = js_sys::Reflect::get(&window, &"warpscopeEditor".into()).ok()?;
    api.is_object().then_some(api)
}

fn method(target: &JsValue, name: &str) -> Option<js_sys::Function> {
    js_sys::Reflect::get(target, &name.into()).ok()?.dyn_into().ok()
}

fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in fields {
        let _ = js_sys::Reflect::set(&o, &(*k).into(), v);
    }
    o.into()
}

/// The editor's properties: what the pane shows.
#[derive(Properties, Clone)]
pub struct EditorProps {
    /// The element id of the text (`pattern`, `pattern-b`).
    pub id: AttrValue,
    /// The pattern text.
    pub text: AttrValue,
    /// Its language.
    pub lang: Lang,
    /// Locked by the lab.
    pub readonly: bool,
    /// The analysis error's position, when it is in the pattern.
    pub error: Option<ErrorAt>,
    /// The source line of the instruction the figure shows (0: none).
    pub line: usize,
    /// Called with the whole text after each edit.
    pub on_text: Callback<String>,
}

// The callback is left out: the pane builds a new one each render that does the same (it sends the text to
// its pane), and comparing it would redraw the editor on every animation step.
impl PartialEq for EditorProps {
    fn eq(&self, o: &EditorProps) -> bool {
        (&self.id, &self.text, self.lang, self.readonly, &self.error, self.line)
            == (&o.id, &o.text, o.lang, o.readonly, &o.error, o.line)
    }
}

/// The script's editor and the closure it calls, kept for the component's life.
struct Live {
    handle: JsValue,
    _on_change: Closure<dyn Fn(String)>,
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(destroy) = method(&self.handle, "destroy") {
            let _ = destroy.call0(&self.handle);
        }
    }
}

fn error_value(e: &Option<ErrorAt>) -> JsValue {
    match e {
        Some(e) => object(&[
            ("line", (e.line as f64).into()),
            ("column", (e.column as f64).into()),
            ("message", e.message.as_str().into()),
        ]),
        None => JsValue::NULL,
    }
}

/// The pattern's editor: CodeMirror when the editor script is there, else a textarea.
#[function_component(Editor)]
pub fn editor(p: &EditorProps) -> Html {
    let host = use_node_ref();
    let live: Rc<RefCell<Option<Live>>> = use_mut_ref(|| None);
    let on_text = use_mut_ref(|| p.on_text.clone());
    *on_text.borrow_mut() = p.on_text.clone();
    let enhanced = use_state(|| false);
    // Bumped when the script arrives after the page has started.
    let arrived = use_state(|| 0u32);

    {
        let (host, live, on_text, enhanced, arrived2) =
            (host.clone(), live.clone(), on_text.clone(), enhanced.clone(), arrived.clone());
        let p = p.clone();
        use_effect_with(*arrived, move |_| {
            let mut listener = None;
            if live.borrow().is_none() {
                match (api(), host.cast::<web_sys::Element>()) {
                    (Some(api), Some(el)) => {
                        let on_change = Closure::<dyn Fn(String)>::new(move |text: String| {
                            let cb = on_text.borrow().clone();
                            cb.emit(text);
                        });
                        let options = object(&[
                            ("text", p.text.as_str().into()),
                            ("lang", p.lang.name().into()),
                            ("readonly", p.readonly.into()),
                            ("id", p.id.as_str().into()),
                            ("label", "access pattern".into()),
                            ("error", error_value(&p.error)),
                            ("line", (p.line as f64).into()),
                            ("onChange", on_change.as_ref().clone()),
                        ]);
                        match method(&api, "create").map(|f| f.call2(&api, &el, &options)) {
                            Some(Ok(handle)) if handle.is_object() => {
                                *live.borrow_mut() = Some(Live { handle, _on_change: on_change });
                                enhanced.set(true);
                            }
                            Some(Err(e)) => web_sys::console::warn_2(
                                &"warpscope: the code editor failed; keeping the plain text box:".into(),
                                &e,
                            ),
                            _ => {}
                        }
                    }
                    (None, _) => {
                        listener = web_sys::window().map(|w| {
                            gloo_events::EventListener::once(&w, "warpscope-editor", move |_| {
                                arrived2.set(*arrived2 + 1)
                            })
                        });
                    }
                    _ => {}
                }
            }
            move || drop(listener)
        });
    }
    {
        let live = live.clone();
        use_effect_with((), move |_| move || drop(live.borrow_mut().take()));
    }
    {
        let live = live.clone();
        let deps = (p.id.clone(), p.text.clone(), p.lang, p.readonly, p.error.clone(), p.line, *enhanced);
        use_effect_with(deps, move |(id, text, lang, readonly, error, line, _)| {
            if let Some(l) = live.borrow().as_ref() {
                let update = object(&[
                    ("id", id.as_str().into()),
                    ("text", text.as_str().into()),
                    ("lang", lang.name().into()),
                    ("readonly", (*readonly).into()),
                    ("error", error_value(error)),
                    ("line", (*line as f64).into()),
                ]);
                if let Some(f) = method(&l.handle, "update") {
                    if let Err(e) = f.call1(&l.handle, &update) {
                        web_sys::console::warn_2(&"warpscope: the code editor did not take the update:".into(), &e);
                    }
                }
            }
        });
    }

    let short = p.lang == Lang::Expr;
    let oninput = {
        let cb = p.on_text.clone();
        Callback::from(move |e: InputEvent| {
            let el: HtmlTextAreaElement = e.target_unchecked_into();
            cb.emit(el.value());
        })
    };
    html! {
        <>
        <div class={classes!("editor", short.then_some("short"), (*enhanced).then_some("enhanced"))} ref={host}>
            if !*enhanced {
                <textarea id={p.id.clone()} class="pattern" readonly={p.readonly} rows={if short { "2" } else { "9" }} spellcheck="false"
                    aria-label="access pattern" value={p.text.clone()} {oninput} />
            }
        </div>
        // In the code editor Tab indents; CodeMirror's escape (Esc, then Tab) moves on, which nothing else says.
        if *enhanced && !p.readonly {
            <p class="editor-keys" id={format!("{}-keys", p.id)}>{ "Tab indents · Esc then Tab leaves the editor" }</p>
        }
        </>
    }
}
