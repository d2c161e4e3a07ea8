//! The page's state, its actions and the reducer. Everything the page shows is derived from this; nothing
//! here touches the DOM.

use crate::analysis::ProgramResult;
use crate::figure::scene::{steps, Theme};
use crate::lang::Lang;
use crate::model::arch::{Cc, L1Choice};
use crate::model::report::Report;
use crate::program::launch::Dim3;
use crate::scenario::{Field, Scenario, Setting};
use crate::service::{Reply, Request, Shown};
use crate::teach::explain::{Fix, Suggestion};
use crate::teach::lab::GoalResult;
use std::rc::Rc;
use yew::Reducible;

/// The page stops an analysis that finishes no block for this many seconds (a newer edit, or the cancel
/// button, stops it sooner): an endless loop in a pasted kernel ends with an error that points at the loop.
pub const PAGE_STALL_SECONDS: f64 = 20.0;

/// The page stops a run that keeps finishing blocks after this many seconds: long enough for the lecture's
/// grids through the memory system on a laptop doing other work; the progress line and its cancel button are
/// on screen all the while.
pub const PAGE_MAX_SECONDS: f64 = 300.0;

/// How far a long run has come, from the worker's progress replies.
#[derive(Clone, Debug, PartialEq)]
pub struct RunProgress {
    /// Blocks done.
    pub done: u64,
    /// Blocks in all.
    pub total: u64,
    /// Seconds since the run started.
    pub seconds: f64,
    /// What it is doing, in words.
    pub text: String,
}

/// One side of the page: a scenario, what the user typed, and the last good result. Results come from the
/// analysis worker: each change sends a request (numbered), and only the replies to the latest one count.
#[derive(Clone, Debug, PartialEq)]
pub struct Pane {
    /// The scenario being shown.
    pub scenario: Scenario,
    /// The block size as typed (kept while it does not parse).
    pub block_text: String,
    /// The grid size as typed (kept while it does not parse).
    pub grid_text: String,
    /// The `NAME=VALUE` settings as typed.
    pub sets_text: String,
    /// The preset last chosen, if the pattern still comes from it.
    pub preset: String,
    /// The last good result.
    pub result: Option<Rc<ProgramResult>>,
    /// The lab exercise's goals checked against `result` by the analysis worker (pane 0 in a lab).
    pub goals: Option<Rc<Vec<GoalResult>>>,
    /// The issue the figure shows, with its report and explanation.
    pub shown: Option<Rc<Shown>>,
    /// The request `shown` answered.
    pub shown_for: u64,
    /// The checked fixes for `shown`.
    pub fixes: Option<Rc<Vec<Suggestion>>>,
    /// The current error, shown beside the last good result.
    pub error: Option<String>,
    /// Until the figure first answers: show the first instruction whose mnemonic contains this (a lab
    /// exercise opens on the instruction its goals select).
    pub focus: Option<String>,
    /// The selected instruction.
    pub instr: usize,
    /// The selected warp-level issue of it (numbered warp by warp).
    pub issue: usize,
    /// The latest request sent for this pane (0: none yet).
    pub request: u64,
    /// Whether the latest request is still being answered.
    pub busy: bool,
    /// How far a long run has come.
    pub progress: Option<RunProgress>,
    /// Why the latest run stopped before it finished, with nothing wrong in the input (the page's time limit,
    /// or the user's cancel): shown in place of the figure's progress, with what to do.
    pub stopped: Option<String>,
    /// A request the user cancelled: the engine stops its worker.
    pub cancelled: Option<u64>,
    /// The kernels the current CUDA text offers (from the worker, read before the kernel runs, so that a
    /// failing kernel leaves the others choosable); replaced with each request's answer.
    pub kernels: Option<Rc<Vec<crate::lang::KernelChoice>>>,
    /// In compare mode, whether this second pane follows pane A's program (it does until the user edits its
    /// program; its CC and other machine settings are its own either way).
    pub follows: bool,
}

impl Pane {
    fn new(scenario: Scenario, request: u64) -> Pane {
        let grid_text = block_text(scenario.grid);
        let block_text = block_text(scenario.block);
        let sets_text = scenario.sets.join(", ");
        Pane {
            scenario,
            block_text,
            grid_text,
            sets_text,
            preset: String::new(),
            result: None,
            goals: None,
            shown: None,
            shown_for: 0,
            fixes: None,
            error: None,
            focus: None,
            instr: 0,
            issue: 0,
            request,
            busy: true,
            progress: None,
            stopped: None,
            cancelled: None,
            kernels: None,
            follows: true,
        }
    }

