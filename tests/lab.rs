//! Course labs: the shipped lab parses, every exercise starts unsolved and its solution solves it (goals and
//! questions), and bad lab files are errors with line:column.
#![cfg(not(target_arch = "wasm32"))]

use warpscope::teach::lab::{grade_exercise, Block};
use warpscope::teach::lab_file::{markdown, parse};

const MEMORY: &str = include_str!("../www/labs/memory.toml");
const TENSOR_CORE_SMEM: &str = include_str!("../www/labs/tensor-core-smem.toml");
const CACHES: &str = include_str!("../www/labs/caches.toml");

#[test]
fn the_memory_lab_is_solvable_exercise_by_exercise() {
    solvable(MEMORY, 8);
}

#[test]
fn the_tensor_core_lab_is_solvable_exercise_by_exercise() {
    solvable(TENSOR_CORE_SMEM, 6);
}

#[test]
fn the_caches_lab_is_solvable_exercise_by_exercise() {
    solvable(CACHES, 3);
}

/// The caches lab's goals describe the idea: the known wrong answers fail them.
#[test]
fn the_caches_lab_rejects_wrong_ideas() {
    use warpscope::teach::lab::Answer;
    let lab = parse(CACHES).expect("parses");
    let ex = |id: &str| lab.exercises.iter().find(|e| e.id == id).expect("exercise");
    let fails = |id: &str, a: Answer, why: &str| rejects(&lab, id, a, why);
    // 1. The memory system left off has no hits to show; the read stays misaligned (the pattern is locked).
    fails("misaligned-copy", Answer { caches: Some("off".into()), ..Default::default() }, "the memory system off");
    assert!(ex("misaligned-copy").is_locked(warpscope::scenario::Setting::Pattern));
    // 2. One load of the same float, or the three reads of one address, hit in L1 without the read-only path
    // doing the work the task asks for.
    let blur = |body: &str| {
        format!("__global__ void blur(const float *in, float *out) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;\n    {body}\n}}\n")
    };
    fails("ldg-maxwell", pattern(&blur("out[i] = 3 * __ldg(&in[i]);")), "one load instead of three");
    fails(
        "ldg-maxwell",
        pattern(&blur("out[i] = __ldg(&in[0]) + __ldg(&in[1]) + __ldg(&in[2]);")),
        "the same three floats for every thread",
    );
    fails("ldg-maxwell", pattern(&blur("out[i] = in[i - 1] + in[i] + in[i + 1];")), "the loads left as they were");
    // The locked L1 setting cannot be turned on instead (graded on the exercise's default).
    let g = grade_exercise(ex("ldg-maxwell"), Some(&Answer { l1: Some("on".into()), ..Default::default() }));
    assert!(g.goals.iter().any(|g| !g.pass), "-dlcm=ca is locked");
    // 3. Dropping the atomic, or one lane per warp adding for all, is not spreading the counter.
    let count = |body: &str| {
        format!("__global__ void count_odd(const int *in, int *total) {{\n    __shared__ int s_count;\n    if (threadIdx.x == 0) s_count = 0;\n    __syncthreads();\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    {body}\n    __syncthreads();\n    if (threadIdx.x == 0) atomicAdd(total, s_count);\n}}\n")
    };
    fails("shared-counter", pattern(&count("s_count += in[i] & 1;")), "no atomic at all");
    fails(
        "shared-counter",
        pattern(&count("if (threadIdx.x % 32 == 0) atomicAdd(&s_count, in[i] & 1);")),
        "one lane per warp",
    );
}

