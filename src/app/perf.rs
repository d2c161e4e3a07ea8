//! Performance marks: an edit or an animation step marks when it starts, and the render that shows it
//! records a `performance.measure` named `warpscope:edit` or `warpscope:step` (the browser's User Timing,
//! read by the benchmarks). Bounded, and silent where the browser offers no Performance API.

fn performance() -> Option<web_sys::Performance> {
    web_sys::window().and_then(|w| w.performance())
}

/// Marks the start of an edit (`edit`) or an animation step (`step`).
pub fn start(kind: &str) {
    if let Some(p) = performance() {
        let _ = p.mark(&format!("warpscope:{kind}:start"));
        PENDING.with(|k| *k.borrow_mut() = Some(kind.to_string()));
    }
}

thread_local! {
    static PENDING: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Called after a render: records how long the pending edit or step took to reach the DOM. An edit counts
/// as shown only when the figure answers it (`current`): the analysis runs in a worker and arrives later.
pub fn rendered(current: bool) {
    let pending = PENDING.with(|k| k.borrow().clone());
    if pending.as_deref() == Some("edit") && !current {
        return;
    }
    let Some(kind) = PENDING.with(|k| k.borrow_mut().take()) else { return };
    if let Some(p) = performance() {
        let name = format!("warpscope:{kind}");
        let _ = p.measure_with_start_mark(&name, &format!("warpscope:{kind}:start"));
        p.clear_marks_with_mark_name(&format!("warpscope:{kind}:start"));
        if p.get_entries_by_name(&name).length() > 2000 {
            p.clear_measures_with_measure_name(&name);
        }
    }
}
