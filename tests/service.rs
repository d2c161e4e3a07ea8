//! The page's analysis service, natively: the replies for each request, in order, as the worker sends them.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::lang::Lang;
use warpscope::program::launch::Dim3;
use warpscope::scenario::Scenario;
use warpscope::service::{serve, Cache, Reply, Request};

fn request(id: u64, text: &str, block: &str) -> Request {
    let scenario = Scenario {
        lang: Lang::Cuda,
        text: text.to_string(),
        block: Dim3::parse(block, "block").expect("test block"),
        ..Scenario::default()
    };
    Request::new(id, scenario)
}

/// Every reply but the kernel menu's (which leads each new CUDA request's: see
/// `the_kernel_menu_lists_every_kernel_even_when_one_fails`).
fn replies(req: &Request, cache: &mut Cache) -> Vec<Reply> {
    all_replies(req, cache).into_iter().filter(|r| !matches!(r, Reply::Kernels { .. })).collect()
}

fn all_replies(req: &Request, cache: &mut Cache) -> Vec<Reply> {
    let mut out = Vec::new();
    serve(req, cache, &mut |r| out.push(r));
    out
}

fn kinds(rs: &[Reply]) -> Vec<&'static str> {
    rs.iter()
        .map(|r| match r {
            Reply::Progress { .. } => "progress",
            Reply::Result { .. } => "result",
            Reply::Shown { .. } => "shown",
            Reply::Fixes { .. } => "fixes",
            Reply::Error { .. } => "error",
            Reply::Stopped { .. } => "stopped",
            Reply::Names { .. } => "names",
            Reply::Kernels { .. } => "kernels",
            Reply::Schedule { .. } => "schedule",
            Reply::Done { .. } => "done",
        })
        .collect()
}

const STRIDED: &str = "__global__ void k(const float *a) {\n    float x = a[2 * threadIdx.x];\n}\n";