/// Issue 36: the wrong ideas a lecture's students tried, each failing the goal that names the idea, and the
/// right answers the task names passing every goal.
#[test]
fn the_lecture_labs_refuse_every_wrong_idea_and_take_each_spelling_of_the_right_one() {
    use warpscope::teach::lab::Answer;
    let caches = parse(CACHES).expect("parses");
    let memory = parse(MEMORY).expect("parses");
    // Caches 2: three loads of the same float, or two of one neighbour, are not three neighbours (the goal reads
    // the loads' address patterns: in[i-1], in[i], in[i+1] are 3 different ones).
    let blur = |params: &str, body: &str| {
        format!("__global__ void blur({params}) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;\n    {body}\n}}\n")
    };
    let plain = "const float *in, float *out";
    fails_goal(
        &caches,
        "ldg-maxwell",
        pattern(&blur(plain, "out[i] = __ldg(&in[i]) + __ldg(&in[i]) + __ldg(&in[i]);")),
        "three different neighbours",
        "one address read three times",
    );
    fails_goal(
        &caches,
        "ldg-maxwell",
        pattern(&blur(plain, "out[i] = __ldg(&in[i - 1]) + __ldg(&in[i - 1]) + __ldg(&in[i + 1]);")),
        "three different neighbours",
        "one neighbour read twice",
    );
    // The read-only path however it is spelled: `const __restrict__` (nvcc reads it with ld.global.nc, checked
    // with NVRTC 12.9), `__ldg`, and PTX `ld.global.nc` in inline asm. On 5.2 the three loads then hit in L1:
    // 1,264 of 1,792 sectors (70.5 %, the model reference's read-only example).
    let ex2 = caches.exercises.iter().find(|e| e.id == "ldg-maxwell").expect("exercise");
    let three = "out[i] = in[i - 1] + in[i] + in[i + 1];";
    let asm = "float a, b, c;\n    asm(\"ld.global.nc.f32 %0, [%1];\" : \"=f\"(a) : \"l\"(in + i - 1));\n    asm(\"ld.global.nc.f32 %0, [%1];\" : \"=f\"(b) : \"l\"(in + i));\n    asm(\"ld.global.nc.f32 %0, [%1];\" : \"=f\"(c) : \"l\"(in + i + 1));\n    out[i] = a + b + c;";
    for (spelling, text) in [
        ("const __restrict__", blur("const float * __restrict__ in, float *out", three)),
        ("__restrict__ const", blur("float const * __restrict__ in, float *out", three)),
        ("__ldg", blur(plain, "out[i] = __ldg(&in[i - 1]) + __ldg(&in[i]) + __ldg(&in[i + 1]);")),
        ("ld.global.nc", blur(plain, asm)),
    ] {
        let answer = Answer { choices: vec![Some(0)], ..pattern(&text) };
        let g = grade_exercise(ex2, Some(&answer));
        assert!(g.error.is_none(), "{spelling}: {:?}", g.error);
        assert!(g.done, "{spelling} is the read-only path: {:#?}", g.goals);
    }
    // A `__restrict__` pointer that is not const is not `const __restrict__`: ordinary loads here.
    fails_goal(
        &caches,
        "ldg-maxwell",
        pattern(&blur("float * __restrict__ in, float *out", three)),
        "hit rate",
        "restrict without const",
    );
    // Caches 3, from the solution: each wrong idea breaks the goal that names it.
    let ex3 = caches.exercises.iter().find(|e| e.id == "shared-counter").expect("exercise");
    let solution = ex3.solution.as_ref().and_then(|s| s.pattern.clone()).expect("a solution pattern");
    let with = |from: &str, to: &str| {
        assert!(solution.contains(from), "the solution has `{from}`");
        pattern(&solution.replace(from, to))
    };
    fails_goal(
        &caches,
        "shared-counter",
        with(
            "if (threadIdx.x < 32) atomicAdd(total, s_count[threadIdx.x]);",
            "if (threadIdx.x == 0) atomicAdd(total, s_count[0]);",
        ),
        "all 32 counts of a block",
        "one partial count of 32 reaches total",
    );
    fails_goal(
        &caches,
        "shared-counter",
        with(
            "if (threadIdx.x < 32) atomicAdd(total, s_count[threadIdx.x]);",
            "if (threadIdx.x < 32) atomicAdd(total, s_count[0]);",
        ),
        "thread t adds counter t",
        "32 threads add the same counter",
    );
    fails_goal(
        &caches,
        "shared-counter",
        with("atomicAdd(&s_count[threadIdx.x % 32], in[i] & 1);", "atomicAdd(&s_count[threadIdx.x % 32], 1);"),
        "in[i] & 1",
        "counting every element instead of the odd ones",
    );
    fails_goal(
        &caches,
        "shared-counter",
        with("    if (threadIdx.x < 32) s_count[threadIdx.x] = 0;\n", ""),
        "to zero",
        "counters never initialised",
    );
    fails_goal(
        &caches,
        "shared-counter",
        with("if (threadIdx.x < 32) s_count[threadIdx.x] = 0;", "if (threadIdx.x == 0) s_count[0] = 0;"),
        "to zero",
        "one counter of 32 initialised",
    );
    // Memory 5: a tile of one float is conflict-free because the column read leaves the array (its lanes move
    // no data: on a GPU they fault), and it reads 256 floats, not 1,024.
    let ex5 = memory.exercises.iter().find(|e| e.id == "bank-padding").expect("exercise").pattern.clone();
    fails_goal(
        &memory,
        "bank-padding",
        pattern(&ex5.replace("#define TILE 32", "#define TILE 1")),
        "all 1,024 floats",
        "a 1x1 tile",
    );
    // Memory 1: 4*lane + 2 is 4 sectors of 32 different floats, each misaligned by 2 bytes.
    fails_goal(&memory, "coalescing", pattern("4*lane + 2"), "4-byte boundary", "a misaligned load");
}