    /// Takes `a`'s program (everything but the machine settings) and its selection, keeping this pane's CC,
    /// L1 choice, bank mode and shared model.
    fn follow(&mut self, a: &Pane) {
        let machine = (self.scenario.cc, self.scenario.config);
        self.scenario = a.scenario.clone();
        (self.scenario.cc, self.scenario.config) = machine;
        self.block_text = a.block_text.clone();
        self.grid_text = a.grid_text.clone();
        self.sets_text = a.sets_text.clone();
        self.preset = a.preset.clone();
        self.instr = a.instr;
        self.issue = a.issue;
        self.follows = true;
    }

    /// Asks for a new analysis of the pane (as request `id`), unless the block or grid size does not parse.
    fn rerun(&mut self, id: u64) {
        let mut sc = self.scenario.clone();
        match sc.set(Setting::Block, &self.block_text).and_then(|_| sc.set(Setting::Grid, &self.grid_text)) {
            Ok(()) => self.scenario = sc,
            Err(e) => {
                self.error = Some(e.error.message);
                return;
            }
        }
        self.request = id;
        self.busy = true;
        self.stopped = None;
        self.progress = None;
    }

    /// The report of the issue the figure shows.
    pub fn report(&self) -> Option<&Report> {
        self.shown.as_ref().map(|s| &s.report)
    }

    /// The most steps any warp of the stacked view has.
    pub fn steps_all(&self) -> usize {
        self.shown.as_ref().map_or(0, |s| s.others.iter().map(|(_, r)| steps(r).len()).max().unwrap_or(0))
    }

    /// Steps in the shown issue's animation.
    pub fn steps(&self) -> usize {
        self.report().map_or(0, |r| steps(r).len())
    }

    /// Whether the figure shows the answer to the latest request.
    pub fn current(&self) -> bool {
        self.shown_for == self.request || self.error.is_some()
    }

    /// Applies a reply from the analysis worker; replies to older requests are ignored.
    fn take(&mut self, reply: Reply) {
        // A cancelled run's replies still on their way are dropped with it.
        if reply.id() != self.request || self.cancelled == Some(reply.id()) {
            return;
        }
        match reply {
            Reply::Progress { done, total, seconds, text, .. } => {
                self.progress = Some(RunProgress { done, total, seconds, text })
            }
            Reply::Stopped { message, .. } => {
                // The text ran as far as the limit: no error of an older text, no goals of an older result.
                self.stopped = Some(message);
                self.error = None;
                self.goals = None;
                self.shown_for = self.request;
            }
            Reply::Result { result, goals, .. } => {
                if self.instr >= result.instructions.len() {
                    self.instr = 0;
                    self.issue = 0;
                }
                self.result = Some(Rc::new(*result));
                self.goals = goals.map(Rc::new);
                self.error = None;
            }
            Reply::Kernels { kernels, .. } => self.kernels = Some(Rc::new(kernels)),
            Reply::Shown { shown, .. } => {
                self.focus = None;
                self.instr = shown.instr;
                self.issue = shown.issue;
                self.shown = Some(Rc::new(*shown));
                self.shown_for = self.request;
                self.fixes = None;
                self.error = None;
            }
            Reply::Fixes { instr, issue, suggestions, .. } => {
                if self.shown.as_ref().is_some_and(|s| s.instr == instr && s.issue == issue) {
                    self.fixes = Some(Rc::new(suggestions));
                }
            }
            Reply::Error { field, message, .. } => {
                let what = match field {
                    Field::Pattern => "pattern",
                    Field::Op => "instruction",
                    Field::Launch => "block",
                    Field::Set => "setting",
                    Field::Limit => "limit",
                    Field::Layout => "layout",
                    Field::Caches => "memory system",
                    Field::Data => "data",
                };
                self.error = Some(format!("{what} {}", crate::text::page_words(&message)));
                self.shown_for = self.request;
            }
            // The engine answers these itself (ui::engine) and sends the request again.
            Reply::Names { .. } | Reply::Schedule { .. } => {}
            Reply::Done { .. } => {
                self.busy = false;
                self.progress = None;
            }
        }
    }

    /// The request that brings this pane up to date.
    fn to_request(&self, all_warps: bool) -> Request {
        let mut scenario = self.scenario.clone();
        scenario.limits.max_seconds = PAGE_MAX_SECONDS;
        scenario.limits.stall_seconds = Some(PAGE_STALL_SECONDS);
        Request {
            id: self.request,
            scenario,
            instr: self.instr,
            issue: self.issue,
            all_warps,
            names: Vec::new(),
            goals: None,
            focus: self.focus.clone(),
            schedule: Default::default(),
            check: None,
        }
    }
}