/// A lab's goals are checked in the worker, against the result it computed, and come with it: the
/// page's main thread neither runs the scenario nor evaluates a condition. STRIDED on a block of 64: two
/// warps, each reading 32 floats 8 bytes apart (256 bytes, 8 sectors of 32 B), so the load costs 16 sectors
/// over 2 requests for the block.
#[test]
fn lab_goals_are_checked_with_the_result() {
    use warpscope::teach::lab::{Goal, GoalResult};
    let goal = |check: &str, scope: &str| Goal {
        check: check.into(),
        text: check.into(),
        scope: scope.into(),
        select: None,
        keep: None,
        uses: None,
    };
    let mut req = request(3, STRIDED, "64");
    req.goals = Some(vec![
        goal("sectors == 16 && requests == 2", "each"),
        goal("sectors <= 8", "each"),
        goal("sectors_per_request == 800", "sum"),
        // A global load has no bank conflicts: a condition that divides by them cannot be evaluated, and the
        // goal says so (not met, and why) in every scope; C's short circuit keeps the guarded one well defined.
        goal("sectors / bank_conflicts >= 1", "each"),
        goal("sectors / bank_conflicts >= 1", "sum"),
        goal("sectors / bank_conflicts >= 1", "any"),
        goal("bank_conflicts == 0 || sectors / bank_conflicts >= 1", "each"),
    ]);
    let rs = replies(&req, &mut Cache::default());
    assert_eq!(kinds(&rs), ["result", "shown", "fixes", "done"]);
    let Reply::Result { id: 3, goals: Some(goals), .. } = &rs[0] else {
        panic!("the result with its goals: {:?}", kinds(&rs))
    };
    fn outcome(g: &GoalResult) -> (&str, bool, &str) {
        (g.check.as_str(), g.pass, g.detail.as_str())
    }
    assert_eq!(
        goals.iter().map(outcome).collect::<Vec<_>>(),
        [
            ("sectors == 16 && requests == 2", true, ""),
            ("sectors <= 8", false, "line 2 (LDG.E.32) does not meet it yet"),
            // 16 sectors / 2 requests, in hundredths.
            ("sectors_per_request == 800", true, ""),
            (
                "sectors / bank_conflicts >= 1",
                false,
                "the condition cannot be evaluated on line 2 (LDG.E.32): division by zero in `/`"
            ),
            (
                "sectors / bank_conflicts >= 1",
                false,
                "the condition cannot be evaluated on the block's totals: division by zero in `/`"
            ),
            (
                "sectors / bank_conflicts >= 1",
                false,
                "the condition cannot be evaluated on line 2 (LDG.E.32): division by zero in `/`"
            ),
            ("bank_conflicts == 0 || sectors / bank_conflicts >= 1", true, ""),
        ]
    );
    // Goals on the idea read the first issue's addresses and the pattern: lane i reads 8 bytes after lane
    // i-1 (a[2 * threadIdx.x], 4-byte floats), 32 different addresses, the load's line kept.
    let mut keep = goal("", "each");
    keep.keep = Some("    float   x = a[2 * threadIdx.x];".into());
    req.goals = Some(vec![
        goal("addr == addr(0) + 8 * lane", "lanes"),
        goal("addr == addr(0) + 4 * lane", "lanes"),
        goal("distinct == 32 && addr(31) - addr(0) == 248", "each"),
        goal("addr(32) > 0", "each"),
        keep,
    ]);
    let rs = replies(&req, &mut Cache::default());
    let Reply::Result { goals: Some(goals), .. } = &rs[0] else { panic!("the result with its goals") };
    let passes: Vec<bool> = goals.iter().map(|g| g.pass).collect();
    assert_eq!(passes, [true, false, true, false, true], "{goals:#?}");
    assert!(goals[1].detail.starts_with("lane 1 (address 0x"), "{}", goals[1].detail);
    assert!(goals[1].detail.ends_with("on line 2 (LDG.E.32) does not meet it yet"), "{}", goals[1].detail);
    assert_eq!(
        goals[3].detail,
        "the condition cannot be evaluated on line 2 (LDG.E.32): there is no lane 32 (lanes are 0 to 31)"
    );
    // An exercise without goals gets an empty list (it is graded by its questions); outside a lab, none.
    req.goals = Some(Vec::new());
    assert!(matches!(&replies(&req, &mut Cache::default())[0], Reply::Result { goals: Some(g), .. } if g.is_empty()));
    assert!(matches!(
        &replies(&request(4, STRIDED, "64"), &mut Cache::default())[0],
        Reply::Result { goals: None, .. }
    ));
}

#[test]
fn replies_come_in_order_and_carry_their_request() {
    let mut cache = Cache::default();
    // A fresh program: the totals, then the figure's issue, its fixes, done.
    let rs = replies(&request(1, STRIDED, "64"), &mut cache);
    assert_eq!(kinds(&rs), ["result", "shown", "fixes", "done"]);
    assert!(rs.iter().all(|r| r.id() == 1));
    let Reply::Shown { shown, .. } = &rs[1] else { unreachable!() };
    // Stride 2 floats: 256 bytes per warp = 8 sectors (CUDA Best Practices Guide 9.2.1.3).
    assert_eq!((shown.warp, shown.pass, shown.title.as_str()), (0, 0, "LDG.E.32 on CC 8.0: a[2 * threadIdx.x]"));
    let Reply::Result { result, .. } = &rs[0] else { unreachable!() };
    assert_eq!(result.instructions[0].memory.as_ref().map(|m| m.sectors), Some(16));

    // The user types: the same memory instructions, another stride. The figure comes first, from the shown
    // warp alone, then the totals; the figure is not sent twice.
    let edited = STRIDED.replace("2 *", "4 *");
    let rs = replies(&request(2, &edited, "64"), &mut cache);
    assert_eq!(kinds(&rs), ["shown", "result", "fixes", "done"]);
    let Reply::Shown { shown, .. } = &rs[0] else { unreachable!() };
    let sectors = match &shown.report.cost {
        warpscope::model::report::Cost::Memory(m) => m.sectors,
        _ => unreachable!(),
    };
    assert_eq!(sectors, 16, "stride 16 B: 16 sectors");

    // Another issue of the same scenario: answered from the kept result (same totals), warp 1 shown.
    let mut again = request(3, &edited, "64");
    again.issue = 1;
    let rs = replies(&again, &mut cache);
    assert_eq!(kinds(&rs), ["result", "shown", "fixes", "done"]);
    let Reply::Shown { shown, .. } = &rs[1] else { unreachable!() };
    assert_eq!((shown.issue, shown.warp), (1, 1));

    // An issue past the end falls back to the first.
    let mut past = request(4, &edited, "64");
    past.issue = 99;
    let rs = replies(&past, &mut cache);
    let Reply::Shown { shown, .. } = &rs[1] else { unreachable!() };
    assert_eq!(shown.issue, 0);
}

