//! The operator as a process of the simulation: kopf's reactor over informers the simulation
//! owns, held to the controllers' contract (handlers enqueue keys; one reconcile — a *cycle* —
//! decides from the cache; writes go out as requests and come back with latency).
//!
//! A cycle takes one key from the work queue, reads the object from the cache, finds kopf's
//! cause (`kopf.rs`), and calls the cause's handlers one after the other through the
//! `Interpreter`. While a handler waits for one of its API requests, the cycle waits with it:
//! the request leaves at the instant the handler asked, and the handler goes on when the
//! answer arrives. One cycle runs at a time (one Python interpreter; kopf's per-object
//! handling is sequential too). When the handlers are done, kopf's own patch — the handlers'
//! `patch`, their results under `status.<id>`, progress annotations, the diff base, the
//! finalizer — is written with the client's patch semantics (read, merge, write; again from the
//! read on a conflict). A failed handler is retried after its delay through the queue, and its
//! progress lives on the object, so a restarted operator carries on where it stopped.

use super::kopf::{self, LogLine, Progress, Reason};
use super::requests::{self, Planned, Resource};
use super::{ErrorsMode, HandlerSpec, Interpreter, Posting, STEP_BUDGET};
use crate::api::crd::Definitions;
use crate::api::{ApiRequest, ApiResponse, ApiResult, FieldFilter, Reason as ApiReason, WatchEvent, WatchId};
use crate::model::{Duration, Object, ObjectKey, Time};
use crate::runtime::informer::{Delta, Informer};
use crate::runtime::workqueue::WorkQueue;
use crate::runtime::{Component, Ctx, LoopPhase, LoopStatus, RequestId};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How long after its last informer delta the operator is drawn as observing.
const OBSERVE_GLOW: Duration = Duration::millis(150);
/// Conflicts a patch retries before it gives up (kube-apiserver's patch retries on conflict).
const PATCH_ATTEMPTS: u32 = 5;

/// What the work queue holds: an object to look at, or one of its timers that is due.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Work {
    Object(ObjectKey),
    Timer(ObjectKey, usize),
}

impl Work {
    fn key(&self) -> &ObjectKey {
        match self {
            Work::Object(k) | Work::Timer(k, _) => k,
        }
    }
}

/// How one handler call ended.
#[derive(Clone, Debug)]
struct HandlerOutcome {
    handler: usize,
    /// Retries are over: success, permanent failure, or a failure that will not be retried.
    final_: bool,
    success: bool,
    result: Value,
    /// Seconds until the next attempt, when not final.
    delay: Option<f64>,
    message: Option<String>,
}

/// A patch under way: read the object, merge, write back.
#[derive(Clone, Debug)]
struct PatchOp {
    key: ObjectKey,
    patch: Value,
    /// The status subresource (`patch_namespaced_*_status`).
    status: bool,
    /// kopf's finalizer to add (`Some(true)`) or take off (`Some(false)`), against the newest
    /// list rather than the one the cycle started from.
    finalizer: Option<bool>,
    attempts: u32,
    /// kopf's own patch writes the object, then its status part through the status subresource.
    status_part: Option<Value>,
    phase: PatchPhase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PatchPhase {
    Read,
    Write,
    StatusWrite,
}

#[derive(Clone, Debug)]
enum Waiting {
    /// A handler's request; its answer goes back to the handler.
    Handler,
    /// A handler's patch, reading or writing.
    HandlerPatch(PatchOp),
    /// kopf's own patch at the end of the cycle.
    Final(PatchOp),
}

/// One reconcile of one key.
struct Cycle {
    work: Work,
    reason: Reason,
    body: Value,
    old: Value,
    new: Value,
    diff: Vec<Value>,
    plan: VecDeque<usize>,
    outcomes: Vec<HandlerOutcome>,
    patch: Value,
    /// The request the cycle waits for, and what it is.
    waiting: Option<(RequestId, Waiting)>,
    /// Handlers of the cause waiting out a delay: the cycle's key is looked at again then.
    delayed_until: Option<Time>,
    /// kopf's own patch, with no handler to call (a finalizer added or taken off).
    bookkeeping_only: Option<bool>,
}

pub struct Operator {
    name: String,
    interpreter: Box<dyn Interpreter>,
    handlers: Vec<HandlerSpec>,
    /// The custom resources served when it was added: a restart checks the file against them
    /// again (its handlers keep the resources resolved then).
    definitions: Definitions,
    posting: Posting,
    resources: Vec<Resource>,
    informers: Vec<Informer>,
    queue: WorkQueue<Work>,
    cycle: Option<Cycle>,
    /// When each object's timers are next due, by object and handler.
    timers: BTreeMap<(ObjectKey, usize), Time>,
    /// Objects seen since the process started (kopf's resume handlers run once per object then).
    seen: BTreeSet<ObjectKey>,
    /// Events it posted: their answers are not waited for.
    posts: BTreeSet<RequestId>,
    /// The resourceVersion of its own last write to each object, until the cache shows it.
    written: BTreeMap<ObjectKey, u64>,
    status: LoopStatus,
    last_delta: Option<Time>,
    now: Time,
    /// Set once the interpreter failed: the operator does nothing until it is started again.
    broken: Option<String>,
    /// The interpreter was loaded by `new` and not used since: the first `start` keeps it.
    fresh: bool,
}

impl Operator {
    /// An operator named `name` running the code `interpreter` loads. The code is loaded now,
    /// so a file that does not load (a syntax error, a failed import, an unknown resource) is
    /// an error here and changes nothing.
    pub fn new(name: &str, mut interpreter: Box<dyn Interpreter>, definitions: &Definitions) -> Result<Operator, String> {
        super::check_name(name)?;
        let ready = interpreter.load()?;
        let handlers = super::registration(&ready, definitions)?;
        let posting = Posting::from_ready(&ready);
        let mut resources: Vec<Resource> = Vec::new();
        for h in &handlers {
            if !resources.contains(&h.resource) {
                resources.push(h.resource.clone());
            }
        }
        let informers = resources
            .iter()
            .map(|r| {
                if r.custom.is_empty() {
                    Informer::new(r.kind, FieldFilter::All)
                } else {
                    Informer::for_resource(&r.custom, FieldFilter::All)
                }
            })
            .collect();
        let component = format!("operator/{name}");
        Ok(Operator {
            name: name.to_string(),
            interpreter,
            handlers,
            definitions: definitions.clone(),
            posting,
            resources,
            informers,
            queue: WorkQueue::new(),
            cycle: None,
            timers: BTreeMap::new(),
            seen: BTreeSet::new(),
            posts: BTreeSet::new(),
            written: BTreeMap::new(),
            status: LoopStatus { name: component, ..Default::default() },
            last_delta: None,
            now: Time(0),
            broken: None,
            fresh: true,
        })
    }