/// `32`, `32x8` or `8x8x4`: the shortest form of a block size.
pub fn block_text(b: Dim3) -> String {
    match (b.y, b.z) {
        (1, 1) => b.x.to_string(),
        (_, 1) => format!("{}x{}", b.x, b.y),
        _ => b.to_string(),
    }
}

/// The whole page.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// One pane, or two in compare mode.
    pub panes: Vec<Pane>,
    /// Animation step shown: 0 = nothing moved yet; `None` = the finished picture.
    pub step: Option<usize>,
    /// Whether the animation runs.
    pub playing: bool,
    /// Milliseconds per step.
    pub speed_ms: u32,
    /// Colour theme.
    pub theme: Theme,
    /// The carveout calculator's input.
    pub carveout: String,
    /// Embed mode: only the figure, a metric line and minimal controls.
    pub embed: bool,
    /// A message for the user (a link that could not be opened, "link copied").
    pub notice: Option<String>,
    /// The course lab, when the page was opened with `?lab=`.
    pub lab: Option<LabState>,
    /// Show every warp of the selected instruction stacked, instead of one warp in detail.
    pub all_warps: bool,
    /// The number of the last request sent to the analysis worker.
    pub last_request: u64,
    /// Show shared memory as a tile of 16-byte chunks instead of the lanes (shared-memory issues only).
    pub tile: bool,
    /// While "all steps" is drawing its frames: (frames drawn, frames in all).
    pub exporting: Option<(usize, usize)>,
    /// Projection mode: large type for a lecture hall (the memory chart across the page, its text 18 px or more
    /// at 1280x720).
    pub projection: bool,
}

/// A student's progress in a lab, as kept in the browser.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Progress {
    /// The answer of each exercise, by id.
    pub answers: std::collections::BTreeMap<String, crate::teach::lab::Answer>,
    /// Hints revealed, by exercise id.
    pub hints: std::collections::BTreeMap<String, usize>,
    /// Exercises whose goals were met and questions answered when last graded.
    pub done: std::collections::BTreeSet<String>,
    /// The exercise last open (its id), which a reload opens again.
    pub current: Option<String>,
    /// The student's name, for the answers file.
    pub student: String,
}

/// An open lab.
#[derive(Clone, Debug)]
pub struct LabState {
    /// The lab.
    pub lab: Rc<crate::teach::lab::Course>,
    /// The localStorage key of its progress.
    pub key: String,
    /// The exercise shown.
    pub current: usize,
    /// The student's progress.
    pub progress: Progress,
    /// The origin the lab file came from when it is not this site's (`https://other.example`), shown above
    /// the lab.
    pub origin: Option<String>,
}

/// A lab file read and compiled by the lab worker.
#[derive(Clone, Debug, PartialEq)]
pub struct LabFile {
    /// The localStorage key of its progress.
    pub key: String,
    /// The checked course, as JSON.
    pub json: String,
    /// The progress saved in this browser, as JSON.
    pub saved: Option<String>,
    /// Where it came from, when not from this site: its origin.
    pub origin: Option<String>,
}

impl PartialEq for LabState {
    fn eq(&self, o: &LabState) -> bool {
        Rc::ptr_eq(&self.lab, &o.lab)
            && self.key == o.key
            && self.current == o.current
            && self.progress == o.progress
            && self.origin == o.origin
    }
}

impl LabState {
    /// The exercise shown.
    pub fn exercise(&self) -> Option<&crate::teach::lab::Exercise> {
        self.lab.exercises.get(self.current)
    }

    /// The saved answer of the exercise shown.
    pub fn answer(&self) -> Option<&crate::teach::lab::Answer> {
        self.exercise().and_then(|e| self.progress.answers.get(&e.id))
    }
}

impl Default for State {
    fn default() -> State {
        State {
            panes: vec![Pane::new(Scenario::default(), 1)],
            step: None,
            playing: false,
            speed_ms: 700,
            theme: Theme::Light,
            carveout: "50".into(),
            embed: false,
            notice: None,
            lab: None,
            all_warps: false,
            last_request: 1,
            tile: false,
            exporting: None,
            projection: false,
        }
    }
}

impl State {
    /// The request that brings pane `k` up to date. In a lab, pane 0's carries the exercise's goals, which the
    /// worker checks against the result.
    pub fn request(&self, k: usize) -> Option<Request> {
        let mut req = self.panes.get(k)?.to_request(self.all_warps);
        if k == 0 {
            req.goals = self.lab.as_ref().and_then(|l| l.exercise()).map(|e| e.goals.clone());
        }
        Some(req)
    }

