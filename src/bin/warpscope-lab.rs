//! `warpscope-lab`: reads a lab file (TOML with Markdown) and writes the checked, compiled lab as JSON.
//!
//! In the browser it is the page's lab worker. It receives what `?lab=` says and the page's address, finds
//! the file (a plain name is `labs/NAME.toml` next to the page; a URL on another site must be allowed, see
//! `web::lab_source`, built for the browser only), reads it with a size limit, and answers
//! `{"course": ..., "url": ..., "origin": ...}` or `{"error": "..."}`. The file's text never reaches the page's main thread, and the TOML and Markdown
//! parsers stay out of the page's main module. Natively, `warpscope-lab FILE.toml` prints the course JSON,
//! or the error with exit code 2.

/// Compiles a lab file's text: the course, or the message to show.
#[cfg(target_arch = "wasm32")]
fn compile(text: &str) -> Result<serde_json::Value, String> {
    warpscope::teach::lab_file::parse(text)
        .map(|course| serde_json::json!(course))
        .map_err(|e| format!("The lab file has a problem at {e}"))
}

#[cfg(target_arch = "wasm32")]
mod web {
    use warpscope::text::grouped;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;

    /// A header of a fetch response (`None` when absent).
    fn header(resp: &web_sys::Response, name: &str) -> Option<String> {
        let headers = js_sys::Reflect::get(resp, &JsValue::from_str("headers")).ok()?;
        let get: js_sys::Function = js_sys::Reflect::get(&headers, &JsValue::from_str("get")).ok()?.dyn_into().ok()?;
        get.call1(&headers, &JsValue::from_str(name)).ok()?.as_string()
    }

    /// A fetched text file: its text and whether the server sent it as HTML (a server that answers every
    /// unknown path with the page itself).
    struct Fetched {
        text: String,
        html: bool,
    }

    /// A JS method of `target`, called with no arguments.
    fn call0(target: &JsValue, name: &str) -> Option<JsValue> {
        let f: js_sys::Function = js_sys::Reflect::get(target, &JsValue::from_str(name)).ok()?.dyn_into().ok()?;
        f.call0(target).ok()
    }

    /// Fetches a text file of at most `limit` bytes, or `None` when the server has no such file (HTTP 404).
    /// A larger file is refused by its Content-Length before it is read; without one (a chunked or compressed
    /// answer), the body is read as a stream and the reading stops, and is cancelled, once it passes the limit:
    /// at most `limit` bytes and one network chunk are ever held.
    async fn fetch_limited(url: &str, limit: usize) -> Result<Option<Fetched>, String> {
        let failed = || format!("could not load {url} (the server did not answer, or does not let this page read it)");
        let unread = || format!("could not read {url}");
        let global = js_sys::global();
        let fetch: js_sys::Function = js_sys::Reflect::get(&global, &JsValue::from_str("fetch"))
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(failed)?;
        let promise: js_sys::Promise =
            fetch.call1(&global, &JsValue::from_str(url)).ok().and_then(|p| p.dyn_into().ok()).ok_or_else(failed)?;
        let resp: web_sys::Response =
            JsFuture::from(promise).await.ok().and_then(|r| r.dyn_into().ok()).ok_or_else(failed)?;
        if resp.status() == 404 {
            return Ok(None);
        }
        if !resp.ok() {
            return Err(format!("could not load {url}: HTTP {}", resp.status()));
        }
        let most = if limit % (1 << 20) == 0 { format!("{} MB", limit >> 20) } else { format!("{} KB", limit >> 10) };
        if let Some(n) = header(&resp, "content-length").and_then(|n| n.trim().parse::<u64>().ok()) {
            if n > limit as u64 {
                return Err(format!(
                    "{url} is {} bytes; warpscope reads at most {most} ({} bytes) here",
                    grouped(n),
                    grouped(limit as u64)
                ));
            }
        }
        let html = header(&resp, "content-type").is_some_and(|t| t.to_ascii_lowercase().starts_with("text/html"));
        let body = js_sys::Reflect::get(&resp, &JsValue::from_str("body")).map_err(|_| unread())?;
        let mut bytes = Vec::new();
        // A response without a body (`null`) is an empty file.
        if !body.is_null() && !body.is_undefined() {
            let reader = call0(&body, "getReader").ok_or_else(unread)?;
            loop {
                let read: js_sys::Promise =
                    call0(&reader, "read").and_then(|p| p.dyn_into().ok()).ok_or_else(unread)?;
                let chunk = JsFuture::from(read).await.map_err(|_| unread())?;
                if js_sys::Reflect::get(&chunk, &JsValue::from_str("done")).ok().and_then(|d| d.as_bool()) == Some(true)
                {
                    break;
                }
                let value = js_sys::Reflect::get(&chunk, &JsValue::from_str("value")).map_err(|_| unread())?;
                let part: js_sys::Uint8Array = value.dyn_into().map_err(|_| unread())?;
                if bytes.len() + part.length() as usize > limit {
                    // Stop the download: the rest is never read.
                    let _ = call0(&reader, "cancel");
                    return Err(format!(
                        "{url} is larger than {most}; warpscope reads at most {most} ({} bytes) here",
                        grouped(limit as u64)
                    ));
                }
                let start = bytes.len();
                bytes.resize(start + part.length() as usize, 0);
                part.copy_to(&mut bytes[start..]);
            }
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("{url} is not UTF-8 text"))?;
        Ok(Some(Fetched { text, html }))
    }

