//! Where the page's analyses run: a web worker per pane (the `warpscope-engine` module), so that no
//! analysis ever runs on the main thread; or, for the browser tests, the same service called in-thread.
//!
//! Each pane has one request in flight at most. A newer request waits for the current one to finish, unless
//! the current one has run longer than [`CANCEL_AFTER_MS`]: then its worker is stopped and a fresh one takes
//! the newer request, so a long run never delays what the user typed last. A newer request for the same
//! scenario (another instruction or issue chosen) always waits: the worker answers it from the run's result.
//!
//! The memory system's schedule check (the grid again with another number of blocks per SM) is as long as the
//! main run. Where the machine has a second core, a pane's [`Helper`] worker runs it beside the main run: the main
//! worker answers without it, holds its `Done` back until the check is in, and adds it to its kept result.
//!
//! Kernel names: a SASS listing's parameter types come from its kernels' mangled names, and the analysis
//! workers have no demangler (their size budget). A worker that needs names answers [`Reply::Names`]; the
//! engine has them demangled by the `warpscope-demangle` worker, keeps them for the page's lifetime, and
//! sends the request again with every name it knows. The page sees only the second answer.

use crate::service::{Reply, Request, Schedule};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A request running longer than this is cancelled when a newer one arrives.
pub const CANCEL_AFTER_MS: f64 = 150.0;