    /// Its name without the `operator/` prefix.
    pub fn operator_name(&self) -> &str {
        &self.name
    }

    /// The handlers it registered: `(kind of handler, id, resource)`, for views and `sim status`.
    pub fn handlers(&self) -> impl Iterator<Item = (&'static str, &str, String)> + '_ {
        self.handlers.iter().map(|h| (h.reason.as_str(), h.id.as_str(), h.resource.qualified()))
    }

    fn informer_of(&self, resource: &Resource) -> Option<&Informer> {
        self.resources.iter().position(|r| r == resource).map(|i| &self.informers[i])
    }

    fn cached(&self, key: &ObjectKey) -> Option<Value> {
        let resource = self.resources.iter().find(|r| r.holds(key))?;
        self.informer_of(resource)?.store().get(key).map(|o| o.to_json())
    }

    fn synced(&self) -> bool {
        self.informers.iter().all(Informer::has_synced)
    }

    fn break_down(&mut self, error: String) {
        self.status.last_action = format!("interpreter failed: {}", error.lines().next().unwrap_or_default());
        self.status.last_action_at = Some(self.now);
        self.broken = Some(error);
        self.cycle = None;
    }

    /// Hands deltas to kopf's handlers: objects to look at, timers to start or stop.
    fn dispatch(&mut self, deltas: Vec<Delta>) {
        for delta in deltas {
            let object = delta.object();
            let key = object.key();
            self.last_delta = Some(self.now);
            let changes = self.handlers.iter().any(|h| h.resource.holds(&key) && h.reason != Reason::Timer);
            if changes {
                self.queue.add(Work::Object(key.clone()));
            }
            // A timer runs only on the objects its filters select (kopf spawns one per matching
            // object, and stops it when the object stops matching).
            let mut body: Option<Value> = None;
            for (index, h) in self.handlers.iter().enumerate() {
                if !h.resource.holds(&key) || h.reason != Reason::Timer {
                    continue;
                }
                let entry = (key.clone(), index);
                let selected = h.selects(body.get_or_insert_with(|| object.to_json()));
                match &delta {
                    Delta::Deleted(_) => {
                        self.timers.remove(&entry);
                    }
                    _ if object.meta().deletion_timestamp.is_some() || !selected => {
                        self.timers.remove(&entry);
                    }
                    _ => {
                        let running = self.cycle.as_ref().is_some_and(|c| c.work == Work::Timer(key.clone(), index));
                        if !running && !self.timers.contains_key(&entry) {
                            self.timers.insert(entry, self.now + h.initial_delay);
                        }
                    }
                }
            }
        }
    }

    /// Queues the timers that are due.
    fn promote_timers(&mut self) {
        let due: Vec<(ObjectKey, usize)> = self.timers.iter().filter(|(_, t)| **t <= self.now).map(|(k, _)| k.clone()).collect();
        for entry in due {
            self.timers.remove(&entry);
            self.queue.add(Work::Timer(entry.0, entry.1));
        }
    }

    /// Starts the next cycle if the operator is free and its caches have synced.
    fn work(&mut self, ctx: &mut Ctx) {
        if self.broken.is_some() || !self.synced() {
            return;
        }
        self.promote_timers();
        self.queue.promote_due(ctx.now);
        while self.cycle.is_none() {
            let Some(work) = self.queue.get() else { break };
            self.status.turns += 1;
            self.begin(work, ctx);
        }
    }

    fn handler_ids_for(&self, reason: Reason, key: &ObjectKey, body: &Value) -> Vec<usize> {
        (0..self.handlers.len())
            .filter(|&i| {
                let h = &self.handlers[i];
                h.reason == reason && h.resource.holds(key) && h.selects(body)
            })
            .collect()
    }

    /// kopf's cause for the object as cached, and starts its cycle.
    fn begin(&mut self, work: Work, ctx: &mut Ctx) {
        let key = work.key().clone();
        let Some(body) = self.cached(&key) else {
            // Gone: nothing to handle (a deleted object's timers went with its delta).
            self.written.remove(&key);
            self.finish(work, None, ctx);
            return;
        };
        let cached_rv = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        if let Some(&rv) = self.written.get(&key) {
            if cached_rv >= rv {
                self.written.remove(&key);
            } else if matches!(work, Work::Object(_)) {
                // The watch event of its own write is on its way and will queue the key again.
                self.finish(work, None, ctx);
                return;
            }
        }
        if let Work::Timer(ref timer_key, index) = work {
            if !self.handlers[index].selects(&body) {
                // Armed before the object stopped matching the timer's filters: it stops.
                let entry = (timer_key.clone(), index);
                self.finish(work, None, ctx);
                self.timers.remove(&entry);
                return;
            }
            let mut cycle = self.cycle_for(work, Reason::Timer, body);
            cycle.plan.push_back(index);
            self.cycle = Some(cycle);
            self.advance(ctx);
            return;
        }
        let deleting = body.pointer("/metadata/deletionTimestamp").is_some_and(|v| !v.is_null());
        let finalizers: Vec<&str> = body
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let has_finalizer = finalizers.contains(&kopf::FINALIZER);
        // kopf's `requires_finalizer`: a delete handler that is not optional, or a timer (so that
        // it is stopped before the object goes), whose filters select the object.
        let needs_finalizer = self.handlers.iter().any(|h| {
            h.resource.holds(&key) && ((h.reason == Reason::Delete && !h.optional) || h.reason == Reason::Timer) && h.selects(&body)
        });
        let first_sight = self.seen.insert(key.clone());
        let (reason, old, new) = if deleting {
            if !has_finalizer {
                self.finish(work, None, ctx);
                return;
            }
            (Reason::Delete, Value::Null, Value::Null)
        } else if needs_finalizer && !has_finalizer {
            self.bookkeeping(work, body, true, "Adding the finalizer, thus preventing the actual deletion.", ctx);
            return;
        } else if !needs_finalizer && has_finalizer {
            self.bookkeeping(work, body, false, "Removing the finalizer, as there are no handlers requiring it.", ctx);
            return;
        } else if !self.handlers.iter().any(|h| h.reason != Reason::Timer && h.resource.holds(&key) && h.selects(&body)) {
            // No handler of a change selects it (its filters): kopf leaves it alone, diff base
            // and all (a config copier's copies are not its concern).
            self.finish(work, None, ctx);
            return;
        } else {
            let essence = kopf::essence(&body);
            match kopf::last_handled(&body) {
                None => (Reason::Create, Value::Null, essence),
                Some(last) if last != essence => (Reason::Update, last, essence),
                Some(_) if first_sight && !self.handler_ids_for(Reason::Resume, &key, &body).is_empty() => {
                    (Reason::Resume, Value::Null, Value::Null)
                }
                Some(_) => {
                    self.finish(work, None, ctx);
                    return;
                }
            }
        };
        let mut cycle = self.cycle_for(work, reason, body);
        cycle.diff = if reason == Reason::Update || reason == Reason::Create { kopf::diff(&old, &new) } else { Vec::new() };
        cycle.old = old;
        cycle.new = new;
        for index in self.handler_ids_for(reason, &key, &cycle.body) {
            let progress = Progress::read(&cycle.body, &self.handlers[index].id).filter(|p| p.purpose.as_deref() == Some(reason.as_str()));
            match progress {
                Some(p) if p.success || p.failure => {}
                Some(p) if p.delayed_until().is_some_and(|t| t > ctx.now) => {
                    let t = p.delayed_until().expect("checked");
                    cycle.delayed_until = Some(cycle.delayed_until.map_or(t, |d| d.min(t)));
                }
                _ => cycle.plan.push_back(index),
            }
        }
        self.cycle = Some(cycle);
        self.advance(ctx);
    }

    fn cycle_for(&self, work: Work, reason: Reason, body: Value) -> Cycle {
        Cycle {
            work,
            reason,
            body,
            old: Value::Null,
            new: Value::Null,
            diff: Vec::new(),
            plan: VecDeque::new(),
            outcomes: Vec::new(),
            patch: json!({}),
            waiting: None,
            delayed_until: None,
            bookkeeping_only: None,
        }
    }

    /// A cycle that only writes kopf's finalizer.
    fn bookkeeping(&mut self, work: Work, body: Value, add: bool, summary: &str, ctx: &mut Ctx) {
        let mut cycle = self.cycle_for(work, Reason::Create, body);
        cycle.bookkeeping_only = Some(add);
        self.set_action(format!("{}: {summary}", display_key(&cycle.body, cycle.work.key())), ctx.now);
        self.cycle = Some(cycle);
        self.advance(ctx);
    }

    fn set_action(&mut self, action: String, now: Time) {
        self.status.last_action = action;
        self.status.last_action_at = Some(now);
    }

    /// Calls the cycle's next handler, or writes kopf's patch once none is left.
    fn advance(&mut self, ctx: &mut Ctx) {
        loop {
            let Some(cycle) = self.cycle.as_mut() else { return };
            if cycle.waiting.is_some() {
                return;
            }
            let Some(index) = cycle.plan.pop_front() else {
                self.write_back(ctx);
                return;
            };
            let handler = &self.handlers[index];
            let retry = Progress::read(&cycle.body, &handler.id)
                .filter(|p| p.purpose.as_deref() == Some(cycle.reason.as_str()))
                .map_or(0, |p| p.retries);
            let message = json!({
                "op": "call",
                "handler": handler.id,
                "kwargs": {
                    "body": cycle.body, "old": cycle.old, "new": cycle.new, "diff": cycle.diff,
                    "reason": cycle.reason.as_str(), "reason_of": handler.reason.as_str(), "retry": retry,
                    "resource": {"group": handler.resource.group(), "version": handler.resource.version(), "plural": handler.resource.plural()},
                },
                "now_ms": ctx.now.0,
                "epoch_ms": crate::model::time::EPOCH_UNIX_SECS * 1000,
                "seed": ctx.rng.next_u64() >> 11,
                "budget": STEP_BUDGET,
            });
            let reply = match self.interpreter.exchange(&message) {
                Ok(r) => r,
                Err(e) => return self.break_down(e),
            };
            self.cycle.as_mut().expect("running").plan.push_front(index);
            if !self.on_reply(reply, ctx) {
                return;
            }
        }
    }

    /// Takes the interpreter's reply in the middle of a handler call. Returns whether the
    /// handler is done (the cycle may go on to the next one).
    fn on_reply(&mut self, mut reply: Value, ctx: &mut Ctx) -> bool {
        loop {
            match reply.get("op").and_then(Value::as_str) {
                Some("request") => {
                    let planned = requests::plan(&reply);
                    let answer = match planned {
                        Ok(Planned::Send(request)) => {
                            let id = ctx.send(*request);
                            self.cycle.as_mut().expect("running").waiting = Some((id, Waiting::Handler));
                            return false;
                        }
                        Ok(Planned::Patch { key, patch, status }) => {
                            let op = PatchOp {
                                key: key.clone(),
                                patch,
                                status,
                                finalizer: None,
                                attempts: 0,
                                status_part: None,
                                phase: PatchPhase::Read,
                            };
                            let id = ctx.send(ApiRequest::Get(key));
                            self.cycle.as_mut().expect("running").waiting = Some((id, Waiting::HandlerPatch(op)));
                            return false;
                        }
                        Err(answer) => answer,
                    };
                    reply = match self.interpreter.exchange(&answer) {
                        Ok(r) => r,
                        Err(e) => {
                            self.break_down(e);
                            return false;
                        }
                    };
                }
                Some("done") => {
                    self.handler_done(&reply, ctx);
                    return true;
                }
                _ => {
                    self.break_down(format!("unexpected message from the interpreter: {reply}"));
                    return false;
                }
            }
        }
    }

    /// Records a handler call's outcome as kopf's `execute_handler_once` does, with its log.
    fn handler_done(&mut self, reply: &Value, ctx: &mut Ctx) {
        let cycle = self.cycle.as_mut().expect("running");
        let index = cycle.plan.pop_front().expect("the handler called");
        let handler = &self.handlers[index];
        let title = handler.title();
        let retry = Progress::read(&cycle.body, &handler.id)
            .filter(|p| p.purpose.as_deref() == Some(cycle.reason.as_str()))
            .map_or(0, |p| p.retries);
        let text = |f: &str| reply.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
        let message = text("message");
        let retries_out = handler.retries.is_some_and(|n| retry + 1 >= n);
        let mut lines: Vec<LogLine> = reply
            .get("logs")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|l| LogLine {
                        level: l.get("level").and_then(Value::as_str).unwrap_or("info").to_string(),
                        message: l.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut outcome = HandlerOutcome { handler: index, final_: true, success: false, result: Value::Null, delay: None, message: None };
        match text("outcome").as_str() {
            "success" => {
                outcome.success = true;
                outcome.result = reply.get("result").cloned().unwrap_or(Value::Null);
                lines.push(LogLine::info(format!("{title} succeeded.")));
            }
            "temporary" if retries_out => {
                let n = handler.retries.unwrap_or(0);
                lines.push(LogLine::error(format!("{title} failed temporarily but will exceed {n} retries: {message}")));
            }
            "temporary" => {
                let delay = reply.get("delay").and_then(Value::as_f64).unwrap_or(kopf::DEFAULT_DELAY_SECS);
                outcome.final_ = false;
                outcome.delay = Some(delay);
                lines.push(LogLine::error(format!("{title} failed temporarily: {message}")));
            }
            "permanent" => lines.push(LogLine::error(format!("{title} failed permanently: {message}"))),
            _ => {
                // An exception, or the step budget: kopf's errors mode decides.
                let backoff = handler.backoff;
                let line = match handler.errors {
                    ErrorsMode::Ignored => {
                        outcome.success = true;
                        format!("{title} failed with an exception and will ignore it: {message}")
                    }
                    ErrorsMode::Permanent => format!("{title} failed with an exception and will stop now: {message}"),
                    ErrorsMode::Temporary if retries_out => format!(
                        "{title} failed with an exception and will stop now (it would exceed {} retries on the next attempt): {message}",
                        handler.retries.unwrap_or(0)
                    ),
                    ErrorsMode::Temporary => {
                        outcome.final_ = false;
                        outcome.delay = Some(backoff);
                        format!("{title} failed with an exception and will try again in {} seconds: {message}", seconds_text(backoff))
                    }
                };
                lines.push(LogLine::error(line));
            }
        }
        outcome.message = (!outcome.success).then_some(message);
        if let Some(patch) = reply.get("patch").filter(|p| p.as_object().is_some_and(|o| !o.is_empty())) {
            requests::compose(&mut cycle.patch, patch);
        }
        let summary =
            format!("{}: {}", display_key(&cycle.body, cycle.work.key()), lines.last().map(|l| l.message.clone()).unwrap_or_default());
        let body = cycle.body.clone();
        cycle.outcomes.push(outcome);
        self.set_action(summary, ctx.now);
        for line in lines {
            self.post(&body, &line, ctx);
        }
        for event in reply.get("events").and_then(Value::as_array).into_iter().flatten() {
            let text = |f: &str| event.get(f).and_then(Value::as_str).unwrap_or_default();
            let mut reference = event.get("object").cloned().unwrap_or_default();
            if reference.get("namespace").is_none_or(Value::is_null) {
                reference["namespace"] = body.pointer("/metadata/namespace").cloned().unwrap_or_default();
            }
            let posted = kopf::posted_event(&reference, text("type"), text("reason"), text("message"), ctx.now);
            self.send_event(posted, ctx);
        }
    }

    fn send_event(&mut self, event: Value, ctx: &mut Ctx) {
        if !self.posting.enabled {
            return;
        }
        if let Ok(object) = Object::from_json(event) {
            let id = ctx.send(ApiRequest::Create(object));
            self.posts.insert(id);
        }
    }

    /// Posts a log line as kopf's posting does (with `settings.posting.loggers`, at its level
    /// or above); its answer is not waited for.
    fn post(&mut self, body: &Value, line: &LogLine, ctx: &mut Ctx) {
        if self.posting.posts_line(&line.level) {
            self.send_event(kopf::event_body(body, line, ctx.now), ctx);
        }
    }

    /// kopf's patch at the end of a cycle: the handlers' patch, results, progress, diff base
    /// and finalizer, then the cycle is done.
    fn write_back(&mut self, ctx: &mut Ctx) {
        let cycle = self.cycle.as_mut().expect("running");
        let mut patch = std::mem::replace(&mut cycle.patch, json!({}));
        let mut finalizer = cycle.bookkeeping_only;
        let mut lines = Vec::new();
        if cycle.reason != Reason::Timer && cycle.bookkeeping_only.is_none() {
            let handlers = &self.handlers;
            let key = cycle.work.key().clone();
            let cause_handlers: Vec<usize> = (0..handlers.len())
                .filter(|&i| handlers[i].reason == cycle.reason && handlers[i].resource.holds(&key) && handlers[i].selects(&cycle.body))
                .collect();
            let mut annotations = serde_json::Map::new();
            let (mut succeeded, mut failed, mut done) = (0, 0, true);
            for &i in &cause_handlers {
                let h = &handlers[i];
                let before = Progress::read(&cycle.body, &h.id).filter(|p| p.purpose.as_deref() == Some(cycle.reason.as_str()));
                let record = match cycle.outcomes.iter().find(|o| o.handler == i) {
                    Some(o) => {
                        if o.success && !o.result.is_null() {
                            requests::compose(&mut patch, &json!({"status": {h.id.clone(): o.result.clone()}}));
                        }
                        let retries = before.as_ref().map_or(0, |p| p.retries) + u32::from(!o.success);
                        Progress {
                            started: before.as_ref().and_then(|p| p.started.clone()).or_else(|| Some(kopf::iso(ctx.now))),
                            delayed: o.delay.map(|d| kopf::iso(ctx.now + Duration((d * 1000.0).round() as u64))),
                            purpose: Some(cycle.reason.as_str().into()),
                            retries,
                            success: o.success,
                            failure: o.final_ && !o.success,
                            message: o.message.clone(),
                        }
                    }
                    None => match before {
                        Some(p) => p,
                        None => {
                            done = false;
                            continue;
                        }
                    },
                };
                succeeded += usize::from(record.success);
                failed += usize::from(record.failure);
                done &= record.success || record.failure;
                if let Some(t) = record.delayed_until().filter(|_| !record.success && !record.failure) {
                    cycle.delayed_until = Some(cycle.delayed_until.map_or(t, |d| d.min(t)));
                }
                annotations.insert(Progress::annotation(&h.id), Value::from(record.encode()));
            }
            if done {
                // Purge the progress; keep the essence handled as the diff base.
                for &i in &cause_handlers {
                    let key = Progress::annotation(&handlers[i].id);
                    let present = cycle.body.pointer("/metadata/annotations").and_then(|a| a.get(&key)).is_some();
                    if present {
                        annotations.insert(key, Value::Null);
                    } else {
                        annotations.remove(&key);
                    }
                }
                match cycle.reason {
                    Reason::Delete => finalizer = Some(false),
                    _ => {
                        let essence = kopf::essence(&cycle.body);
                        if kopf::last_handled(&cycle.body).as_ref() != Some(&essence) {
                            annotations.insert(kopf::LAST_HANDLED.into(), Value::from(kopf::encode_essence(&essence)));
                        }
                    }
                }
                if !cause_handlers.is_empty() {
                    let title = cycle.reason.title();
                    let mut t = title.to_string();
                    t[..1].make_ascii_uppercase();
                    lines.push(LogLine::info(format!("{t} is processed: {succeeded} succeeded; {failed} failed.")));
                }
            }
            if !annotations.is_empty() {
                requests::compose(&mut patch, &json!({"metadata": {"annotations": Value::Object(annotations)}}));
            }
        }
        let body = cycle.body.clone();
        for line in lines {
            self.post(&body, &line, ctx);
        }
        let cycle = self.cycle.as_mut().expect("running");
        let empty = patch.as_object().is_none_or(|o| o.is_empty());
        if empty && finalizer.is_none() {
            let work = cycle.work.clone();
            let delayed = cycle.delayed_until;
            self.finish(work, delayed, ctx);
            return;
        }
        let key = cycle.work.key().clone();
        let op = PatchOp { key: key.clone(), patch, status: false, finalizer, attempts: 0, status_part: None, phase: PatchPhase::Read };
        let id = ctx.send(ApiRequest::Get(key));
        cycle.waiting = Some((id, Waiting::Final(op)));
    }

    /// The cycle is over: the key leaves the queue, comes back after a delay if a handler waits
    /// for one, and a timer is set again for its next interval.
    fn finish(&mut self, work: Work, delayed: Option<Time>, ctx: &mut Ctx) {
        let outcomes = self.cycle.take().map(|c| c.outcomes).unwrap_or_default();
        self.queue.done(&work);
        self.queue.forget(&work);
        if let Work::Timer(key, index) = &work {
            let alive = self
                .cached(key)
                .is_some_and(|b| b.pointer("/metadata/deletionTimestamp").is_none_or(Value::is_null) && self.handlers[*index].selects(&b));
            let stopped = outcomes.iter().any(|o| o.final_ && !o.success);
            if alive && !stopped {
                let h = &self.handlers[*index];
                let wait = match outcomes.first().and_then(|o| o.delay) {
                    Some(d) => Duration((d * 1000.0).round() as u64),
                    None => h.interval.unwrap_or(Duration::secs(60)),
                };
                self.timers.insert((key.clone(), *index), ctx.now + wait);
            }
            return;
        }
        if let Some(t) = delayed {
            self.queue.add_after(work, t.since(ctx.now).max(Duration::millis(1)), ctx.now);
        }
    }

    /// A request of the cycle was answered.
    fn answered(&mut self, id: RequestId, result: ApiResult, ctx: &mut Ctx) {
        let Some(cycle) = self.cycle.as_mut() else { return };
        let Some((waiting_id, waiting)) = cycle.waiting.take() else { return };
        if waiting_id != id {
            cycle.waiting = Some((waiting_id, waiting));
            return;
        }
        match waiting {
            Waiting::Handler => self.resume_handler(&result, ctx),
            Waiting::HandlerPatch(op) => match self.patch_step(op, result, ctx) {
                Ok((id, op)) => self.cycle.as_mut().expect("running").waiting = Some((id, Waiting::HandlerPatch(op))),
                Err(answer) => self.resume_with(answer, ctx),
            },
            Waiting::Final(op) => match self.patch_step(op, result, ctx) {
                Ok((id, op)) => self.cycle.as_mut().expect("running").waiting = Some((id, Waiting::Final(op))),
                Err(answer) => {
                    let cycle = self.cycle.as_ref().expect("running");
                    let (work, delayed) = (cycle.work.clone(), cycle.delayed_until);
                    let written = answer.pointer("/body/metadata/resourceVersion").and_then(Value::as_str).and_then(|v| v.parse().ok());
                    if let Some(rv) = written.filter(|_| answer.get("ok").and_then(Value::as_bool) == Some(true)) {
                        // kopf's consistency wait: the next look at this object waits for the
                        // cache to show this write, or it would call the handlers again.
                        self.written.insert(work.key().clone(), rv);
                        self.finish(work, delayed, ctx);
                    } else if answer.get("status").and_then(Value::as_u64) == Some(404) {
                        self.finish(work, delayed, ctx);
                    } else {
                        // The write failed: the handlers' work is not recorded, so the next look
                        // calls them again (level-triggered), after the queue's back-off.
                        self.cycle = None;
                        self.queue.done(&work);
                        self.queue.add_rate_limited(work, ctx.now);
                    }
                }
            },
        }
    }

    fn resume_handler(&mut self, result: &ApiResult, ctx: &mut Ctx) {
        self.resume_with(requests::answer(result), ctx);
    }

    /// Sends an answer to the suspended handler and follows it to its next request or its end.
    fn resume_with(&mut self, answer: Value, ctx: &mut Ctx) {
        let reply = match self.interpreter.exchange(&answer) {
            Ok(r) => r,
            Err(e) => return self.break_down(e),
        };
        if self.on_reply(reply, ctx) {
            self.advance(ctx);
        }
    }

    /// One step of a patch: after the read, the merged write; after the write, the status
    /// write if kopf's patch has a status part; a conflict reads again. `Ok` carries the next
    /// request; `Err` the final answer.
    fn patch_step(&mut self, mut op: PatchOp, result: ApiResult, ctx: &mut Ctx) -> Result<(RequestId, PatchOp), Value> {
        let object = match result {
            Err(e) if e.reason == ApiReason::Conflict && op.attempts < PATCH_ATTEMPTS => {
                op.attempts += 1;
                // Read again; after a conflicting status write only the status is written again.
                op.phase = if op.phase == PatchPhase::StatusWrite { PatchPhase::Write } else { PatchPhase::Read };
                let id = ctx.send(ApiRequest::Get(op.key.clone()));
                return Ok((id, op));
            }
            Err(e) => return Err(requests::failure(&e)),
            Ok(ApiResponse::Object(o)) => o,
            Ok(other) => return Err(requests::answer(&Ok(other))),
        };
        match op.phase {
            PatchPhase::Read => {
                let mut patch = op.patch.clone();
                if let Some(add) = op.finalizer {
                    let mut list: Vec<Value> = object.meta().finalizers.iter().map(|f| Value::from(f.to_string())).collect();
                    list.retain(|f| f.as_str() != Some(kopf::FINALIZER));
                    if add {
                        list.push(Value::from(kopf::FINALIZER));
                    }
                    requests::compose(&mut patch, &json!({"metadata": {"finalizers": list}}));
                }
                if !op.status {
                    op.status_part =
                        patch.as_object_mut().and_then(|p| p.remove("status")).filter(|s| s.as_object().is_some_and(|o| !o.is_empty()));
                }
                let updated = requests::patched(&object, &patch).map_err(|e| requests::failure(&e))?;
                op.phase = PatchPhase::Write;
                let request = if op.status { ApiRequest::UpdateStatus(updated) } else { ApiRequest::Update(updated) };
                Ok((ctx.send(request), op))
            }
            PatchPhase::Write => {
                let Some(status) = op.status_part.clone() else { return Err(requests::answer(&Ok(ApiResponse::Object(object)))) };
                let updated = requests::patched(&object, &json!({"status": status})).map_err(|e| requests::failure(&e))?;
                // A kind whose status has no such field drops it, as the API server's decoder does.
                if updated.to_json().get("status") == object.to_json().get("status") {
                    return Err(requests::answer(&Ok(ApiResponse::Object(object))));
                }
                op.phase = PatchPhase::StatusWrite;
                Ok((ctx.send(ApiRequest::UpdateStatus(updated)), op))
            }
            PatchPhase::StatusWrite => Err(requests::answer(&Ok(ApiResponse::Object(object)))),
        }
    }
}

fn seconds_text(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{}", s as i64)
    } else {
        format!("{s}")
    }
}

/// `Deployment default/web`, `Website default/shop`: the object a cycle is about (its body
/// names a custom resource's kind), for its last action.
fn display_key(body: &Value, key: &ObjectKey) -> String {
    let kind = body.get("kind").and_then(Value::as_str).unwrap_or(key.kind.as_str());
    if key.namespace.is_empty() {
        format!("{kind} {}", key.name)
    } else {
        format!("{kind} {}/{}", key.namespace, key.name)
    }
}

impl Component for Operator {
    fn name(&self) -> String {
        format!("operator/{}", self.name)
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.now = ctx.now;
        self.queue.clear();
        self.cycle = None;
        self.timers.clear();
        self.seen.clear();
        self.posts.clear();
        self.written.clear();
        self.last_delta = None;
        self.broken = None;
        if !std::mem::take(&mut self.fresh) {
            // A restarted process: the interpreter starts over and loads the file again.
            match self
                .interpreter
                .load()
                .and_then(|ready| super::registration(&ready, &self.definitions).map(|_| Posting::from_ready(&ready)))
            {
                Ok(posting) => self.posting = posting,
                Err(e) => {
                    self.break_down(e);
                    return;
                }
            }
        }
        for informer in &mut self.informers {
            informer.start(ctx);
        }
    }

    fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) {
        self.now = ctx.now;
        if self.posts.remove(&id) {
            return;
        }
        if let Some(i) = self.informers.iter().position(|i| i.owns_request(id)) {
            let deltas = self.informers[i].handle_response(ctx, id, result);
            self.dispatch(deltas);
            return;
        }
        self.answered(id, result, ctx);
    }

    fn handle_watch_event(&mut self, ctx: &mut Ctx, watch: WatchId, event: WatchEvent) {
        self.now = ctx.now;
        let delta = self.informers.iter_mut().find(|i| i.owns_watch(watch)).and_then(|i| i.handle_watch_event(event));
        if let Some(delta) = delta {
            self.dispatch(vec![delta]);
        }
    }

    fn handle_watch_closed(&mut self, ctx: &mut Ctx, watch: WatchId) {
        self.now = ctx.now;
        for informer in &mut self.informers {
            informer.handle_watch_closed(ctx.now, watch);
        }
    }

    fn poll(&mut self, ctx: &mut Ctx) {
        self.now = ctx.now;
        for informer in &mut self.informers {
            informer.poll(ctx);
        }
        self.work(ctx);
    }

    fn next_wakeup(&self) -> Option<Time> {
        let informers = self.informers.iter().filter_map(Informer::next_wakeup);
        if self.broken.is_some() {
            return informers.min();
        }
        let ready = self.cycle.is_none() && !self.queue.is_empty() && self.synced();
        let timers = self.timers.values().copied().min();
        // A look once the observe glow is over, so the stage sees it end (nothing is sent).
        let glow_ends = self.last_delta.map(|t| t + OBSERVE_GLOW + Duration::millis(1)).filter(|t| *t > self.now);
        informers.chain(self.queue.next_due()).chain(timers).chain(ready.then_some(self.now)).chain(glow_ends).min()
    }