/// Grades `answer` on exercise `id` of `lab` and requires the goal whose text contains `goal` to fail (the
/// wrong idea `why`), with a reason.
fn fails_goal(
    lab: &warpscope::teach::lab::Course,
    id: &str,
    answer: warpscope::teach::lab::Answer,
    goal: &str,
    why: &str,
) {
    let ex = lab.exercises.iter().find(|e| e.id == id).unwrap_or_else(|| panic!("exercise {id}"));
    let g = grade_exercise(ex, Some(&answer));
    assert!(g.error.is_none(), "{id}: {why}: {:?}", g.error);
    let r = g.goals.iter().find(|r| r.text.contains(goal)).unwrap_or_else(|| panic!("{id}: no goal says `{goal}`"));
    assert!(!r.pass, "{id}: {why} must fail `{}`: {:#?}", r.text, g.goals);
    assert!(!r.detail.is_empty(), "{id}: {why}: the failed goal says why");
}

/// Grades `answer` (a pattern) on exercise `id` of `lab` and requires a goal to fail: the wrong idea `why`.
fn rejects(lab: &warpscope::teach::lab::Course, id: &str, answer: warpscope::teach::lab::Answer, why: &str) {
    let ex = lab.exercises.iter().find(|e| e.id == id).unwrap_or_else(|| panic!("exercise {id}"));
    let g = grade_exercise(ex, Some(&answer));
    assert!(g.error.is_none(), "{id}: {why}: {:?}", g.error);
    assert!(g.goals.iter().any(|g| !g.pass), "{id}: {why} must not pass: {:#?}", g.goals);
}

fn pattern(p: &str) -> warpscope::teach::lab::Answer {
    warpscope::teach::lab::Answer { pattern: Some(p.into()), ..Default::default() }
}

/// Issue 28: the memory lab's goals describe the idea, so the answers a student could game them with fail.
#[test]
fn the_memory_lab_rejects_wrong_ideas() {
    let lab = parse(MEMORY).expect("parses");
    // 1. Every lane on one float is 1 sector, not 32 consecutive floats.
    rejects(&lab, "coalescing", pattern("0"), "all lanes on one float");
    rejects(&lab, "coalescing", pattern("4*(lane/2)"), "16 floats read twice");
    // 2. One 128-byte transaction, but not for 32 floats.
    rejects(&lab, "fermi-alignment", pattern("0x1000"), "all lanes on one word");
    // 3. Four transactions for one 16-byte chunk per quarter-warp.
    rejects(&lab, "wide-splits", pattern("16*(lane/8)"), "each quarter-warp on one chunk");
    rejects(&lab, "wide-splits", pattern("0"), "all lanes on one chunk");
    // 4. A shared load moves no global bytes; a wider load reads other data.
    let op = |o: &str| warpscope::teach::lab::Answer { op: Some(o.into()), ..Default::default() };
    rejects(&lab, "kepler-l2-only", op("LDS.32"), "a shared load instead of L2 only");
    rejects(&lab, "kepler-l2-only", op("LD.E.CG.64"), "a wider load");
    // 5. The read rewritten as a copy is no longer a transpose; the loops must stay.
    let ex5 = lab.exercises.iter().find(|e| e.id == "bank-padding").expect("exercise").pattern.clone();
    let copy = ex5.replace(
        "out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];",
        "out[(y + j) * width + x] = tile[threadIdx.y + j][threadIdx.x];",
    );
    rejects(&lab, "bank-padding", pattern(&copy), "the column read rewritten as a row read");
    let one_pass = ex5
        .replace("__shared__ float tile[TILE][TILE];", "__shared__ float tile[TILE][TILE + 1];")
        .replace("for (int j = 0; j < TILE; j += 8)\n    out", "for (int j = 0; j < 8; j += 8)\n    out");
    assert!(copy != ex5 && one_pass != ex5 && one_pass.contains("TILE + 1"), "the edits apply");
    rejects(&lab, "bank-padding", pattern(&one_pass), "the read loop shortened");
    // 6. One word for all lanes is a broadcast, not four words in four banks.
    rejects(&lab, "broadcast", pattern("0"), "one word for the warp");
    rejects(&lab, "broadcast", pattern("4*lane"), "32 words, no broadcast");
    // 7. LDS.128 with quarter-warps re-reading one 128-byte row.
    rejects(&lab, "lds128", pattern("16*(lane % 8)"), "every quarter-warp on the same 128 bytes");
    rejects(&lab, "lds128", pattern("0"), "all lanes on one 16-byte chunk");
}

