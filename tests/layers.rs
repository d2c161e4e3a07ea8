//! The architecture invariants docs/ARCHITECTURE.md states, checked on the source text: each layer imports only the
//! layers below it, only `model::arch` branches on a compute capability or its family, and the core does no
//! I/O and reads no clock or randomness. A change that breaks one fails here with the file and line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The code lines of a file with their numbers: comment lines and unit-test modules left out.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let t = line.trim_start();
        if t == "#[cfg(test)]" && lines.peek().is_some_and(|(_, l)| l.trim_start().starts_with("mod tests")) {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        let code = match line.find("//") {
            // A `//` inside a string literal (a URL) is kept: only a comment after the code is cut.
            Some(k) if line[..k].matches('"').count() % 2 == 0 => &line[..k],
            _ => line,
        };
        out.push((i + 1, code.to_string()));
    }
    out
}

/// The layer a source file belongs to: its top-level module (`src/model/arch/mod.rs` -> `model`).
fn layer(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component").as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The top-level modules a line names through `crate::`.
fn crate_refs(line: &str) -> Vec<String> {
    line.match_indices("crate::")
        .filter(|(i, _)| !line[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(i, m)| line[i + m.len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .filter(|s: &String| !s.is_empty())
        .collect()
}

/// What each layer of the library may import, lowest first (docs/ARCHITECTURE.md). The front
/// ends (`cli`, `calibrate`, `app`) may import anything; nothing imports them.
const LAYERS: &[(&str, &[&str])] = &[
    ("text", &[]),
    ("model", &["text"]),
    ("program", &["text", "model"]),
    ("lang", &["text", "model", "program"]),
    ("analysis", &["text", "model", "program"]),
    ("data", &["text", "model", "program", "lang"]),
    ("scenario", &["text", "model", "program", "lang", "analysis", "data"]),
    ("figure", &["text", "model"]),
    ("teach", &["text", "model", "program", "lang", "analysis", "scenario", "figure"]),
    ("share", &["text", "model", "program", "lang", "scenario", "figure"]),
    ("service", &["text", "model", "program", "lang", "analysis", "scenario", "figure", "teach"]),
    ("workload", &["text", "model", "program", "lang", "analysis", "scenario", "teach"]),
];

const FRONT_ENDS: &[&str] = &["cli", "calibrate", "app", "lib", "main", "bin", "export"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn each_layer_imports_only_layers_below_it() {
    let src = src();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in rust_files(&src) {
        let here = layer(&src, &file);
        seen.insert(here.clone());
        let allowed: Option<&[&str]> = LAYERS.iter().find(|(l, _)| *l == here).map(|(_, a)| *a);
        if allowed.is_none() && !FRONT_ENDS.contains(&here.as_str()) {
            problems.push(format!("{}: layer `{here}` is not in LAYERS", file.display()));
            continue;
        }
        for (n, line) in code_lines(&file) {
            for r in crate_refs(&line) {
                let ok = r == here
                    || match allowed {
                        Some(a) => a.contains(&r.as_str()),
                        None => true,
                    };
                if !ok {
                    problems.push(format!("{}:{n}: `{here}` imports `{r}`: {}", file.display(), line.trim()));
                }
            }
        }
    }
    for (l, _) in LAYERS {
        assert!(seen.contains(*l), "layer `{l}` has no source file");
    }
    assert!(problems.is_empty(), "imports against the layering:\n{}", problems.join("\n"));
}

#[test]
fn only_arch_branches_on_the_compute_capability() {
    let src = src();
    let arch = src.join("model").join("arch");
    let comparison = |s: &str| ["==", "!=", "<=", ">=", "<", ">"].iter().any(|op| s.ends_with(op) || s.starts_with(op));
    let mut problems = Vec::new();
    for file in rust_files(&src).into_iter().filter(|f| !f.starts_with(&arch)) {
        for (n, line) in code_lines(&file) {
            let mut why = Vec::new();
            if line.contains("Family::") || line.contains(".family()") {
                why.push("names a CC family");
            }
            for (i, _) in line.match_indices("Cc::new(") {
                // `cc >= crate::model::arch::Cc::new(7, 0)`: the operator is before the path.
                let before =
                    line[..i].trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == ':').trim_end();
                let after = line[i..].find(')').map_or("", |k| line[i + k + 1..].trim_start());
                if comparison(before) || comparison(after) {
                    why.push("compares with a CC");
                }
            }
            for (i, m) in line.match_indices(".sm()") {
                if comparison(line[i + m.len()..].trim_start()) {
                    why.push("compares an sm number");
                }
            }
            if line.contains("match sm ") || line.contains("match self.sm") {
                why.push("branches on an sm number");
            }
            for w in why {
                problems.push(format!("{}:{n}: {w}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "CC knowledge outside model::arch:\n{}", problems.join("\n"));
}

#[test]
fn the_core_does_no_io_and_reads_no_clock_or_randomness() {
    let src = src();
    // The one clock is the scenario's `Deadline`, a `Control` the run only asks whether to go on.
    let clock = src.join("scenario.rs");
    // The one use of threads: the memory system runs its SMs' L1 parts on scoped threads, joined before L2
    // serves their requests in the model's order (tests/caches.rs shows the figures are the same for any count).
    let scoped = src.join("analysis").join("caches.rs");
    let seeded = src.join("data.rs");
    let forbidden = [
        "std::fs",
        "std::io",
        "std::net",
        "std::env",
        "std::process",
        "std::thread",
        "Instant",
        "SystemTime",
        "js_sys",
        "web_sys",
        "println!",
        "eprintln!",
        "print!(",
        "dbg!(",
        "rand::",
        "getrandom",
    ];
    let mut problems = Vec::new();
    for file in rust_files(&src) {
        let here = layer(&src, &file);
        if FRONT_ENDS.contains(&here.as_str()) {
            continue;
        }
        for (n, line) in code_lines(&file) {
            for f in forbidden {
                let hit = line.match_indices(f).any(|(i, _)| !line[..i].ends_with(|c: char| c.is_alphanumeric()));
                // Seeded generators of given data (docs/model.md#kernels-on-data): the same sequence for the same
                // seed on every platform, no entropy.
                let allowed = file == clock && matches!(f, "Instant" | "js_sys")
                    || file == scoped && f == "std::thread" && line.contains("std::thread::scope(")
                    || file == seeded && f == "rand::";
                if hit && !allowed {
                    problems.push(format!("{}:{n}: `{f}` in the core: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "I/O, clocks or randomness in the core:\n{}", problems.join("\n"));
}

/// Costing cannot fail: `analyze` returns a report, not a `Result` (a compile-time check).
#[test]
fn costing_returns_a_report_not_a_result() {
    let f: fn(warpscope::Cc, &warpscope::Instr, &warpscope::WarpAddrs, &warpscope::Config) -> warpscope::Report =
        warpscope::analyze;
    let instr = warpscope::Instr::parse("LDG.E.32").expect("instruction");
    let warp = warpscope::lang::warp_from_expr("4*lane", &instr, warpscope::LaneSet::ALL).expect("warp");
    // CUDA C++ Best Practices Guide 9.2.1.1: 32 consecutive 4-byte words are 4 sectors of one 128-byte line.
    let m =
        f(warpscope::Cc::new(8, 0), &instr, &warp, &warpscope::Config::default()).memory().cloned().expect("memory");
    assert_eq!((m.lines, m.sectors), (1, 4));
}

/// The page computes nothing on its main thread: only its workers (`src/bin`) run scenarios and check a lab's
/// goals.
#[test]
fn the_page_runs_no_analysis_on_its_main_thread() {
    let app = src().join("app");
    let mut problems = Vec::new();
    for file in rust_files(&app) {
        for (n, line) in code_lines(&file) {
            for call in [
                ".run(",
                ".run_with(",
                ".analysis(",
                ".trace(",
                "analyze(",
                "service::handle",
                "lower(",
                "check_goal(",
                "grade_exercise(",
            ] {
                if line.contains(call) {
                    problems.push(format!("{}:{n}: `{call}` on the main thread: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "analysis on the page's main thread:\n{}", problems.join("\n"));
}

/// Model notes come from one table; only the languages (through the program builder) add notes of their own,
/// about the input.
#[test]
fn notes_are_written_in_the_table_or_by_the_languages() {
    let src = src();
    let allowed = |f: &Path| {
        f == src.join("model").join("arch").join("notes.rs")
            || f == src.join("model").join("note.rs")
            || f == src.join("program").join("mod.rs")
            || f.starts_with(src.join("lang"))
    };
    let mut problems = Vec::new();
    for file in rust_files(&src).into_iter().filter(|f| !allowed(f)) {
        for (n, line) in code_lines(&file) {
            if line.contains("Note::new(") || line.contains("Note {") {
                problems.push(format!("{}:{n}: a note written outside the table: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "notes outside model::arch::notes:\n{}", problems.join("\n"));
}

/// A source file's module path: `src/model/cost.rs` is `model::cost`, `src/model/arch/mod.rs` `model::arch`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib" || p == "main") {
        parts.pop();
    }
    parts
}

/// The paths a line names: `crate::a::b`, `super::b` and `self::b` (from `here`), and each name of a
/// `use crate::a::{b, c::d}` group, as far as the path goes.
fn module_refs(line: &str, here: &[String]) -> Vec<Vec<String>> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (i, _) in line.match_indices(start) {
            if line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut path: Vec<String> = if start == "crate::" { Vec::new() } else { here.to_vec() };
            let mut rest = &line[i..];
            // `super::super::...`
            while let Some(r) = rest.strip_prefix("super::") {
                path.pop();
                rest = r;
            }
            rest = rest.strip_prefix("crate::").or_else(|| rest.strip_prefix("self::")).unwrap_or(rest);
            loop {
                let name = ident(rest);
                if name.is_empty() {
                    break;
                }
                path.push(name.clone());
                rest = &rest[name.len()..];
                match rest.strip_prefix("::") {
                    Some(r) => rest = r,
                    None => break,
                }
            }
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                for item in group.split(',') {
                    let name = ident(item.trim());
                    if !name.is_empty() {
                        let mut p = path.clone();
                        p.push(name);
                        out.push(p);
                    }
                }
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn no_files_import_each_other_in_a_ring() {
    // Issue 29: a file cycle (cost.rs imports count.rs, count.rs imports cost.rs, or through a third file)
    // makes several files one room with several doors. Files import along a chain: shared types live in the
    // file below them. A name imported through a parent's re-export (`super::Stmt`, `crate::model::Report`)
    // counts as an import of the file that defines it.
    let src = src();
    let files = rust_files(&src);
    let modules: Vec<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    // Which files define each public name (`pub`, `pub(super)`, `pub(crate)` items).
    let mut defines: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (k, file) in files.iter().enumerate() {
        for (_, line) in code_lines(file) {
            let t = line.trim_start();
            let Some(rest) = t.strip_prefix("pub") else { continue };
            let rest = if rest.starts_with('(') { rest.split_once(')').map_or("", |(_, r)| r) } else { rest };
            let mut words = rest.split_whitespace();
            if let (Some("struct" | "enum" | "fn" | "type" | "trait" | "const" | "static"), Some(name)) =
                (words.next(), words.next())
            {
                let name: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                defines.entry(name).or_default().push(k);
            }
        }
    }
    let index = |path: &[String]| -> Option<usize> {
        // The longest prefix of `path` that is a file's module; a name after it that one file below that
        // module defines leads to that file.
        let (len, t) = (1..=path.len())
            .rev()
            .find_map(|k| modules.iter().position(|m| m.as_slice() == &path[..k]).map(|t| (k, t)))?;
        let Some(name) = path.get(len) else { return Some(t) };
        let below: Vec<usize> = defines
            .get(name)
            .map(|ds| ds.iter().copied().filter(|&d| modules[d].starts_with(&modules[t])).collect())
            .unwrap_or_default();
        Some(if below.len() == 1 { below[0] } else { t })
    };
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); files.len()];
    let mut why: std::collections::BTreeMap<(usize, usize), String> = Default::default();
    for (k, file) in files.iter().enumerate() {
        for (n, line) in code_lines(file) {
            for r in module_refs(&line, &modules[k]) {
                if let Some(t) = index(&r) {
                    if t != k {
                        edges[k].insert(t);
                        why.entry((k, t)).or_insert_with(|| format!("{}:{n}", file.display()));
                    }
                }
            }
        }
    }
    // Every strongly connected group of files is reported with one shortest cycle through its first file.
    let n = files.len();
    let reach: Vec<Vec<bool>> = (0..n)
        .map(|a| {
            let mut seen = vec![false; n];
            let mut stack = vec![a];
            while let Some(x) = stack.pop() {
                for &y in &edges[x] {
                    if !seen[y] {
                        seen[y] = true;
                        stack.push(y);
                    }
                }
            }
            seen
        })
        .collect();
    let mut grouped = vec![false; n];
    let mut cycles = Vec::new();
    for a in 0..n {
        if grouped[a] || !reach[a][a] {
            continue;
        }
        let group: Vec<usize> = (0..n).filter(|&b| reach[a][b] && reach[b][a]).collect();
        for &g in &group {
            grouped[g] = true;
        }
        // Breadth-first from `a` back to `a` inside the group.
        let mut prev = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::from([a]);
        let mut back = None;
        while let Some(x) = queue.pop_front() {
            if edges[x].contains(&a) {
                back = Some(x);
                break;
            }
            for &y in &edges[x] {
                if group.contains(&y) && prev[y] == usize::MAX && y != a {
                    prev[y] = x;
                    queue.push_back(y);
                }
            }
        }
        let mut path = vec![a];
        let mut x = back.expect("a is on a cycle");
        while x != a {
            path.push(x);
            x = prev[x];
        }
        path[1..].reverse();
        path.push(a);
        let steps: Vec<String> = path
            .windows(2)
            .map(|w| format!("{} -> {} ({})", modules[w[0]].join("::"), modules[w[1]].join("::"), why[&(w[0], w[1])]))
            .collect();
        let names: Vec<String> = group.iter().map(|&g| modules[g].join("::")).collect();
        cycles.push(format!(
            "{} files import each other in a ring: {}\n  {}",
            group.len(),
            names.join(", "),
            steps.join("\n  ")
        ));
    }
    assert!(cycles.is_empty(), "file cycles:\n{}", cycles.join("\n"));
}

#[test]
fn no_source_file_is_over_1500_lines() {
    // Issue 29: a file is one idea; past 1,500 lines it has become several (the CUDA lowering was 5,078).
    let long: Vec<String> = rust_files(&src())
        .into_iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(&f).map(|t| t.lines().count()).unwrap_or(0);
            (n > 1500).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split along its seams:\n{}", long.join("\n"));
}