thread_local! {
    /// Kernel names demangled so far: (mangled, demangled), empty where the demangler could not read one.
    static NAMES: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

fn learn(pairs: Vec<(String, String)>) {
    NAMES.with(|n| {
        let mut n = n.borrow_mut();
        for (k, v) in pairs {
            if !n.iter().any(|(m, _)| *m == k) {
                n.push((k, v));
            }
        }
    });
}

/// The service called in-thread (browser tests): `(pane, request, reply)`.
pub type Local = Rc<dyn Fn(usize, &Request, &mut dyn FnMut(Reply))>;

/// An in-thread engine, compared by identity (for component properties).
#[derive(Clone)]
pub struct LocalEngine(pub Local);

impl PartialEq for LocalEngine {
    fn eq(&self, o: &LocalEngine) -> bool {
        Rc::ptr_eq(&self.0, &o.0)
    }
}

impl LocalEngine {
    /// The analysis service, in-thread, with one cache per pane.
    pub fn service() -> LocalEngine {
        let caches: Rc<RefCell<Vec<crate::service::Cache>>> = Rc::default();
        LocalEngine(Rc::new(move |pane, req, reply| {
            let mut c = caches.borrow_mut();
            while c.len() <= pane {
                c.push(crate::service::Cache::default());
            }
            crate::service::serve(req, &mut c[pane], reply);
        }))
    }
}

/// Delivers a pane's reply.
pub type Deliver = Rc<dyn Fn(usize, Reply)>;

#[derive(Default)]
struct Slot {
    worker: Option<web_sys::Worker>,
    /// The worker module it runs (see [`module_for`]).
    module: &'static str,
    ready: bool,
    in_flight: Option<(u64, f64)>,
    /// The request in flight, to send again once the kernel names it asked for are known.
    posted: Option<Request>,
    /// The request whose kernel names are being demangled (it goes out again once they are known).
    naming: Option<u64>,
    /// The request whose next `Done` ends the run that asked for names (not the run sent again with them):
    /// not passed on. Apart from `naming`, because the demangler can answer, and the request go out again,
    /// before that `Done` arrives; the page would otherwise take it as the end of the second run.
    unnamed_done: Option<u64>,
    /// Instructions of a result that came ahead of it, in parts (see [`crate::service::split_result`]).
    parts: crate::service::Parts,
    queued: Option<Request>,
    _handlers: Vec<Closure<dyn Fn(web_sys::MessageEvent)>>,
    _errors: Vec<Closure<dyn Fn(web_sys::Event)>>,
    /// The worker that runs the schedule check beside the main run.
    helper: Helper,
    /// The request whose result came without its schedule check: its `Done` is held back.
    unchecked: Option<u64>,
    /// That request, once its run is done, waiting for the check.
    waiting: Option<Request>,
    /// The check's figures for the request of this id, as the second worker wrote them: added to it as it is
    /// posted ([`Request::check`]).
    check: Option<(u64, JsValue)>,
}

/// A pane's second worker: the schedule check of the scenario the main worker runs ([`Schedule::Only`]).
#[derive(Default)]
struct Helper {
    worker: Option<web_sys::Worker>,
    ready: bool,
    /// The check it runs or ran; its outcome belongs to this request's scenario.
    req: Option<Request>,
    posted: bool,
    /// The check's figures as the worker wrote them (null for a launch of one block), or the reply that stopped
    /// it (an error, the time limit) with its kind.
    outcome: Option<Result<JsValue, (JsValue, &'static str)>>,
    _handlers: Vec<Closure<dyn Fn(web_sys::MessageEvent)>>,
    _errors: Vec<Closure<dyn Fn(web_sys::Event)>>,
}

impl Helper {
    /// Stops the worker. Its handlers are detached from it but kept alive (they may be running this very call,
    /// and a message already on its way must not reach a dropped closure); the next worker's replace them.
    fn stop(&mut self) {
        if let Some(w) = self.worker.take() {
            w.set_onmessage(None);
            w.set_onerror(None);
            w.terminate();
        }
        let (_handlers, _errors) = (std::mem::take(&mut self._handlers), std::mem::take(&mut self._errors));
        *self = Helper { _handlers, _errors, ..Helper::default() };
    }

    fn post(&mut self) {
        let (Some(w), Some(req), true, false) = (&self.worker, &self.req, self.ready, self.posted) else { return };
        self.posted = to_js(req).is_some_and(|v| w.post_message(&v).is_ok());
    }
}

/// The machine's cores as the browser tells them (1 when it does not).
fn cores() -> f64 {
    web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency())
}

/// `v[k]`.
fn field(v: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

/// A reply of the schedule check (`{Progress: {...}}`, as the worker wrote it) read as the pane's request `id`'s.
fn as_reply_to(data: &JsValue, key: &str, id: u64) -> Option<Reply> {
    let _ = js_sys::Reflect::set(&field(data, key), &JsValue::from_str("id"), &JsValue::from(id));
    super::json::from_worker::<Reply>(data.clone()).ok()
}

/// Once both runs are in: the waiting request's check handed to the main worker (which adds it to its kept
/// result and answers again), or its `Done`, or what stopped the check. The replies to pass on go to `out`.
fn settle(slot: &mut Slot, out: &mut Vec<Reply>) {
    let same = match (&slot.waiting, &slot.helper.req) {
        (None, _) => return,
        (Some(w), h) => h.as_ref().is_some_and(|h| h.scenario == w.scenario),
    };
    let outcome = slot.helper.outcome.clone().filter(|_| same);
    if same && outcome.is_none() {
        return;
    }
    let Some(w) = slot.waiting.take() else { return };
    let id = w.id;
    let again = |schedule| Request { schedule, ..w };
    match outcome {
        Some(Ok(run)) if run.is_null() || run.is_undefined() => return out.push(Reply::Done { id }),
        Some(Ok(run)) => {
            slot.queued = Some(again(Schedule::Apart));
            slot.check = Some((id, run));
        }
        Some(Err((data, key))) => {
            out.extend(as_reply_to(&data, key, id));
            return out.push(Reply::Done { id });
        }
        // No second worker runs this check (it was stopped): the main worker runs it after all.
        None => slot.queued = Some(again(Schedule::Here)),
    }
    if slot.ready && slot.in_flight.is_none() {
        post_next(slot);
    }
}

/// The analysis worker for a scenario. CUDA, PTX and SASS each have their own, and expressions, address lists
/// and layouts (the default view) the smallest, so that no visitor loads a front end they do not use; the
/// modelled memory system (L1, L2 and DRAM across warps and blocks) is a feature of its own, in one worker with
/// every front end, started only when a pane turns it on. Each module stays within its load budget (Cargo.toml's
/// features, index.html, .ci/test.sh).
fn module_for(lang: crate::lang::Lang, caches: bool) -> &'static str {
    match lang {
        _ if caches => "warpscope-engine-memory",
        crate::lang::Lang::Cuda => "warpscope-engine-cuda",
        crate::lang::Lang::Ptx => "warpscope-engine-ptx",
        crate::lang::Lang::Sass => "warpscope-engine-sass",
        _ => "warpscope-engine",
    }
}

/// The page's engine.
pub struct Engine {
    local: Option<Local>,
    slots: Rc<RefCell<Vec<Slot>>>,
}

fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or_else(js_sys::Date::now, |p| p.now())
}

fn to_js<T: serde::Serialize>(v: &T) -> Option<JsValue> {
    let ser = serde_wasm_bindgen::Serializer::new().serialize_large_number_types_as_bigints(true);
    v.serialize(&ser).ok()
}

impl Engine {
    /// Workers, or the in-thread service when `local` is given.
    pub fn new(local: Option<LocalEngine>) -> Engine {
        Engine { local: local.map(|l| l.0), slots: Rc::default() }
    }