#[test]
fn errors_are_replies_with_their_position() {
    let mut cache = Cache::default();
    let rs = replies(&request(7, "__global__ void k(float *a) {\n    a[threadIdx.x] = b;\n}\n", "32"), &mut cache);
    assert_eq!(kinds(&rs), ["error", "done"]);
    let Reply::Error { message, .. } = &rs[0] else { unreachable!() };
    assert!(message.starts_with("2:22: unknown name `b`"), "{message}");
    // The error leaves nothing behind: the next good request runs afresh.
    let rs = replies(&request(8, STRIDED, "32"), &mut cache);
    assert_eq!(kinds(&rs), ["result", "shown", "fixes", "done"]);
}

/// The kernel menu comes first, read from the file's top level: a file whose first kernel fails still offers
/// every kernel, the template kernel nothing instantiates with suggested arguments (one per template
/// parameter: a type parameter gets `float`, a value parameter a small power of two), and choosing another
/// runs it.
#[test]
fn the_kernel_menu_lists_every_kernel_even_when_one_fails() {
    use warpscope::lang::KernelChoice;
    let text = "__global__ void broken(float *a) {\n    a[threadIdx.x] = undefined_name;\n}\n\
                __global__ void good(float *a) {\n    a[threadIdx.x] = 1.0f;\n}\n\
                template <typename T, int BLOCK>\n__global__ void tiled(T *a) {\n    a[threadIdx.x * BLOCK] = 0;\n}\n";
    let mut cache = Cache::default();
    let rs = all_replies(&request(1, text, "32"), &mut cache);
    assert_eq!(kinds(&rs), ["kernels", "error", "done"]);
    let Reply::Kernels { kernels, .. } = &rs[0] else { unreachable!() };
    let plain = |n: &str| KernelChoice { name: n.into(), value: n.into(), template: None };
    let Some(KernelChoice { template: Some(args), .. }) = kernels.get(2) else { panic!("{kernels:?}") };
    assert_eq!(
        kernels,
        &[
            plain("broken"),
            plain("good"),
            KernelChoice { name: "tiled".into(), value: format!("tiled<{args}>"), template: Some(args.clone()) }
        ]
    );
    let Reply::Error { message, .. } = &rs[1] else { unreachable!() };
    assert!(message.starts_with("2:22: unknown name `undefined_name`"), "{message}");
    // The menu's other kernels run.
    let mut req = request(2, text, "32");
    req.scenario.kernel = Some("good".into());
    assert_eq!(kinds(&all_replies(&req, &mut cache)), ["kernels", "result", "shown", "fixes", "done"]);
    req.id = 3;
    req.scenario.kernel = Some(kernels[2].value.clone());
    let rs = all_replies(&req, &mut cache);
    assert_eq!(kinds(&rs), ["kernels", "result", "shown", "fixes", "done"], "{rs:?}");
}