/// Issue 28: the tensor-core lab's goals describe the idea: padding is padding, a swizzle keeps 128-byte
/// rows, pairs share an address.
#[test]
fn the_tensor_core_lab_rejects_wrong_ideas() {
    let lab = parse(TENSOR_CORE_SMEM).expect("parses");
    // 2. Padding: contiguous rows, one address, or a swizzle are not a padded tile.
    rejects(&lab, "ldmatrix-padding", pattern("16*lane"), "the 32 rows packed into 512 bytes");
    rejects(&lab, "ldmatrix-padding", pattern("0"), "every lane on one row");
    rejects(&lab, "ldmatrix-padding", pattern("sw128(128*(lane % 8) + 16*(lane / 8))"), "a swizzle, not padding");
    // 3. Swizzle: padding rows to 144 bytes, or packing them, is not keeping 128-byte rows.
    rejects(&lab, "ldmatrix-swizzle", pattern("144*(lane % 8) + 16*(lane / 8)"), "padded rows");
    rejects(&lab, "ldmatrix-swizzle", pattern("16*lane"), "packed rows");
    rejects(&lab, "ldmatrix-swizzle", pattern("0"), "one row");
    // 4. x2: every lane on one row is a broadcast.
    rejects(&lab, "ldmatrix-x2", pattern("0"), "one row for both matrices");
    // 5. cp.async: 144-byte rows, or the destination untransposed.
    rejects(&lab, "cp-async-tile", pattern("144*(lane % 8) + 16*(lane / 8) from 0x100000 + 16*lane"), "144-byte rows");
    rejects(&lab, "cp-async-tile", pattern("16*lane from 0x100000 + 16*lane"), "the copy not transposed");
    // 6. stmatrix: padded rows.
    rejects(&lab, "stmatrix-epilogue", pattern("144*(lane % 8) + 16*(lane / 8)"), "padded rows");
    rejects(&lab, "stmatrix-epilogue", pattern("0"), "one row");
    // 7. Pairs: one address for the warp, or lanes n and n+16 sharing.
    rejects(&lab, "measured-lds64", pattern("0"), "one address for the warp");
    rejects(&lab, "measured-lds64", pattern("8*(lane % 16)"), "lanes n and n+16 sharing");
}

fn solvable(text: &str, at_least: usize) {
    let lab = parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert!(lab.exercises.len() >= at_least, "the lab has {} exercises", lab.exercises.len());
    for ex in &lab.exercises {
        let id = &ex.id;
        let start = grade_exercise(ex, None);
        assert!(start.error.is_none(), "{id}: the starting view runs");
        assert!(start.goals.iter().any(|g| !g.pass), "{id}: the starting pattern must not already meet every goal");
        let solution = ex.solution.as_ref().unwrap_or_else(|| panic!("{id} has a solution"));
        let solved = grade_exercise(ex, Some(solution));
        assert!(solved.error.is_none(), "{id}: {:?}", solved.error);
        for g in &solved.goals {
            assert!(g.pass, "{id}: goal `{}` fails: {}", g.check, g.detail);
        }
        assert!(solved.questions.iter().all(|q| *q), "{id}: the solution answers every question");
        assert!(solved.done, "{id}");
    }
}