    /// Sends pane `pane`'s request; replies come to `deliver`.
    pub fn send(&self, pane: usize, mut req: Request, deliver: Deliver) {
        req.names = NAMES.with(|n| n.borrow().clone());
        if let Some(local) = &self.local {
            // In-thread (the browser tests) there is no demangler: names stay unknown, and run again so.
            let mut missing = Vec::new();
            local(pane, &req, &mut |r: Reply| match r {
                Reply::Names { symbols, .. } => missing = symbols,
                Reply::Done { .. } if !missing.is_empty() => {}
                r => deliver(pane, r),
            });
            if !missing.is_empty() {
                learn(missing.into_iter().map(|s| (s, String::new())).collect());
                req.names = NAMES.with(|n| n.borrow().clone());
                local(pane, &req, &mut |r: Reply| deliver(pane, r));
            }
            return;
        }
        let mut slots = self.slots.borrow_mut();
        while slots.len() <= pane {
            slots.push(Slot::default());
        }
        let slot = &mut slots[pane];
        // A newer request supersedes one waiting for its check.
        slot.waiting = None;
        slot.unchecked = None;
        let apart = req.scenario.caches.is_some() && req.scenario.block_idx.is_none() && cores() >= 2.0;
        if apart {
            req.schedule = Schedule::Apart;
            let h = &mut slot.helper;
            if h.req.as_ref().is_none_or(|r| r.scenario != req.scenario) {
                // A check of another scenario still running is stopped; one that finished leaves its worker idle.
                if h.outcome.is_none() {
                    h.stop();
                }
                h.req = Some(Request { schedule: Schedule::Only, ..req.clone() });
                (h.posted, h.outcome) = (false, None);
                if h.worker.is_some() {
                    h.post();
                } else {
                    self.spawn_helper(pane, slot, Rc::clone(&deliver));
                }
            }
        } else if slot.helper.outcome.is_none() {
            slot.helper.stop();
        }
        // A run of the same scenario (another instruction or issue chosen while it goes on) is not stopped: the
        // worker answers the newer request from what it keeps once the run is done.
        let same_run = slot.in_flight.is_some() && slot.posted.as_ref().is_some_and(|p| p.scenario == req.scenario);
        let stale = !same_run && slot.in_flight.is_some_and(|(_, t)| now_ms() - t > CANCEL_AFTER_MS);
        let module = module_for(req.scenario.lang, req.scenario.caches.is_some());
        if slot.worker.is_none() || stale || slot.module != module {
            if let Some(w) = slot.worker.take() {
                w.terminate();
            }
            slot.in_flight = None;
            slot.queued = Some(req);
            slot.module = module;
            drop(slots);
            self.spawn(pane, deliver);
            return;
        }
        slot.queued = Some(req);
        if slot.ready && slot.in_flight.is_none() {
            post_next(slot);
            return;
        }
        if same_run {
            return;
        }
        // Behind a request that is still young: if it is not answered by the time it has run
        // CANCEL_AFTER_MS, it is stopped and this one goes ahead.
        if let Some((id, started)) = slot.in_flight {
            let wait = (started + CANCEL_AFTER_MS - now_ms()).max(0.0) as u32 + 1;
            drop(slots);
            let (cells, local) = (Rc::clone(&self.slots), self.local.clone());
            let timer = gloo_timers::callback::Timeout::new(wait, move || {
                let still = cells.borrow().get(pane).is_some_and(|s| s.in_flight.is_some_and(|(f, _)| f == id));
                if still {
                    let req = cells.borrow_mut().get_mut(pane).and_then(|s| s.queued.take());
                    if let Some(req) = req {
                        Engine { local, slots: cells }.send(pane, req, deliver);
                    }
                }
            });
            timer.forget();
        }
    }

    /// Stops pane `pane`'s run: its worker is terminated (a run in a worker cannot be interrupted otherwise),
    /// and the pane's next request starts a fresh one. In-thread there is nothing to stop: the run finished
    /// before the page could ask.
    pub fn cancel(&self, pane: usize) {
        let mut slots = self.slots.borrow_mut();
        let Some(slot) = slots.get_mut(pane) else { return };
        if let Some(w) = slot.worker.take() {
            w.terminate();
        }
        slot.in_flight = None;
        slot.queued = None;
        slot.posted = None;
        slot.naming = None;
        slot.unnamed_done = None;
        slot.ready = false;
        slot.helper.stop();
        slot.waiting = None;
        slot.unchecked = None;
    }

