//! What the page's smaller builds accept. The lab worker is built without the code front ends and without the
//! cache model (index.html: `--no-default-features`), and the language workers without the cache model; the test
//! command runs this file in that build too (`cargo test --no-default-features --test worker_builds`), so a
//! check that needs a feature the build lacks fails here rather than on a student's page.

/// A lab whose expression exercise turns the memory system on: the lab worker checks that its pattern lowers,
/// which does not need the cache model (it once refused the whole lab: "this build of warpscope has no
/// memory-system model").
#[test]
fn a_lab_with_the_memory_system_on_loads_in_the_lab_worker() {
    let src = r#"
title = "Caches"
intro = "The memory system on an expression."

[[exercise]]
id = "stride"
title = "1. A strided load"
text = "Make the load coalesced."
lang = "expr"
op = "LDG.E.32"
pattern = "8*tid"
block = "64"
caches = "on"
locked = ["caches"]
solution = { pattern = "4*tid" }

[[exercise.goal]]
check = "sectors <= 8"
text = "at most 8 sectors a block"
"#;
    let course = warpscope::teach::lab_file::parse(src).unwrap_or_else(|e| panic!("the lab loads: {e}"));
    assert_eq!(course.exercises.len(), 1);
    let sc = course.exercises[0].scenario(None).expect("a scenario");
    assert!(sc.caches.is_some(), "the exercise keeps the memory system on");
}

/// A build without the cache model refuses a scenario with the memory system on, by name, instead of
/// answering without it; a build with it (the command line, the memory worker) runs it.
#[test]
fn the_memory_system_runs_only_where_the_build_carries_it() {
    let sc = warpscope::scenario::Scenario { caches: Some(Default::default()), ..Default::default() };
    match (sc.run(), cfg!(feature = "caches")) {
        (Ok(r), true) => assert!(r.caches.is_some()),
        (Err(e), false) => assert!(e.error.message.contains("no memory-system model"), "{}", e.error.message),
        (r, has) => {
            panic!("with the cache model {has}: {:?}", r.map(|r| r.caches.is_some()).map_err(|e| e.error.message))
        }
    }
}