    /// The state a share link describes; a link that cannot be opened gives the default view and says why.
    pub fn from_link(link: Option<&str>, embed: bool) -> State {
        let mut s = State { embed, ..State::default() };
        let Some(link) = link.filter(|l| !l.trim_start_matches('#').is_empty()) else { return s };
        match super::json::decode_view(link) {
            Ok(view) => {
                let mut panes = Vec::new();
                for p in &view.panes {
                    // decode() checked every pane, so scenario() succeeds here.
                    let Ok(sc) = p.scenario() else { continue };
                    let id = s.next_request();
                    let mut pane = Pane::new(sc, id);
                    pane.preset = p.preset.clone();
                    pane.block_text = block_text(pane.scenario.block);
                    pane.grid_text = block_text(pane.scenario.grid);
                    // The worker keeps the selection within the result.
                    pane.instr = p.instr;
                    pane.issue = p.issue;
                    panes.push(pane);
                }
                // A second pane that runs the first one's program keeps following it.
                if let [a, b] = panes.as_mut_slice() {
                    b.follows = a.scenario.program_differences(&b.scenario).is_empty();
                }
                if !panes.is_empty() {
                    s.panes = panes;
                }
                s.step = view.step;
                s.theme = view.theme;
                s.all_warps = view.all_warps;
                s.tile = view.tile;
                s.projection = view.projection;
            }
            Err(e) => s.notice = Some(format!("{e}. Showing the default view instead.")),
        }
        s
    }

    /// Shows the view of a link pasted into the open page, as a fresh start with it would, keeping what is
    /// not part of a link (an open lab, the carveout calculator). A link that cannot be opened leaves the
    /// view as it is and says why.
    pub fn open_link(&mut self, link: &str) {
        let fresh = State::from_link(Some(link), self.embed);
        if let Some(n) = fresh.notice {
            self.notice = Some(n.replace("Showing the default view instead.", "The view was left as it was."));
            return;
        }
        self.panes = fresh.panes;
        // Request numbers only grow: the engine sends a pane's request when its number is new.
        for k in 0..self.panes.len() {
            self.rerun(k);
        }
        self.step = fresh.step;
        self.theme = fresh.theme;
        self.all_warps = fresh.all_warps;
        self.tile = fresh.tile;
        self.projection = fresh.projection;
        self.playing = false;
        self.notice = None;
    }

    /// Puts back the editors' text saved when the page last stopped on a bug.
    pub fn restore(&mut self, texts: Vec<String>) {
        for (k, text) in texts.into_iter().enumerate().take(self.panes.len()) {
            let id = self.next_request();
            self.panes[k].scenario.text = text;
            self.panes[k].rerun(id);
        }
        self.notice = Some("warpscope restarted after a bug; your text was restored.".into());
    }

    /// A new request number.
    pub fn next_request(&mut self) -> u64 {
        self.last_request += 1;
        self.last_request
    }

    /// Asks for a new analysis of pane `k`.
    fn rerun(&mut self, k: usize) {
        let id = self.next_request();
        if let Some(p) = self.panes.get_mut(k) {
            p.rerun(id);
        }
    }

    /// The panes a selection made in pane `p` applies to: pane A's selection also moves a following pane B.
    fn selected_with(&self, p: usize) -> Vec<usize> {
        match self.panes.get(1) {
            Some(b) if p == 0 && b.follows => vec![0, 1],
            _ => vec![p],
        }
    }

    /// Gives a following pane B pane A's program after an edit of A, and asks for its analysis.
    fn sync_pane_b(&mut self) {
        if let [a, b] = self.panes.as_mut_slice() {
            if b.follows {
                b.follow(a);
                self.rerun(1);
            }
        }
    }

    /// In compare mode, what keeps pane B's numbers from being compared with pane A's: the program
    /// settings in which they differ, or (same program) a different instruction selected. `None` when the
    /// deltas compare like with like (or there is one pane).
    pub fn compare_mismatch(&self) -> Option<String> {
        let [a, b] = self.panes.as_slice() else { return None };
        let diffs = a.scenario.program_differences(&b.scenario);
        if !diffs.is_empty() {
            let names: Vec<&str> = diffs.iter().map(|d| d.label()).collect();
            return Some(format!(
                "Pane B runs a different program (its {} differ{} from pane A's): no differences are marked.",
                crate::text::list_and(&names),
                if names.len() == 1 { "s" } else { "" }
            ));
        }
        if a.instr != b.instr {
            return Some(format!(
                "Pane B shows instruction {} and pane A instruction {}: no differences are marked.",
                b.instr + 1,
                a.instr + 1
            ));
        }
        None
    }

    /// Whether every pane's figure answers its latest request.
    pub fn figures_current(&self) -> bool {
        self.panes.iter().all(Pane::current)
    }

