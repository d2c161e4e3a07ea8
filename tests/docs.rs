//! The documentation's links: every relative link in `README.md` and `docs/*.md` names a file that exists,
//! and every `#anchor` a heading of the file it points into (GitHub's heading ids).
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

/// GitHub's id for a heading: lower case, punctuation other than `-` and `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The ids of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && line.starts_with('#') {
            let title = line.trim_start_matches('#');
            if title.starts_with(' ') {
                out.push(slug(title));
            }
        }
    }
    out
}

/// The targets of a Markdown file's inline links and images, `](target)`, outside code blocks.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((n + 1, after[..end].trim().to_string()));
            rest = &after[end..];
        }
    }
    out
}

fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

#[test]
fn every_link_in_the_documentation_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    let mut broken = Vec::new();
    for doc in documents(root) {
        let text = std::fs::read_to_string(&doc).expect("readable");
        for (line, target) in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() { doc.clone() } else { doc.parent().expect("a folder").join(file) };
            let at = format!("{}:{line}: {target}", doc.strip_prefix(root).unwrap_or(&doc).display());
            checked += 1;
            if !path.exists() {
                broken.push(format!("{at}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&target_text).iter().any(|a| a == anchor) {
                    broken.push(format!("{at}: no heading with this id"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // The README links every document, and the documents link each other and the pictures.
    assert!(checked >= 20, "only {checked} links were checked");
}

#[test]
fn the_readme_is_short_and_links_every_document() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(readme.lines().count() < 200, "README.md has {} lines", readme.lines().count());
    for doc in documents(root).iter().skip(1) {
        let name = format!("docs/{}", doc.file_name().expect("a name").to_string_lossy());
        assert!(readme.contains(&format!("]({name}")), "README.md does not link {name}");
    }
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug(" A student's walk through a lab"), "a-students-walk-through-a-lab");
    assert_eq!(slug(" The JSON output (`--format json`)"), "the-json-output---format-json");
    assert_eq!(
        slug(" Tensor-core shared memory: ldmatrix, swizzles, cp.async"),
        "tensor-core-shared-memory-ldmatrix-swizzles-cpasync"
    );
}

/// The files whose text may cite the model reference (`docs/model.md#id` in code, notes and messages;
/// `model.html#id` in a lab's Markdown, which the page serves beside the reference).
fn citing_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p
                .extension()
                .is_some_and(|x| ["rs", "md", "toml", "py", "mjs", "sh", "json", "cu"].iter().any(|e| x == *e))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for d in ["src", "tests", "www", "docs", "python", "benches", "hw", ".ci"] {
        walk(&root.join(d), &mut out);
    }
    out.push(root.join("README.md"));
    out.push(root.join("Cargo.toml"));
    out.sort();
    out
}

/// Every citation of the model reference names a section it has, the sections the page links by title are its
/// headings with those titles, and nothing cites the notes the reference was written from.
#[test]
fn every_cited_section_of_the_model_reference_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let model = std::fs::read_to_string(root.join("docs/model.md")).expect("docs/model.md");
    let ids = anchors(&model);
    for (id, title) in warpscope::text::MODEL_SECTIONS {
        assert!(ids.iter().any(|a| a == id), "MODEL_SECTIONS names `{id}`, which is no heading of docs/model.md");
        assert!(
            model.lines().any(|l| l.trim_start_matches('#').trim() == title && l.starts_with('#')),
            "docs/model.md has no heading `{title}`"
        );
    }
    let mut cited = 0;
    let mut broken = Vec::new();
    for file in citing_files(root) {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let at = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        // The two files that define the convention write citations that lead nowhere on purpose.
        if at == "src/text.rs" || at == "tests/docs.rs" {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            // The reference itself is `MODEL.md` nowhere: the product speaks of its own reference.
            if line.contains("MODEL.md") {
                broken.push(format!("{at}:{}: cites MODEL.md", n + 1));
            }
            for prefix in ["docs/model.md#", "model.html#"] {
                for (i, _) in line.match_indices(prefix) {
                    let after = &line[i + prefix.len()..];
                    let id: String = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
                    cited += 1;
                    if !ids.contains(&id) {
                        broken.push(format!("{at}:{}: {prefix}{id}: no such section", n + 1));
                    } else if !warpscope::text::MODEL_SECTIONS.iter().any(|(a, _)| *a == id) && at.starts_with("src") {
                        broken.push(format!(
                            "{at}:{}: {prefix}{id}: cited by the product but not in MODEL_SECTIONS",
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "citations that lead nowhere:\n{}", broken.join("\n"));
    assert!(cited >= 150, "only {cited} citations were found");
}

/// The model reference as the page serves it (`www/model.html`, copied into the site): docs/model.md rendered,
/// each heading with GitHub's id, so that `model.html#atomics` opens where `docs/model.md#atomics` does.
/// `UPDATE_EXPECT=1 cargo test --test docs` writes it again after the Markdown changed.
#[test]
fn the_published_model_reference_is_the_documents_text() {
    use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let md = std::fs::read_to_string(root.join("docs/model.md")).expect("docs/model.md");
    let mut events: Vec<Event> = Parser::new_ext(&md, Options::ENABLE_TABLES).collect();
    let mut i = 0;
    while i < events.len() {
        if let Event::Start(Tag::Heading { level, .. }) = events[i] {
            let mut text = String::new();
            for e in events[i + 1..].iter().take_while(|e| !matches!(e, Event::End(TagEnd::Heading(_)))) {
                if let Event::Text(t) | Event::Code(t) = e {
                    text.push_str(t);
                }
            }
            let id = CowStr::from(slug(&text));
            events[i] = Event::Start(Tag::Heading { level, id: Some(id), classes: Vec::new(), attrs: Vec::new() });
        }
        // Links stay inside the page or go to the web: a relative link to another document would not resolve.
        if let Event::Start(Tag::Link { dest_url, .. }) = &events[i] {
            assert!(
                dest_url.starts_with('#') || dest_url.starts_with("https://"),
                "docs/model.md links `{dest_url}`: the published reference keeps in-page and https links only"
            );
        }
        i += 1;
    }
    let mut body = String::new();
    html::push_html(&mut body, events.into_iter());
    let page = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\" />\n\
         <title>warpscope: the model reference</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <p class=\"back\"><a href=\"./\">← warpscope</a></p>\n<!-- Rendered from docs/model.md by tests/docs.rs: \
         edit that file, then UPDATE_EXPECT=1 cargo test --test docs. -->\n{body}</body>\n</html>\n"
    );
    expect_test::expect_file!["../www/model.html"].assert_eq(&page);
}

/// The published reference's look: readable on a laptop, a projector and a phone, light or dark.
const STYLE: &str = "body { font: 17px/1.55 system-ui, sans-serif; max-width: 60rem; margin: 0 auto; padding: 1rem 1.25rem 4rem; color: #1b1f24; background: #fff; }
h1, h2, h3 { line-height: 1.25; scroll-margin-top: 1rem; }
h2 { margin-top: 2.5rem; border-bottom: 1px solid #d0d7de; padding-bottom: 0.3rem; }
:target { background: #fff3c4; }
code { font: 0.9em ui-monospace, monospace; background: #f0f2f4; padding: 0.1em 0.3em; border-radius: 4px; }
pre { background: #f0f2f4; padding: 0.75rem 1rem; overflow-x: auto; border-radius: 6px; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; display: block; overflow-x: auto; margin: 1rem 0; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
a { color: #0a58a8; }
.back { margin: 0 0 1rem; }
@media (prefers-color-scheme: dark) {
  body { color: #e6edf3; background: #0d1117; }
  code, pre { background: #161b22; }
  th { background: #161b22; }
  th, td, h2 { border-color: #30363d; }
  :target { background: #3b2e00; }
  a { color: #6cb6ff; }
}
";

/// Every model note the product can attach has a row in the reference's "Model notes": the rules' table
/// (`id: "..."` in `src/model/arch/notes.rs`) and the notes the languages and the memory system write
/// (`Note::new("...", ...)`, `note_uncosted("...", ...)`).
#[test]
fn every_model_note_is_in_the_reference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let model = std::fs::read_to_string(root.join("docs/model.md")).expect("docs/model.md");
    let section = model.split("## Model notes").nth(1).and_then(|s| s.split("\n## ").next()).expect("the section");
    let mut ids = std::collections::BTreeSet::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("a folder").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            for marker in ["Note::new(", "note_uncosted(", "        id: \""] {
                for (i, _) in text.match_indices(marker) {
                    let after = text[i + marker.len()..].trim_start();
                    let after = after.strip_prefix('"').unwrap_or(after);
                    let id: String = after
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '.')
                        .collect();
                    if id.contains('-') && after[id.len()..].starts_with('"') {
                        ids.insert(id);
                    }
                }
            }
        }
    }
    assert!(ids.len() >= 40, "only {} note ids found: {ids:?}", ids.len());
    let missing: Vec<&String> = ids.iter().filter(|id| !section.contains(&format!("`{id}`"))).collect();
    assert!(missing.is_empty(), "notes the reference's \"Model notes\" does not list: {missing:?}");
}