#[test]
fn locked_settings_cannot_be_changed_by_an_answer() {
    let lab = parse(MEMORY).expect("parses");
    let ex = &lab.exercises[0];
    // Exercise 1 locks the CC: an answer that switches to 2.0 is graded on 8.0 anyway.
    let answer = warpscope::teach::lab::Answer {
        pattern: Some("4*lane".into()),
        cc: Some("2.0".into()),
        choices: vec![Some(1)],
        ..Default::default()
    };
    let sc = ex.scenario(Some(&answer)).expect("valid");
    assert_eq!(sc.cc, warpscope::Cc::new(8, 0));
    assert!(grade_exercise(ex, Some(&answer)).done);
}

fn err(src: &str) -> String {
    match parse(src) {
        Ok(_) => panic!("expected an error"),
        Err(e) => format!("{}:{}: {}", e.line, e.column, e.message),
    }
}

const ONE: &str =
    "title = \"t\"\n[[exercise]]\nid = \"a\"\ntitle = \"A\"\ntext = \"x\"\npattern = \"4*lane\"\nop = \"LDG.E.32\"\n";

#[test]
fn bad_lab_files_name_the_problem_and_where() {
    assert!(parse(ONE).is_ok());
    assert_eq!(err("title = \"t\"\n[[exercise]\n"), "2:12: unclosed array table, expected `]`");
    assert!(err("title = 1\n").starts_with("1:9: invalid type: integer `1`, expected a string"));
    assert_eq!(err("title = \"t\"\n"), "1:1: a lab needs at least one [[exercise]]");
    assert!(err(&format!("{ONE}colour = \"red\"\n")).starts_with("8:1: unknown field `colour`"));
    assert_eq!(
        err(&format!("{ONE}[[exercise.goal]]\ncheck = \"sector <= 4\"\ntext = \"x\"\n")),
        "9:10: unknown metric `sector` (known: requests, lines, sectors, transactions, transaction_bytes, bytes_requested, bytes_unique, bytes_moved, efficiency, sectors_per_request, wavefronts, ideal_wavefronts, bank_conflicts, conflict_degree, warps, lanes, size, instructions, l1_hit_rate, l2_hit_rate, l1_hits, l1_sectors, l2_hits, l2_sectors, dram_read_bytes, ops, serial, passes, misaligned, error_lanes, distinct, patterns, addr(k); in a `lanes` goal also lane, addr)"
    );
    // The goals that constrain the idea: a lane's address outside a `lanes` goal, a kept line the starting
    // pattern lacks, a goal with neither a check nor a kept line.
    assert_eq!(
        err(&format!("{ONE}[[exercise.goal]]\ncheck = \"addr < 128\"\ntext = \"x\"\n")),
        "9:9: `lane` and `addr` are a lane's: this goal needs scope = \"lanes\""
    );
    assert_eq!(
        err(&format!("{ONE}[[exercise.goal]]\nkeep = \"8*lane\"\ntext = \"x\"\n")),
        "9:8: `keep` names lines the starting pattern does not have"
    );
    assert_eq!(
        err(&format!("{ONE}[[exercise.goal]]\ntext = \"x\"\n")),
        "3:6: a goal needs a `check`, a `keep` or a `uses`"
    );
    // `uses` names code, alone.
    assert_eq!(err(&format!("{ONE}[[exercise.goal]]\nuses = \"  \"\ntext = \"x\"\n")), "9:8: `uses` names no code");
    assert_eq!(
        err(&format!("{ONE}[[exercise.goal]]\nuses = \"x\"\ncheck = \"sectors > 0\"\ntext = \"x\"\n")),
        "9:8: a goal has one of `check`, `keep` and `uses`"
    );
    assert!(parse(&format!(
        "{ONE}[[exercise.goal]]\ncheck = \"addr == 4 * lane + addr(0)\"\nscope = \"lanes\"\ntext = \"x\"\n[[exercise.goal]]\nkeep = \" 4*lane \"\ntext = \"y\"\n"
    ))
    .is_ok());
    assert_eq!(
        err(&format!("{ONE}[[exercise.goal]]\ncheck = \"sectors <=\"\ntext = \"x\"\n")),
        "9:20: expected a number, a name or `(`, found the end of the input"
    );
    assert_eq!(
        err(&format!("{ONE}[[exercise.question]]\ntext = \"q\"\nchoices = [\"a\", \"b\"]\nanswer = 2\n")),
        "11:10: answer 2 is not one of the 2 choices (counted from 0)"
    );
    assert_eq!(
        err(&format!("{ONE}locked = [\"colour\"]\n")),
        "8:11: `colour` cannot be locked (lockable: cc, lang, op, block, grid, pattern, l1, bank_mode, shared_model, sets, layout, elem_bytes, data_branches, caches)"
    );
    let twice =
        format!("{ONE}[[exercise]]\nid = \"a\"\ntitle = \"B\"\ntext = \"y\"\npattern = \"0\"\nop = \"LDS.32\"\n");
    assert_eq!(err(&twice), "9:6: a second exercise with id `a`");
    let broken = ONE.replace("pattern = \"4*lane\"", "pattern = \"4*lane +\"");
    assert!(err(&broken).starts_with("6:11: the starting pattern does not run: expected a number"), "{}", err(&broken));
    assert_eq!(err(&ONE.replace("op = \"LDG.E.32\"", "op = \"LDG.E.32\"\ncc = \"9.9\"")), "8:6: unknown compute capability `9.9` (known: 2.0, 3.0, 3.5, 3.7, 5.0, 5.2, 6.0, 6.1, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 12.0)");
}