#[test]
fn long_runs_report_progress_before_the_result() {
    // Every block of a 2x2 grid of SGEMM blocks run one by one: long enough for progress replies (one every
    // tenth of a second), each counting blocks done of 4.
    let sgemm = "#define TILE 32\n__global__ void sgemm(const float *A, const float *B, float *C, int N) {\n    __shared__ float As[TILE][TILE];\n    __shared__ float Bs[TILE][TILE];\n    int tx = threadIdx.x, ty = threadIdx.y;\n    int row = blockIdx.y * TILE + ty;\n    int col = blockIdx.x * TILE + tx;\n    float acc = 0.0f;\n    for (int k = 0; k < N / TILE; k++) {\n        As[ty][tx] = A[row * N + k * TILE + tx];\n        Bs[ty][tx] = B[(k * TILE + ty) * N + col];\n        __syncthreads();\n        for (int j = 0; j < TILE; j++)\n            acc += As[ty][j] * Bs[j][tx];\n        __syncthreads();\n    }\n    C[row * N + col] = acc;\n}\n";
    let mut req = request(9, sgemm, "32x32");
    req.scenario.grid = Dim3::parse("2x2", "grid").expect("grid");
    req.scenario.sets = vec!["N=1024".to_string()];
    req.scenario.every_block = true;
    let started = std::time::Instant::now();
    let mut rs = Vec::new();
    let mut result_after = None;
    serve(&req, &mut Cache::default(), &mut |r| {
        if matches!(r, Reply::Kernels { .. }) {
            return;
        }
        if matches!(r, Reply::Result { .. }) {
            result_after = Some(started.elapsed().as_secs_f64());
        }
        rs.push(r);
    });
    let k = kinds(&rs);
    let first_result = k.iter().position(|k| *k == "result").expect("a result");
    assert!(k[..first_result].iter().all(|k| *k == "progress"), "{k:?}");
    assert_eq!(&k[first_result..], ["result", "shown", "fixes", "done"]);
    // A progress reply per tenth of a second of the run, give or take the checks' granularity (the control is
    // asked every 65,536 warp instructions).
    let secs = result_after.expect("result time");
    assert!(first_result as f64 >= (secs * 10.0 / 2.0).floor(), "{first_result} progress replies in {secs:.2} s");
    let mut last = 0;
    for r in &rs[..first_result] {
        let Reply::Progress { done, total, .. } = r else { unreachable!() };
        assert!(*done >= last && *done <= 4 && *total == 4, "{done}/{total}");
        last = *done;
    }
}

#[test]
fn replies_survive_the_trip_through_json() {
    // The worker sends replies as JS objects made by serde; every reply must come back as it went.
    let mut cache = Cache::default();
    let mut all = replies(&request(1, STRIDED, "64"), &mut cache);
    let mut req = request(2, "__global__ void k(float *a) {\n    a[threadIdx.x] = b;\n}\n", "32");
    req.all_warps = true;
    all.extend(replies(&req, &mut cache));
    let mut shared = request(
        3,
        "__global__ void k() {\n    __shared__ double s[64];\n    double x = s[threadIdx.x * 2];\n}\n",
        "64",
    );
    shared.all_warps = true;
    all.extend(replies(&shared, &mut cache));
    all.push(Reply::Progress {
        id: 4,
        done: 3,
        total: 16,
        seconds: 0.25,
        text: "Memory system: block 3 of 16 through L1, L2 and DRAM".into(),
    });
    for r in all {
        let text = serde_json::to_string(&r).expect("serialize");
        let back: Reply = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(back, r);
    }
}

/// A result of many instructions travels in parts of at most PART_INSTRUCTIONS (25), each read quickly on the
/// page's main thread, and is put together again in order. 601 stores (one per line) make 24 parts of 25 and
/// a result carrying the last one; a second request's parts replace those of the first.
#[test]
fn a_long_result_travels_in_parts_and_is_joined_in_order() {
    use warpscope::service::{split_result, Parts, PART_INSTRUCTIONS};
    let text: String = (0..601).map(|k| format!("a[threadIdx.x + {}] = 0;\n", 32 * k)).collect();
    let req = request(7, &format!("float *a;\n{text}"), "32");
    let rs = replies(&req, &mut Cache::default());
    let whole = rs.iter().find(|r| matches!(r, Reply::Result { .. })).expect("a result").clone();
    let Reply::Result { result, .. } = &whole else { unreachable!() };
    assert_eq!(result.instructions.len(), 601);
    assert_eq!(PART_INSTRUCTIONS, 25);

    let (parts, last) = split_result(whole.clone());
    assert_eq!(parts.iter().map(|p| p.instructions.len()).collect::<Vec<_>>(), [25; 24]);
    assert!(parts.iter().all(|p| p.part == 7));
    let Reply::Result { result: tail, .. } = &last else { panic!("the result comes last") };
    assert_eq!(tail.instructions.len(), 1);
    assert_eq!(tail.instructions[0].line, result.instructions[600].line, "the tail is instruction 601");

    // Parts of an older request are dropped when a newer one's arrive.
    let mut joined = Parts::default();
    let (old, _) = split_result(match whole.clone() {
        Reply::Result { result, goals, .. } => Reply::Result { id: 6, result, goals },
        r => r,
    });
    joined.add(old[0].clone());
    for p in parts {
        joined.add(p);
    }
    assert_eq!(joined.join(last), whole, "the same result as sent whole");

    // Small results and other replies go whole.
    let small = replies(&request(8, STRIDED, "32"), &mut Cache::default());
    for r in small {
        let (parts, same) = split_result(r.clone());
        assert!(parts.is_empty());
        assert_eq!(same, r);
    }
}

