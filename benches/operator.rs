//! The cost of an operator a learner writes (a bench target, not a timed test): lesson 11's
//! Website operator (`examples/operators/website.py`) run by the machine's `python3` through the
//! operator host, as `kubeloop run --operator` runs it.
//!
//! `cargo bench --bench operator` prints a Markdown table:
//! - teaching scale (the default scenario's 2 nodes, its Deployment of 3, and a Website of 2
//!   with the Deployment and Service the operator keeps for it), steady, in simulated seconds per
//!   wall second, with the operator and without it (the same objects, nobody reconciling the
//!   Website);
//! - a handler call's cost: the wall time inside the interpreter per call (the round trips of
//!   its JSON messages and the Python it runs, its API requests' answers included), counted by
//!   wrapping the interpreter.
//!
//! Needs `python3` (or `$KUBELOOP_PYTHON`).

#[path = "../src/bin/kubeloop/operator_host.rs"]
#[allow(dead_code)]
mod operator_host;

use kubeloop::command::{Scenario, Session};
use kubeloop::model::Duration;
use kubeloop::operator::Interpreter;
use operator_host::PythonInterpreter;
use serde_json::Value;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What the wrapped interpreter counts.
#[derive(Default)]
struct Tally {
    calls: Cell<u64>,
    exchanges: Cell<u64>,
    nanos: Cell<u128>,
}

/// The native interpreter, counting handler calls, messages and the wall time spent in them.
struct Counting {
    inner: PythonInterpreter,
    tally: Rc<Tally>,
}

impl Interpreter for Counting {
    fn load(&mut self) -> Result<Value, String> {
        self.inner.load()
    }

    fn exchange(&mut self, message: &Value) -> Result<Value, String> {
        let t = &self.tally;
        if message.get("op").and_then(Value::as_str) == Some("call") {
            t.calls.set(t.calls.get() + 1);
        }
        t.exchanges.set(t.exchanges.get() + 1);
        let started = Instant::now();
        let reply = self.inner.exchange(message);
        t.nanos.set(t.nanos.get() + started.elapsed().as_nanos());
        reply
    }
}

fn example(name: &str) -> String {
    format!("{}/examples/operators/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run(session: &mut Session, line: &str) {
    let out = session.execute(line);
    assert!(out.ok, "{line}: {}", out.stderr);
}

/// The default scenario with the Website definition and `shop` applied; with the operator, it
/// has converged (the Deployment and Service exist) before measuring starts.
fn website_session(with_operator: bool) -> (Session, Rc<Tally>) {
    let mut s = Session::new(Scenario::builtin("default").expect("default scenario"), Some(11)).expect("session");
    s.sim_mut().set_trace_capacity(0);
    s.set_file_reader(|path| std::fs::read_to_string(example(path)).map_err(|e| format!("{path}: {e}")));
    run(&mut s, "kubectl apply -f website-crd.yaml");
    run(&mut s, "kubectl apply -f shop.yaml");
    let tally = Rc::new(Tally::default());
    if with_operator {
        let inner = PythonInterpreter::for_file(&example("website.py")).expect("website.py");
        s.sim_mut().add_operator("website", Box::new(Counting { inner, tally: tally.clone() })).expect("operator loads");
    }
    let until = s.sim().now() + Duration::secs(120);
    s.advance_to(until);
    if with_operator {
        assert!(s.execute("kubectl get deployment shop").ok, "the operator made the Website's Deployment");
    }
    (s, tally)
}

/// Simulated seconds per wall second over `span` of simulated time, and the tally's change.
fn steady(with_operator: bool, span: Duration) -> (f64, u64, u64, u128) {
    let (mut s, tally) = website_session(with_operator);
    let (calls, exchanges, nanos) = (tally.calls.get(), tally.exchanges.get(), tally.nanos.get());
    let started = Instant::now();
    let until = s.sim().now() + span;
    s.advance_to(until);
    let wall = started.elapsed().as_secs_f64();
    (span.0 as f64 / 1000.0 / wall, tally.calls.get() - calls, tally.exchanges.get() - exchanges, tally.nanos.get() - nanos)
}

fn main() {
    let span = Duration::secs(3600);
    let (bare, _, _, _) = steady(false, span);
    let (with, calls, exchanges, nanos) = steady(true, span);
    let per_call_us = nanos as f64 / 1000.0 / calls.max(1) as f64;
    println!("| measurement | result |");
    println!("|---|---|");
    println!("| teaching scale with a Website and no operator (steady, 1 h simulated) | {bare:.0}× real time |");
    println!("| teaching scale with lesson 11's operator running (steady, 1 h simulated; its 5 s timer) | {with:.0}× real time |");
    println!(
        "| a handler call through python3 ({calls} calls, {exchanges} messages in that hour) | {per_call_us:.0} µs of interpreter time per call ({:.0} µs per message) |",
        nanos as f64 / 1000.0 / exchanges.max(1) as f64
    );
}