    /// Starts pane `pane`'s [`Helper`] worker, which posts its check once it is listening.
    fn spawn_helper(&self, pane: usize, slot: &mut Slot, deliver: Deliver) {
        let Ok(worker) = super::browser::start_worker("warpscope-engine-memory") else {
            // No second worker: the check's outcome is unknown and the main worker runs it (`settle`).
            slot.helper.req = None;
            return;
        };
        let cells = Rc::clone(&self.slots);
        let me = worker.clone();
        let d2 = Rc::clone(&deliver);
        let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
            let data = msg.data();
            let mut slots = cells.borrow_mut();
            let Some(slot) = slots.get_mut(pane) else { return };
            let h = &mut slot.helper;
            if h.worker.as_ref() != Some(&me) {
                return;
            }
            if data.as_string().as_deref() == Some("ready") {
                h.ready = true;
                h.post();
                return;
            }
            // Read as the worker wrote them: the check's figures are passed on to the main worker unread
            // (`Reply::Schedule`, which the page's module has no code for).
            let mut out = Vec::new();
            if h.req.is_some() {
                if let Some(key) = ["Schedule", "Progress", "Error", "Stopped", "Names"]
                    .into_iter()
                    .find(|k| field(&data, k).is_object())
                {
                    match key {
                        "Schedule" => h.outcome = Some(Ok(field(&field(&data, key), "run"))),
                        // The check's progress shows once the main run is done.
                        "Progress" => {
                            out.extend(slot.waiting.as_ref().and_then(|w| as_reply_to(&data, key, w.id)));
                        }
                        // The main worker asks for them too; the check goes out again with them.
                        "Names" => h.stop(),
                        _ => h.outcome = Some(Err((data, key))),
                    }
                }
            }
            settle(slot, &mut out);
            drop(slots);
            for r in out {
                deliver(pane, r);
            }
        });
        // A second worker that fails (out of memory, a trap) is stopped, and the main worker runs the check.
        let (cells, me) = (Rc::clone(&self.slots), worker.clone());
        let onerror = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
            e.prevent_default();
            let mut slots = cells.borrow_mut();
            let Some(slot) = slots.get_mut(pane) else { return };
            if slot.helper.worker.as_ref() != Some(&me) {
                return;
            }
            slot.helper.stop();
            let mut out = Vec::new();
            settle(slot, &mut out);
            drop(slots);
            for r in out {
                d2(pane, r);
            }
        });
        worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
        worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
        slot.helper._handlers = vec![onmessage];
        slot.helper._errors = vec![onerror];
        slot.helper.worker = Some(worker);
    }

    fn spawn(&self, pane: usize, deliver: Deliver) {
        let module = self.slots.borrow().get(pane).map_or("warpscope-engine", |s| s.module);
        let started = super::browser::start_worker(module);
        let mut slots = self.slots.borrow_mut();
        let slot = &mut slots[pane];
        let worker = match started {
            Ok(w) => w,
            Err(e) => {
                let id = slot.queued.take().map_or(0, |r| r.id);
                drop(slots);
                deliver(pane, Reply::Error { id, field: crate::scenario::Field::Pattern, message: e });
                deliver(pane, Reply::Done { id });
                return;
            }
        };
        slot.ready = false;
        let (cells, d2) = (Rc::clone(&self.slots), Rc::clone(&deliver));
        let me = worker.clone();
        let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |msg: web_sys::MessageEvent| {
            let data = msg.data();
            let mut slots = cells.borrow_mut();
            let Some(slot) = slots.get_mut(pane) else { return };
            // Messages from a worker that was replaced are dropped.
            if slot.worker.as_ref() != Some(&me) {
                return;
            }
            if data.as_string().as_deref() == Some("ready") {
                slot.ready = true;
                post_next(slot);
                return;
            }
            if js_sys::Reflect::has(&data, &JsValue::from_str("part")).unwrap_or(false) {
                // The worker writes parts from the same types the page reads; one that cannot be read is dropped.
                if let Ok(part) = super::json::from_worker::<crate::service::ResultPart>(data) {
                    slot.parts.add(part);
                }
                return;
            }
            let reply = match super::json::from_worker::<Reply>(data).map(|r| slot.parts.join(r)) {
                Ok(r) => r,
                Err(e) => {
                    web_sys::console::error_1(&JsValue::from_str(&format!("warpscope: unreadable worker reply: {e}")));
                    return;
                }
            };
            // The run's progress is the progress of a newer request for the same scenario waiting behind it.
            let reply = match (reply, &slot.queued) {
                (Reply::Progress { done, total, seconds, text, .. }, Some(q))
                    if slot.posted.as_ref().is_some_and(|p| p.scenario == q.scenario) =>
                {
                    Reply::Progress { id: q.id, done, total, seconds, text }
                }
                (r, _) => r,
            };
            if let Reply::Names { id, symbols } = reply {
                slot.naming = Some(id);
                slot.unnamed_done = Some(id);
                drop(slots);
                let (cells, d4) = (Rc::clone(&cells), Rc::clone(&d2));
                super::browser::demangle(symbols, move |pairs| {
                    learn(pairs);
                    // Sent again only if it is still the pane's latest request.
                    let again = {
                        let mut slots = cells.borrow_mut();
                        let Some(slot) = slots.get_mut(pane) else { return };
                        if slot.naming != Some(id) || slot.queued.is_some() {
                            None
                        } else {
                            slot.naming = None;
                            slot.posted.take().filter(|r| r.id == id)
                        }
                    };
                    if let Some(req) = again {
                        Engine { local: None, slots: cells }.send(pane, req, d4);
                    }
                });
                return;
            }
            if let Reply::Result { id, result, .. } = &reply {
                let apart = slot.posted.as_ref().is_some_and(|p| p.id == *id && p.schedule == Schedule::Apart);
                if apart && result.cache_chart.as_ref().is_some_and(|c| c.schedule.is_none()) {
                    slot.unchecked = Some(*id);
                }
            }
            let mut pass_on = true;
            let mut settled = Vec::new();
            if let Reply::Done { id } = reply {
                // A result without its check: the pane stays busy until the check is in (`settle`).
                if slot.unchecked == Some(id) && slot.queued.is_none() {
                    slot.unchecked = None;
                    slot.waiting = slot.posted.clone().filter(|p| p.id == id);
                }
                pass_on = slot.unnamed_done != Some(id) && slot.waiting.as_ref().is_none_or(|w| w.id != id);
                if !pass_on {
                    slot.unnamed_done = None;
                }
                if slot.in_flight.is_some_and(|(f, _)| f == id) {
                    slot.in_flight = None;
                    if !pass_on {
                        // Kept for sending again (post_next would forget it).
                        let keep = slot.posted.take();
                        post_next(slot);
                        // Unless a newer request went out (which ends the naming), it waits for its names.
                        if slot.in_flight.is_none() {
                            slot.posted = keep;
                        }
                    } else {
                        post_next(slot);
                    }
                }
                settle(slot, &mut settled);
            }
            drop(slots);
            if pass_on {
                d2(pane, reply);
            }
            for r in settled {
                d2(pane, r);
            }
        });
        let (cells, d3) = (Rc::clone(&self.slots), Rc::clone(&deliver));
        let me = worker.clone();
        let onerror = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
            e.prevent_default();
            let detail = js_sys::Reflect::get(&e, &JsValue::from_str("message")).ok().and_then(|m| m.as_string());
            web_sys::console::error_1(&JsValue::from_str(&format!(
                "warpscope: the analysis worker failed: {}",
                detail.unwrap_or_default()
            )));
            let mut slots = cells.borrow_mut();
            let Some(slot) = slots.get_mut(pane) else { return };
            if slot.worker.as_ref() != Some(&me) {
                return;
            }
            let id = slot.in_flight.take().map_or(0, |(id, _)| id);
            if let Some(w) = slot.worker.take() {
                w.terminate();
            }
            drop(slots);
            let message =
                "1:1: the analysis stopped unexpectedly on this pattern (the worker failed); your text is kept"
                    .to_string();
            d3(pane, Reply::Error { id, field: crate::scenario::Field::Pattern, message });
            d3(pane, Reply::Done { id });
        });
        worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
        worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
        slot._handlers = vec![onmessage];
        slot._errors = vec![onerror];
        slot.worker = Some(worker);
    }
}

/// Posts the queued request, if any.
fn post_next(slot: &mut Slot) {
    let (Some(w), Some(req)) = (&slot.worker, slot.queued.take()) else { return };
    if let Some(v) = to_js(&req) {
        if let Some((_, run)) = slot.check.take_if(|(id, _)| *id == req.id) {
            let _ = js_sys::Reflect::set(&v, &JsValue::from_str("check"), &run);
        }
        if w.post_message(&v).is_ok() {
            slot.in_flight = Some((req.id, now_ms()));
            // A newer request supersedes one waiting for kernel names.
            if slot.naming != Some(req.id) {
                slot.naming = None;
            }
            slot.posted = Some(req);
        }
    }
}