    /// The view as a share link stores it.
    pub fn view(&self) -> crate::share::ViewState {
        crate::share::ViewState {
            panes: self
                .panes
                .iter()
                .map(|p| crate::share::PaneState::from_scenario(&p.scenario, &p.preset, p.instr, p.issue))
                .collect(),
            step: self.step,
            theme: self.theme,
            all_warps: self.all_warps,
            tile: self.tile,
            projection: self.projection,
        }
    }

    /// Steps of the longest animation on screen.
    pub fn max_steps(&self) -> usize {
        self.panes.iter().map(|p| if self.all_warps { p.steps_all() } else { p.steps() }).max().unwrap_or(0)
    }

    /// The step shown, as a number.
    pub fn step_shown(&self) -> usize {
        self.step.unwrap_or(self.max_steps()).min(self.max_steps())
    }
}

/// A change to one pane's inputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// A setting the controls hold no text of their own for (CC, language, instruction, L1, bank mode), as
    /// [`Scenario::set`] reads it.
    Set(Setting, String),
    /// Block size text.
    Block(String),
    /// The grid size as typed.
    Grid(String),
    /// Pattern text.
    Text(String),
    /// Preset name.
    Preset(String),
    /// `NAME=VALUE` settings, separated by commas or spaces.
    Sets(String),
    /// The kernel to run, by its symbol (listings and modules with several).
    Kernel(String),
    /// A suggested fix.
    Fix(Fix),
}

/// What a comparison's second pane starts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareWith {
    /// The same program on the neighbouring GPU generation.
    OtherGpu,
    /// The same GPU, for another pattern.
    OtherPattern,
}

