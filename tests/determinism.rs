//! Determinism: the same scenario and seed give the same trace, run after run, and the same as
//! in the browser (tests/wasm.rs compares against the hash recorded here).
//!
//! When the simulation's behaviour changes on purpose, rerun with `UPDATE_GOLDEN=1` to record the
//! new hash, and say why in the commit.

use kubeloop::sim::reference::worked_example;

const GOLDEN: &str = include_str!("golden/worked-example-seed-7.txt");

#[test]
fn the_same_seed_gives_the_same_trace_twice() {
    let first = worked_example(7).unwrap();
    let second = worked_example(7).unwrap();
    assert_eq!(first, second);
    assert!(first.1 > 50, "the run exchanged only {} messages", first.1);
    assert_ne!(worked_example(8).unwrap().0, first.0, "another seed gives another trace");
}

#[test]
fn the_trace_hash_matches_the_recorded_one() {
    let (hash, count) = worked_example(7).unwrap();
    let line = format!("{hash:016x} {count}");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/worked-example-seed-7.txt"), format!("{line}\n")).unwrap();
        return;
    }
    assert_eq!(GOLDEN.trim(), line, "behaviour changed; if on purpose, rerun with UPDATE_GOLDEN=1");
}