#[test]
fn markdown_is_rendered_as_data_never_as_html() {
    let blocks = markdown("# Title\nSome *em*, **strong**, `code` and [a link](https://example.org).\n\n<script>alert(1)</script>\n\n- one\n- two\n\n[bad](javascript:alert(1))");
    assert_eq!(blocks[0], Block::Heading(1, vec![span("Title", false, false, false, None)]));
    let Block::Para(p) = &blocks[1] else { panic!("{blocks:?}") };
    assert!(p.iter().any(|s| s.text == "em" && s.em));
    assert!(p.iter().any(|s| s.text == "strong" && s.strong));
    assert!(p.iter().any(|s| s.text == "code" && s.code));
    assert!(p.iter().any(|s| s.text == "a link" && s.link.as_deref() == Some("https://example.org")));
    // Raw HTML stays text; a javascript: link loses its target.
    assert!(
        blocks.iter().any(|b| matches!(b, Block::Para(s) if s.iter().any(|x| x.text.contains("<script>"))))
            || blocks.iter().any(|b| format!("{b:?}").contains("<script>"))
    );
    assert!(blocks.iter().any(|b| matches!(b, Block::Item(s) if s[0].text == "one")));
    let last = format!("{:?}", blocks.last());
    assert!(last.contains("\"bad\"") && last.contains("link: None"), "{last}");
}

fn span(t: &str, code: bool, em: bool, strong: bool, link: Option<String>) -> warpscope::teach::lab::Span2 {
    warpscope::teach::lab::Span2 { text: t.into(), code, em, strong, link }
}

/// Lab files are read up to 1 MB (MAX_LAB_BYTES), by the page, `warpscope check` and `warpscope-lab` alike:
/// a 30 MB file was once parsed whole.
#[test]
fn a_lab_file_over_1_mb_is_refused_with_its_size() {
    use warpscope::teach::lab_file::MAX_LAB_BYTES;
    assert_eq!(MAX_LAB_BYTES, 1_048_576);
    let lab = "title = \"big\"\n[[exercise]]\nid = \"a\"\ntitle = \"A\"\ntext = \"t\"\npattern = \"4*lane\"\nop = \"LDG.E.32\"\n";
    let big = format!("# {}\n{lab}", "x".repeat(MAX_LAB_BYTES));
    assert_eq!(
        err(&big),
        format!("1:1: the lab file is {} bytes; a lab file may have at most 1048576 (1 MB)", big.len())
    );
    assert!(parse(lab).is_ok(), "the same lab, small, is read");
}