/// Everything the user can do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Edit pane `usize`.
    Edit(usize, Edit),
    /// Select an instruction of a pane.
    Instr(usize, usize),
    /// Select a warp-level issue of a pane's instruction.
    Issue(usize, usize),
    /// Step forward (+1) or back (-1).
    Step(i32),
    /// Jump to a step (`usize::MAX` = the end).
    SetStep(usize),
    /// Play or pause.
    TogglePlay,
    /// The animation timer fired.
    Tick,
    /// Milliseconds per step.
    Speed(u32),
    /// Show a second pane (on another GPU: the neighbouring generation; or on the same GPU, for another
    /// pattern), or hide it.
    Compare(Option<CompareWith>),
    /// Light or dark.
    Theme(Theme),
    /// The carveout calculator's input.
    Carveout(String),
    /// Show a message, or clear it.
    Notice(Option<String>),
    /// A checked lab arrived from the lab worker (key, the course as JSON, saved progress), or could not be
    /// loaded (the message says why, with line:column in the lab file).
    LabLoaded(Result<LabFile, String>),
    /// Open exercise `usize` of the lab.
    LabOpen(usize),
    /// Reveal the next hint.
    LabHint,
    /// Answer question `.0` with choice `.1`.
    LabChoice(usize, usize),
    /// Forget the progress in this lab.
    LabReset,
    /// The student's name, as typed.
    LabName(String),
    /// The analysis worker answered a request of pane `usize`.
    Engine(usize, Reply),
    /// Stack every warp, or show one in detail.
    AllWarps(bool),
    /// Pane B takes pane A's program again and follows it.
    Follow,
    /// Show the tile view of shared memory, or the lanes.
    Tile(bool),
    /// How far "all steps" has come (frames drawn, frames in all); `None` when it ended.
    Exporting(Option<(usize, usize)>),
    /// A link was pasted into the address bar of the open page (only its `#` part changed): show its view.
    OpenLink(String),
    /// Stop pane `usize`'s run: the last finished result stays, and the page says what was stopped.
    Cancel(usize),
    /// Projection mode (large type) on or off.
    Projection(bool),
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        match &action {
            Action::Edit(..) => super::perf::start("edit"),
            Action::Tick | Action::Step(_) | Action::SetStep(_) => super::perf::start("step"),
            _ => {}
        }
        let mut s = (*self).clone();
        match action {
            Action::Edit(p, edit) => {
                if let Some(l) = s.lab.as_ref() {
                    if l.exercise().is_some_and(|e| e.is_locked(edit.setting())) {
                        return self;
                    }
                }
                let program_edit = edit.changes_program();
                let Some(pane) = s.panes.get_mut(p) else { return self };
                let before = (pane.scenario.clone(), pane.block_text.clone(), pane.grid_text.clone());
                apply(pane, edit);
                // An edit that changes nothing (choosing the language already chosen) asks for nothing, and neither
                // does one inside a comment or at the end of a line of code: the results (lines and columns
                // included) hold for the new text, so a long memory-system run is not restarted on every key.
                // Not SASS: its `/*0040*/` comments are the instructions' addresses, which branches target.
                let only_comments = matches!(pane.scenario.lang, Lang::Cuda | Lang::Ptx)
                    && pane.scenario.text != before.0.text
                    && crate::text::same_code(&pane.scenario.text, &before.0.text)
                    && (&pane.block_text, &pane.grid_text) == (&before.1, &before.2)
                    && Scenario { text: before.0.text.clone(), ..pane.scenario.clone() } == before.0;
                if only_comments {
                    if p == 0 && program_edit {
                        if let [a, b] = s.panes.as_mut_slice() {
                            if b.follows {
                                b.follow(a);
                            }
                        }
                    }
                } else if (&pane.scenario, &pane.block_text, &pane.grid_text) != (&before.0, &before.1, &before.2) {
                    if p > 0 && program_edit {
                        // The user wrote pane B's own program: it stops following pane A.
                        pane.follows = false;
                    }
                    s.rerun(p);
                    if p == 0 && program_edit {
                        s.sync_pane_b();
                    }
                }
                s.step = None;
                s.playing = false;
                if p == 0 {
                    record_answer(&mut s);
                }
            }
            Action::Instr(p, i) => {
                // A following pane B shows the same instruction as pane A, so that the deltas compare it.
                for k in s.selected_with(p) {
                    if let Some(pane) = s.panes.get_mut(k) {
                        pane.instr = i;
                        pane.issue = 0;
                    }
                    s.rerun(k);
                }
                s.step = None;
                s.playing = false;
            }
            Action::Issue(p, i) => {
                for k in s.selected_with(p) {
                    if let Some(pane) = s.panes.get_mut(k) {
                        pane.issue = i;
                    }
                    s.rerun(k);
                }
                s.step = None;
                s.playing = false;
            }
            Action::Follow => {
                if let [a, b] = s.panes.as_mut_slice() {
                    b.follow(a);
                    s.rerun(1);
                }
                s.step = None;
                s.playing = false;
            }
            Action::Step(d) => {
                let cur = s.step_shown() as i64;
                let next = (cur + i64::from(d)).clamp(0, s.max_steps() as i64) as usize;
                s.step = Some(next);
                s.playing = false;
            }
            Action::SetStep(k) => {
                // Step 0 stays step 0 before the figure has arrived (a slide that starts its figure while
                // the figure is still on its way); past the last step is the finished picture.
                s.step = if k > 0 && k >= s.max_steps() { None } else { Some(k) };
                s.playing = false;
            }
            Action::TogglePlay => {
                if s.playing {
                    s.playing = false;
                } else {
                    // Playing from the finished picture starts over.
                    if s.step.is_none() || s.step_shown() >= s.max_steps() {
                        s.step = Some(0);
                    }
                    s.playing = s.max_steps() > 0;
                }
            }
            Action::Tick => {
                if !s.playing {
                    return self;
                }
                let next = s.step_shown() + 1;
                if next >= s.max_steps() {
                    s.step = None;
                    s.playing = false;
                } else {
                    s.step = Some(next);
                }
            }
            Action::Speed(ms) => s.speed_ms = ms.clamp(50, 3000),
            Action::Compare(with) => {
                match with {
                    Some(with) if s.panes.len() == 1 => {
                        let mut b = s.panes[0].clone();
                        if with == CompareWith::OtherGpu {
                            // The same program on the neighbouring generation: it follows the first pane's edits.
                            b.follows = true;
                            let cc = b.scenario.cc;
                            b.scenario.cc = cc.previous_generation().unwrap_or(Cc::new(9, 0));
                        } else {
                            // The same GPU, a pattern of its own to change.
                            b.follows = false;
                        }
                        s.panes.push(b);
                        s.rerun(1);
                    }
                    Some(_) => {}
                    None => s.panes.truncate(1),
                }
                s.step = None;
                s.playing = false;
            }
            Action::Cancel(k) => {
                let Some(pane) = s.panes.get_mut(k) else { return self };
                if !pane.busy {
                    return self;
                }
                // Where it was, as the progress line said it.
                let how_far = pane.progress.as_ref().map_or(String::new(), |p| format!(" ({})", p.text));
                pane.cancelled = Some(pane.request);
                pane.busy = false;
                pane.progress = None;
                pane.goals = None;
                let shown = if pane.result.is_some() {
                    "The figure shows the last result that finished"
                } else {
                    "Nothing has finished yet"
                };
                pane.stopped = Some(format!("Cancelled{how_far}. {shown}; any edit runs again."));
            }
            Action::Theme(t) => s.theme = t,
            Action::Projection(on) => s.projection = on,
            Action::Tile(on) => s.tile = on,
            Action::Exporting(p) => s.exporting = p,
            Action::Carveout(c) => s.carveout = c,
            Action::Notice(n) => s.notice = n,
            Action::AllWarps(on) => {
                s.all_warps = on;
                for k in 0..s.panes.len() {
                    s.rerun(k);
                }
                s.step = None;
                s.playing = false;
            }
            Action::Engine(p, reply) => {
                // The exercise is graded when its goals come checked, or the answer does not run.
                let graded = matches!(reply, Reply::Result { goals: Some(_), .. } | Reply::Error { .. });
                let Some(pane) = s.panes.get_mut(p) else { return self };
                pane.take(reply);
                if p == 0 && graded {
                    grade_current(&mut s);
                }
            }
            Action::LabLoaded(Ok(LabFile { key, json, saved, origin })) => {
                match super::json::from_json::<crate::teach::lab::Course>(&json) {
                    Ok(lab) => {
                        let progress =
                            saved.and_then(|j| super::json::from_json::<Progress>(&j).ok()).unwrap_or_default();
                        // A reload opens the exercise the student was on.
                        let at = progress
                            .current
                            .as_ref()
                            .and_then(|id| lab.exercises.iter().position(|e| &e.id == id))
                            .unwrap_or(0);
                        s.lab = Some(LabState { lab: Rc::new(lab), key, current: 0, progress, origin });
                        s.panes.truncate(1);
                        open_exercise(&mut s, at);
                    }
                    Err(e) => s.notice = Some(format!("The lab could not be read: {e}")),
                }
            }
            Action::LabLoaded(Err(e)) => s.notice = Some(e),
            Action::LabOpen(k) => open_exercise(&mut s, k),
            Action::LabHint => {
                if let Some(l) = s.lab.as_mut() {
                    if let Some(ex) = l.lab.exercises.get(l.current) {
                        let n = l.progress.hints.entry(ex.id.clone()).or_default();
                        *n = (*n + 1).min(ex.hints.len());
                    }
                }
            }
            Action::LabChoice(q, c) => {
                if let Some(l) = s.lab.as_mut() {
                    if let Some(id) = l.exercise().map(|e| e.id.clone()) {
                        let a = l.progress.answers.entry(id).or_default();
                        if a.choices.len() <= q {
                            a.choices.resize(q + 1, None);
                        }
                        a.choices[q] = Some(c);
                    }
                }
                // The last right answer can complete the exercise: it is kept done now, not at the next result.
                grade_current(&mut s);
            }
            Action::LabName(name) => {
                if let Some(l) = s.lab.as_mut() {
                    l.progress.student = name;
                }
            }
            Action::LabReset => {
                if let Some(l) = s.lab.as_mut() {
                    // The name stays: it is the student's, not the lab's progress.
                    let student = std::mem::take(&mut l.progress.student);
                    l.progress = Progress { student, ..Progress::default() };
                }
                let current = s.lab.as_ref().map_or(0, |l| l.current);
                open_exercise(&mut s, current);
            }
            Action::OpenLink(link) => s.open_link(&link),
        }
        // What a crash would save (see rescue.rs).
        super::rescue::remember(s.panes.iter().map(|p| p.scenario.text.as_str()));
        Rc::new(s)
    }
}