/// Issue 28: a lab exercise opens on the instruction its goals are about. The transpose reads global memory
/// first (line 2) and shared memory after (line 4); asked to focus on `LDS`, the figure shows line 4.
#[test]
fn a_focus_opens_on_the_first_instruction_it_names() {
    let text = "__global__ void t(const float *in) {\n    __shared__ float tile[32][32];\n    tile[threadIdx.x][0] = in[threadIdx.x];\n    float v = tile[0][threadIdx.x];\n}\n";
    let mut req = request(5, text, "32");
    req.instr = 0;
    req.focus = Some("LDS".into());
    let rs = replies(&req, &mut Cache::default());
    let Some(Reply::Shown { shown, .. }) = rs.iter().find(|r| matches!(r, Reply::Shown { .. })) else {
        panic!("a figure: {:?}", kinds(&rs))
    };
    assert!(shown.title.starts_with("LDS"), "{}", shown.title);
    // Without it, the selection is the request's.
    req.focus = None;
    let rs = replies(&req, &mut Cache::default());
    let Some(Reply::Shown { shown, .. }) = rs.iter().find(|r| matches!(r, Reply::Shown { .. })) else { unreachable!() };
    assert_eq!(shown.instr, 0);
    assert!(shown.title.starts_with("LDG"), "{}", shown.title);
}

/// Issue 36: a run that reaches the page's limit while it is making progress (between blocks, or after some
/// finished) says what it met and what to do, in words, with no position in the text: the kernel is fine. A
/// run stuck in a block (the first, or any once no block finished for the stall limit) points at the loop it
/// is in.
#[test]
fn a_long_run_stopped_at_the_limit_says_so_without_a_caret() {
    use warpscope::program::grid::{Progress, RunError, Stage};
    use warpscope::scenario::LimitHit;
    let sc =
        Scenario { lang: Lang::Cuda, text: STRIDED.into(), caches: Some(Default::default()), ..Scenario::default() };
    let progress = Progress { stage: Stage::Memory, blocks_done: 412, blocks_total: 1024, ..Progress::default() };
    let m = warpscope::service::stopped_message(&sc, &progress, LimitHit::Total(300.0));
    assert_eq!(
        m,
        "The run reached the page's time limit (300 s) while playing the blocks through L1, L2 and DRAM (the memory \
         system), after 412 of 1,024 blocks: nothing is wrong with the pattern, the launch is large for the page. To \
         see it: choose a smaller grid (each block's counts stay the same; the memory system's hit rates and DRAM \
         figures change with the grid's size), or turn the memory system off for the counts without caches, or run \
         it with warpscope's command line, which takes the time it needs (--max-seconds)."
    );
    // The command line's words: the same facts, its own flags, and no line:column.
    let stopped = RunError::Stopped { at: None, block: Dim3::linear(1), warp: 0, progress };
    let e = sc.run_error(stopped);
    assert_eq!((e.error.line, e.error.column, e.error.excerpt.as_str()), (0, 0, ""));
    assert_eq!(
        e.error.to_string(),
        "the run reached the time limit (60 s) while playing the blocks through L1, L2 and DRAM (the memory system), \
         after 412 of 1,024 blocks: the input is fine and the launch is large; --max-seconds gives it more time, a \
         smaller --grid or --block-idx less to do"
    );
    // Stuck in the first block: the loop it is in, with its line.
    let span = warpscope::text::Span { start: 40, end: 45 };
    let first = Progress { blocks_done: 0, blocks_total: 8, instructions: 1 << 30, ..Progress::default() };
    let stuck = RunError::Stopped { at: Some(span), block: Dim3::linear(1), warp: 3, progress: first };
    let e = sc.run_error(stuck.clone());
    assert_eq!(e.error.line, 2);
    assert!(e.error.message.ends_with("after 1073741824 warp instructions: is a loop endless?"), "{}", e.error.message);
    // Stuck in a later block on the page: no block finished for the stall limit, so the loop again, saying so.
    let later = Progress { blocks_done: 5, ..first };
    let stuck_later = RunError::Stopped { at: Some(span), block: Dim3::linear(5), warp: 3, progress: later };
    let e = sc.stop_error(stuck_later.clone(), Some(LimitHit::Stall(20.0)));
    assert_eq!(e.error.line, 2);
    assert!(
        e.error.message.starts_with("no block finished for 20 s while warp 3 of block (5,1,1) was here"),
        "{}",
        e.error.message
    );
    // On the command line, which has no stall limit, a later block at the time limit may be either.
    let e = sc.run_error(stuck_later);
    assert!(
        e.error.message.ends_with("after 5 of 8 blocks had finished: is a loop here endless, or is the launch large?"),
        "{}",
        e.error.message
    );
}