    fn is_busy(&self) -> bool {
        if self.broken.is_some() {
            return false;
        }
        self.informers.iter().any(|i| !i.is_watching())
            || !self.queue.is_empty()
            || self.cycle.as_ref().is_some_and(|c| !matches!(c.work, Work::Timer(..)))
    }

    fn loops(&self) -> Vec<LoopStatus> {
        let mut status = self.status.clone();
        status.queue_depth = self.queue.len() + usize::from(self.cycle.is_some());
        status.phase = if self.cycle.as_ref().is_some_and(|c| c.waiting.is_some()) {
            LoopPhase::Act
        } else if self.cycle.is_some() || !self.queue.is_empty() {
            LoopPhase::Compare
        } else if self.last_delta.is_some_and(|t| self.now.since(t) <= OBSERVE_GLOW) {
            LoopPhase::Observe
        } else {
            LoopPhase::Idle
        };
        vec![status]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// An interpreter that plays a fixed handler: on a call it reads the object, then labels it
    /// through `patch` and returns a result. It records every message it was sent.
    struct Scripted {
        seen: Rc<RefCell<Vec<Value>>>,
    }

    impl Interpreter for Scripted {
        fn load(&mut self) -> Result<Value, String> {
            Ok(json!({"op": "ready", "handlers": [
                {"id": "mark", "reason": "create", "group": "", "version": "v1", "name": "configmaps", "labels": {"mark": "*present*"}}
            ]}))
        }
        fn exchange(&mut self, message: &Value) -> Result<Value, String> {
            self.seen.borrow_mut().push(message.clone());
            Ok(match message["op"].as_str() {
                Some("call") => {
                    let meta = &message["kwargs"]["body"]["metadata"];
                    json!({"op": "request", "verb": "get", "group": "", "version": "v1", "plural": "configmaps",
                        "namespace": meta["namespace"], "name": meta["name"]})
                }
                _ => json!({"op": "done", "outcome": "success", "result": {"read": message["body"]["metadata"]["name"]},
                    "patch": {"metadata": {"labels": {"marked": "yes"}}}, "logs": [], "events": []}),
            })
        }
    }

    #[test]
    fn a_handlers_request_travels_with_latency_and_its_answer_resumes_it() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let mut s = Session::new(Scenario::empty(), Some(1)).unwrap();
        s.sim_mut().add_operator("marker", Box::new(Scripted { seen: seen.clone() })).unwrap();
        assert!(s.sim_mut().add_operator("marker", Box::new(Scripted { seen: seen.clone() })).is_err(), "one name, one operator");
        s.set_file_reader(|_| Ok("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {mark: x}}\n".into()));
        assert!(s.execute("kubectl apply -f a.yaml").ok);
        s.settle(Duration::secs(10)).unwrap();
        let key = ObjectKey::new(crate::model::Kind::ConfigMap, "default", "a");
        let cm = s.sim().api().get(&key).unwrap().clone();
        assert_eq!(cm.meta().labels.get("marked").map(|v| v.as_ref()), Some("yes"));
        assert!(cm.meta().annotations.contains_key(kopf::LAST_HANDLED));
        let messages = seen.borrow();
        // One call, and the answer to its read: the object as the server had it.
        assert_eq!(messages.iter().filter(|m| m["op"] == "call").count(), 1, "{messages:?}");
        let call = &messages[0];
        assert_eq!((call["kwargs"]["reason"].as_str(), call["budget"].as_u64()), (Some("create"), Some(STEP_BUDGET)));
        assert_eq!(messages[1]["op"], "answer");
        assert_eq!(messages[1]["body"]["metadata"]["name"], "a");
        // The read left when the handler asked, and its answer came back later in simulated time.
        let trace: Vec<_> = s.sim().trace().recent().filter(|m| m.from == "operator/marker" || m.to == "operator/marker").collect();
        let get = trace.iter().find(|m| m.what == "get configmap/default/a").expect("the handler's read");
        assert!(get.arrives > get.sent, "a request takes its latency");
        assert!(trace.iter().any(|m| m.what == "update configmap/default/a"), "kopf's patch");
    }

    #[test]
    fn an_interpreter_that_fails_leaves_the_operator_idle_with_the_error() {
        struct Dead;
        impl Interpreter for Dead {
            fn load(&mut self) -> Result<Value, String> {
                Ok(json!({"op": "ready", "handlers": [{"id": "f", "reason": "create", "name": "configmaps"}]}))
            }
            fn exchange(&mut self, _: &Value) -> Result<Value, String> {
                Err("python3 exited (signal 9)".into())
            }
        }
        let mut s = Session::new(Scenario::empty(), Some(1)).unwrap();
        s.sim_mut().add_operator("dead", Box::new(Dead)).unwrap();
        assert!(s.execute("kubectl create configmap x").ok);
        s.settle(Duration::secs(10)).unwrap();
        let id = crate::sim::ComponentId::Operator("dead".into());
        let status = &s.sim().loops(&id)[0];
        assert_eq!(status.last_action, "interpreter failed: python3 exited (signal 9)");
        assert!(s.sim().violations().is_empty());
    }
}