impl Edit {
    /// Whether the edit changes the program rather than the machine it runs on (see
    /// [`Setting::is_machine`]).
    fn changes_program(&self) -> bool {
        match self {
            Edit::Fix(Fix::L1(_)) => false,
            e => !e.setting().is_machine(),
        }
    }

    /// The setting this edit changes (for a lab's locks).
    fn setting(&self) -> Setting {
        match self {
            Edit::Set(s, _) => *s,
            Edit::Block(_) => Setting::Block,
            Edit::Grid(_) => Setting::Grid,
            Edit::Text(_) | Edit::Preset(_) | Edit::Fix(_) | Edit::Kernel(_) => Setting::Pattern,
            Edit::Sets(_) => Setting::Sets,
        }
    }
}

/// Shows lab exercise `k` with the student's saved answer.
fn open_exercise(s: &mut State, k: usize) {
    let Some(l) = s.lab.as_mut() else { return };
    if k >= l.lab.exercises.len() {
        return;
    }
    l.current = k;
    let ex = &l.lab.exercises[k];
    l.progress.current = Some(ex.id.clone());
    let answer = l.progress.answers.get(&ex.id);
    let sc = ex.scenario(answer).or_else(|_| ex.scenario(None));
    // It opens on the instruction its goals are about (the conflicting shared read, not the global load).
    let focus = ex.goals.iter().find_map(|g| g.select.clone());
    if let Ok(sc) = sc {
        let id = s.next_request();
        let mut pane = Pane::new(sc, id);
        pane.focus = focus;
        s.panes = vec![pane];
    }
    s.step = None;
    s.playing = false;
}