/// The page's limits, driven by a clock the test sets: a run may go on while blocks keep finishing, and stops
/// after the stall limit without a finished block, or at its total time, saying which.
#[test]
fn the_deadline_stops_a_stalled_run_and_says_which_limit_it_hit() {
    use warpscope::program::grid::{Progress, Stage};
    use warpscope::scenario::{Deadline, LimitHit};
    let at =
        |done: u64| Progress { stage: Stage::Memory, blocks_done: done, blocks_total: 1024, ..Progress::default() };
    let mut d = Deadline::starting_at(0.0, 300.0, Some(20.0));
    // A block every 15 s for 4 minutes: never 20 s without one.
    for k in 0..16u64 {
        assert!(d.keep_going_at(&at(k), 15.0 * k as f64), "block {k}");
    }
    assert_eq!(d.hit(), None);
    // Then 20.5 s without a finished block.
    assert!(d.keep_going_at(&at(15), 15.0 * 15.0 + 20.0));
    assert!(!d.keep_going_at(&at(15), 15.0 * 15.0 + 20.5));
    assert_eq!(d.hit(), Some(LimitHit::Stall(20.0)));
    // A run that keeps finishing blocks stops at its total time.
    let mut d = Deadline::starting_at(0.0, 300.0, Some(20.0));
    let mut k = 0;
    while d.keep_going_at(&at(k), k as f64) {
        k += 1;
    }
    assert_eq!((k, d.hit()), (301, Some(LimitHit::Total(300.0))));
    // A new stage is progress too: the schedule check starts its blocks from 0.
    let mut d = Deadline::starting_at(0.0, 300.0, Some(20.0));
    assert!(d.keep_going_at(&at(1024), 10.0));
    let check = Progress { stage: Stage::ScheduleCheck, ..at(0) };
    assert!(d.keep_going_at(&check, 25.0), "the first check of a new stage starts its own clock");
}

#[test]
fn a_text_that_changed_only_in_comments_is_the_same_code() {
    use warpscope::text::same_code;
    let k = "__global__ void k(float *p) {\n    p[threadIdx.x] = 0; // zero\n}\n";
    // Inside a comment, after a line's code, or a block comment that keeps its lines: the same code.
    assert!(same_code(k, &k.replace("// zero", "// zero each element")));
    assert!(same_code(k, &k.replace("= 0;", "= 0;   ")));
    assert!(same_code(k, &k.replace("// zero", "/* zero */")));
    // Code moved to another column or line, or changed: not the same (the results' lines and columns move).
    assert!(!same_code(k, &k.replace("    p[", "  p[")));
    assert!(!same_code(k, &format!("// a note\n{k}")));
    assert!(!same_code(k, &k.replace("= 0", "= 1")));
    // `//` inside a string is code, and a backslash ending a line comment makes the next line a comment.
    let s = "printf(\"a // b\");\nint x;\n";
    assert!(!same_code(s, &s.replace("a // b", "a // c")));
    let spliced = "int a; // note\nint b;\n";
    assert!(!same_code(spliced, &spliced.replace("// note", "// note \\")));
}