    /// The largest `labs-origins` file read.
    const MAX_ORIGINS_BYTES: usize = 64 * 1024;

    /// Where a `?lab=` parameter points: the URL the page keeps the progress under (`labs/NAME.toml` for a
    /// lab of this site, as it always was), the absolute URL to fetch, and the other site it comes from.
    struct Source {
        key_url: String,
        fetch_url: String,
        origin: Option<String>,
    }

    /// Resolves `?lab=` against the page at `page` (its directory URL): a plain name is `labs/NAME.toml` next
    /// to the page; a URL on the page's site is read as it is; a URL on another site must be https, and when
    /// the site has a `labs-origins` file next to its page (one origin per line), that site must be listed
    /// there. Without the file, any https site may provide labs.
    async fn lab_source(param: &str, page: &str) -> Result<Source, String> {
        let here = web_sys::Url::new(page).map_err(|_| "the page's address could not be read".to_string())?;
        let resolve = |rel: &str| web_sys::Url::new_with_base(rel, page).map(|u| u.href()).unwrap_or_default();
        if !param.is_empty() && param.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            let rel = format!("labs/{param}.toml");
            return Ok(Source { fetch_url: resolve(&rel), key_url: rel, origin: None });
        }
        let shown: String = param.chars().take(80).collect();
        let not_a_lab =
            || format!("`?lab=` takes a lab name (letters, digits, - and _) or an https URL, not `{shown}`");
        let url = web_sys::Url::new(param).map_err(|_| not_a_lab())?;
        let scheme = url.protocol();
        if scheme != "https:" && scheme != "http:" {
            return Err(not_a_lab());
        }
        let origin = url.origin();
        let found = Source { key_url: url.href(), fetch_url: url.href(), origin: None };
        if origin == here.origin() {
            return Ok(found);
        }
        // The page's Content-Security-Policy lets it read other sites over https only.
        if scheme != "https:" {
            return Err(format!(
                "A lab from another site must come over https; {origin} does not, so its lab was not loaded"
            ));
        }
        let listed = match fetch_limited(&resolve("labs-origins"), MAX_ORIGINS_BYTES).await {
            Ok(Some(f)) if !f.html => Some(
                f.text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(|l| web_sys::Url::new(l).map(|u| u.origin()).unwrap_or_else(|_| l.to_string()))
                    .collect::<Vec<String>>(),
            ),
            // No list (or a server that answers an unknown path with the page itself): any https site.
            Ok(_) => None,
            Err(e) => return Err(format!("This site's list of the sites labs may come from could not be read: {e}")),
        };
        match listed {
            Some(list) if !list.contains(&origin) => Err(format!(
                "This course opens labs only from this site{}; {origin} is not in its list (labs-origins), so its lab was not loaded",
                if list.is_empty() { String::new() } else { format!(" and {}", list.join(", ")) }
            )),
            _ => Ok(Source { origin: Some(origin), ..found }),
        }
    }

    /// The worker's answer for `?lab=param` on the page at `page`.
    pub async fn answer(param: String, page: String) -> String {
        let loaded = async {
            let source = lab_source(&param, &page).await?;
            let file = fetch_limited(&source.fetch_url, warpscope::teach::lab_file::MAX_LAB_BYTES)
                .await?
                .ok_or_else(|| format!("could not load {}: HTTP 404", source.fetch_url))?;
            let course = super::compile(&file.text)?;
            Ok::<_, String>(serde_json::json!({ "course": course, "url": source.key_url, "origin": source.origin }))
        };
        loaded.await.unwrap_or_else(|e| serde_json::json!({ "error": e })).to_string()
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
        // [what ?lab= says, the page's directory URL]
        let ask = js_sys::Array::from(&msg.data());
        let (param, page) = (ask.get(0).as_string().unwrap_or_default(), ask.get(1).as_string().unwrap_or_default());
        let reply = reply.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let _ = reply.post_message(&JsValue::from_str(&web::answer(param, page).await));
        });
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // Messages sent before the wasm was loaded are dropped: say when the worker is listening.
    let _ = scope.post_message(&JsValue::from_str("ready"));
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: warpscope-lab FILE.toml   (prints the checked lab as JSON)");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            std::process::exit(2);
        }
    };
    match warpscope::teach::lab_file::parse(&text) {
        Ok(course) => println!("{}", serde_json::json!({ "course": course })),
        Err(e) => {
            eprintln!("error: {path} {e}");
            std::process::exit(2);
        }
    }
}