/// Grades the exercise shown with pane 0's latest result (or its error), and keeps whether it is done.
fn grade_current(s: &mut State) {
    let Some(pane) = s.panes.first() else { return };
    let goals = match (&pane.error, &pane.goals) {
        (None, Some(g)) => Ok(Rc::clone(g)),
        (Some(e), _) => Err(e.clone()),
        (None, None) => return,
    };
    let Some(l) = s.lab.as_mut() else { return };
    let Some(ex) = l.exercise().cloned() else { return };
    let goals = goals.as_ref().map(|g| g.as_slice()).map_err(String::clone);
    let g = crate::teach::lab::grade_result(&ex, l.progress.answers.get(&ex.id), goals);
    if g.done {
        l.progress.done.insert(ex.id.clone());
    } else {
        l.progress.done.remove(&ex.id);
    }
}

/// Saves pane 0's settings as the answer of the exercise shown.
fn record_answer(s: &mut State) {
    let Some(pane) = s.panes.first().cloned() else { return };
    let Some(l) = s.lab.as_mut() else { return };
    let Some(id) = l.exercise().map(|e| e.id.clone()) else { return };
    let sc = &pane.scenario;
    let a = l.progress.answers.entry(id).or_default();
    a.pattern = Some(sc.text.clone());
    a.lang = Some(sc.lang.name().to_string());
    a.op = Some(sc.op.clone());
    a.cc = Some(sc.cc.to_string());
    a.block = Some(pane.block_text.clone());
    a.grid = Some(pane.grid_text.clone());
    a.caches = Some(sc.value(Setting::Caches));
    a.l1 = Some(sc.value(Setting::L1));
    a.bank_mode = Some(sc.config.bank_mode.bytes());
    a.shared_model = Some(sc.value(Setting::SharedModel));
    a.sets = Some(sc.sets.clone());
}

fn apply(pane: &mut Pane, edit: Edit) {
    match edit {
        Edit::Set(setting, v) => {
            if let Err(e) = pane.scenario.set(setting, &v) {
                pane.error = Some(e.error.message);
            }
        }
        Edit::Block(v) => pane.block_text = v,
        Edit::Grid(v) => pane.grid_text = v,
        Edit::Text(v) => {
            // The chosen kernel stays while the text still has it (an edit inside it), not after a new paste.
            // A template's instance (`reduce<int, 256>`) stays while the text has its name.
            let named = |k: &String| v.contains(k.split('<').next().unwrap_or(k).trim());
            if pane.scenario.kernel.as_ref().is_some_and(|k| !named(k)) {
                pane.scenario.kernel = None;
            }
            pane.scenario.text = v;
            pane.preset.clear();
        }
        Edit::Kernel(v) => {
            pane.scenario.kernel = Some(v).filter(|k| !k.is_empty());
            pane.instr = 0;
            pane.issue = 0;
        }
        Edit::Preset(name) => {
            if let Some(p) = crate::teach::presets::find(&name) {
                pane.scenario = p.scenario();
                pane.block_text = block_text(p.block);
                pane.grid_text = block_text(pane.scenario.grid);
                pane.sets_text = pane.scenario.sets.join(", ");
                pane.instr = 0;
                pane.issue = 0;
            }
            pane.preset = name;
        }
        Edit::Sets(v) => {
            // Splitting the text cannot fail.
            let _ = pane.scenario.set(Setting::Sets, &v);
            pane.sets_text = v;
        }
        Edit::Fix(Fix::Text(t)) => pane.scenario.text = t,
        Edit::Fix(Fix::Op(o)) => pane.scenario.op = o,
        Edit::Fix(Fix::L1(l)) => pane.scenario.config.l1 = l,
        Edit::Fix(Fix::OpText(o, t)) => {
            pane.scenario.op = o;
            pane.scenario.text = t;
        }
    }
    forget_stale_error(pane);
}

/// Drops a pattern error that cannot be about the text now in the editor (a line past its end, "line 584" of
/// a text replaced by a short one): the answer for the new text may take seconds to come.
fn forget_stale_error(pane: &mut Pane) {
    let line = pane.error.as_deref().and_then(|e| e.strip_prefix("pattern ")).and_then(|e| {
        let (line, _) = e.split_once(':')?;
        line.parse::<usize>().ok()
    });
    if line.is_some_and(|l| l > pane.scenario.text.lines().count().max(1)) {
        pane.error = None;
    }
}

/// The L1 choices in menu order, with their labels.
pub const L1_CHOICES: [(L1Choice, &str); 3] =
    [(L1Choice::Default, "CC default"), (L1Choice::On, "L1 on (-dlcm=ca)"), (L1Choice::Off, "L2 only (-dlcm=cg)")];