/// Issue 37: the page runs a grid's schedule check in a second worker beside the main run. The main worker
/// answers without the check (`Schedule::Apart`), the second answers the check alone
/// (`Schedule::Only`), and the main worker adds it when the page hands it over (`Request::check`),
/// from its kept result, without running again. The result is exactly the one-worker run's (`Schedule::Here`),
/// the chart and the "sensitive to the schedule" decision included.
#[test]
#[cfg(feature = "caches")]
fn a_schedule_check_run_in_a_second_worker_gives_the_one_worker_result() {
    use warpscope::service::Schedule;
    let text =
        "__global__ void k(const float *a, float *b) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    \
                b[i] = a[2 * i] + a[2 * i + 1];\n}\n";
    let mut req = request(1, text, "128");
    req.scenario.grid = Dim3::linear(256);
    req.scenario.caches = Some(Default::default());
    let result_of = |rs: &[Reply]| {
        rs.iter().find_map(|r| match r {
            Reply::Result { result, .. } => Some(result.clone()),
            _ => None,
        })
    };
    let one = replies(&req, &mut Cache::default());
    let whole = result_of(&one).expect("the one-worker result");
    let sched = whole.caches.as_ref().and_then(|c| c.schedule.clone()).expect("a grid's run has its check");
    // The preset's R is 16 blocks of 4 warps (2048 threads per SM on 8.0); the check runs half of it.
    assert_eq!(sched.blocks_per_sm, 8);

    let mut main = Cache::default();
    let apart = replies(&Request { schedule: Schedule::Apart, ..req.clone() }, &mut main);
    let alone = result_of(&apart).expect("the main run's result");
    assert_eq!(alone.caches.as_ref().map(|c| c.schedule.is_none()), Some(true), "no check in the main run");
    assert_eq!(alone.caches.as_ref().map(|c| &c.totals), whole.caches.as_ref().map(|c| &c.totals));

    let mut helper = Cache::default();
    let only = replies(&Request { id: 2, schedule: Schedule::Only, ..req.clone() }, &mut helper);
    assert_eq!(kinds(&only).last(), Some(&"done"));
    let run = only.iter().find_map(|r| match r {
        Reply::Schedule { id: 2, run } => Some(run.clone()),
        _ => None,
    });
    let run = run.expect("the check's reply").expect("a grid has a check");
    assert_eq!(run.blocks_per_sm, 8);

    let merged =
        replies(&Request { id: 3, schedule: Schedule::Apart, check: Some(run.clone()), ..req.clone() }, &mut main);
    assert!(!kinds(&merged).contains(&"progress"), "the kept result, not a new run: {:?}", kinds(&merged));
    assert_eq!(result_of(&merged).as_deref(), Some(&*whole));
    // Asked again for the same scenario, the second worker answers from what it kept.
    let again = replies(&Request { id: 4, schedule: Schedule::Only, ..req.clone() }, &mut helper);
    assert_eq!(kinds(&again), ["schedule", "done"]);
    // A one-worker request after a result without its check runs the check rather than answer without it.
    let mut unchecked = Cache::default();
    replies(&Request { schedule: Schedule::Apart, ..req.clone() }, &mut unchecked);
    assert_eq!(result_of(&replies(&req, &mut unchecked)).as_deref(), Some(&*whole));
    // A launch of one block has no check (docs/model.md#the-memory-system): the second worker answers `None`,
    // and the page then passes the main worker's result on as it is.
    let mut one = req.clone();
    one.scenario.grid = Dim3::linear(1);
    let none = replies(&Request { id: 5, schedule: Schedule::Only, ..one }, &mut Cache::default());
    assert!(none.iter().any(|r| matches!(r, Reply::Schedule { id: 5, run: None })), "{:?}", kinds(&none));
}
