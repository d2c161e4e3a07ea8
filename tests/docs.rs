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
