//! The engine attached to a Kubernetes API (`?cluster=PATH`): it lists and watches the cluster
//! through requests the page makes for it, mirrors what it sees into a simulation that runs no
//! loop, and tells each change in story mode's caption, attributed to the loop that made it.
//!
//! It exists so that the page keeps one drawing path: the views read a `Sim` whichever way its
//! objects got there ([`crate::sim::Sim::observe`]). What is particular to a cluster seen from
//! outside lives here and in [`crate::view::attach`]: which requests to make and when (a list,
//! then a watch streamed as JSON lines from its resourceVersion; a list again after `410 Gone`
//! or when the stream ends), the queue of changes seen, and their pacing. A pod's replacement is
//! created, bound and started within a few milliseconds on a real cluster too, so in story mode
//! the stage shows the changes one by one, each held long enough to read its caption (the page
//! runs a few seconds behind the cluster during a burst, and says so); with story mode off it
//! shows them as they come.
//!
//! The page's controls send what kubectl sends: Kill is `DELETE` of the pod (as `kubectl delete
//! pod`), the replicas box a merge `PATCH` of the Deployment's `scale` subresource (as `kubectl
//! scale`), and a refusal is printed as kubectl prints it.
//!
//! Nothing here names a browser type: the page makes the requests [`Engine::attach_requests`]
//! hands it and brings back what they answered.

use super::{Action, CommandEntry, Engine, Mode, COMMANDS_KEPT};
use crate::command::Session;
use crate::model::{Kind, ObjectKey, Time};
use crate::view::attach::{self as view, ChangeType, Hearsay, Observed, WatchLine};
use crate::view::loops::ComponentView;
use crate::view::story::{hold_ms, Caption};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A request the page makes for the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: u64,
    pub method: &'static str,
    pub url: String,
    pub body: Option<String>,
    pub content_type: Option<&'static str>,
    /// A watch: the answer is read line by line as it streams ([`Engine::attach_line`]) until
    /// it ends ([`Engine::attach_ended`]); otherwise it is read whole ([`Engine::attach_answer`]).
    pub stream: bool,
}

/// What the attached page shows about the attachment itself.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AttachedView {
    /// The API's path on this origin (`/`).
    pub cluster: String,
    /// How the page reads it, in a line: `watching 7 kinds`, or what went wrong.
    pub status: String,
    /// The captions told, newest first.
    pub told: Vec<String>,
    /// Changes seen and not yet shown (story mode shows one at a time).
    pub behind: usize,
}

/// The caption strip before the first change: what it will show.
const WATCHING: &str = "Watching: each change is told here with the loop that made it.";

/// Captions kept in the list under the stage.
const TOLD_KEPT: usize = 12;
/// Past this many waiting changes the stage catches up at once instead of telling each: a
/// large cluster changes faster than anyone reads.
const CATCH_UP: usize = 300;
/// Wall milliseconds before a list or watch that failed is tried again.
const RETRY_MS: f64 = 2000.0;
/// The kinds watched as streams. A browser opens at most six HTTP/1.1 connections to one server
/// (`kubectl proxy` serves HTTP/1.1), and each open watch holds one: seven watches would leave a
/// kind unwatched and the Kill button's request waiting behind them. So the kinds whose every
/// step a story tells are streamed, and the rest are listed again every [`RELIST_MS`].
const WATCHED: [Kind; 3] = [Kind::Node, Kind::Pod, Kind::Event];
/// Wall milliseconds between lists of a kind that is not watched.
const RELIST_MS: f64 = 2000.0;

/// Where the page is with one kind.
#[derive(Clone, Debug, PartialEq)]
enum Stage {
    /// To be listed (at once, or from `retry_at`).
    Idle {
        retry_at: f64,
    },
    Listing(u64),
    Watching(u64),
}

#[derive(Debug)]
struct KindState {
    kind: Kind,
    stage: Stage,
    /// The resourceVersion the next watch starts from.
    resource_version: String,
    /// Listed once already: a later list is a re-list, whose differences are told.
    listed: bool,
}

/// A write the page sent, remembered until it is answered, to print its outcome.
#[derive(Clone, Debug)]
struct Write {
    /// The kubectl line it stands for.
    line: String,
    verb: &'static str,
    resource: &'static str,
    name: String,
    /// What kubectl prints when it succeeds.
    done: String,
}

/// The attachment's state.
#[derive(Debug)]
pub(crate) struct Attach {
    base: String,
    kinds: Vec<KindState>,
    next_id: u64,
    /// By request id; a few at most (a Vec: a map of its own would cost the page its code).
    writes: Vec<(u64, Write)>,
    /// Requests decided but not yet handed to the page.
    outgoing: Vec<Request>,
    queue: VecDeque<Observed>,
    heard: Hearsay,
    /// Each caption told: its box, its words, when (simulated ms).
    acted: Vec<(String, String, u64)>,
    /// What each loop last reported in an Event before the page looked (its box's first words).
    reported: Vec<(String, String, u64)>,
    caption: Option<Caption>,
    /// Wall time until which the caption on show holds the next change back.
    hold_until: f64,
    /// The cluster's own resourceVersion of each stored object, to tell a re-list's changes.
    versions: BTreeMap<ObjectKey, String>,
    /// The cluster's time at the page's wall time `anchor.1` (inferred from the newest
    /// timestamp observed, then moved on with the wall clock).
    anchor: (u64, Option<f64>),
    problem: Option<String>,
}

impl Attach {
    fn new(base: &str) -> Attach {
        Attach {
            base: base.to_string(),
            kinds: view::KINDS
                .iter()
                .map(|&kind| KindState { kind, stage: Stage::Idle { retry_at: 0.0 }, resource_version: String::new(), listed: false })
                .collect(),
            next_id: 0,
            writes: Vec::new(),
            outgoing: Vec::new(),
            queue: VecDeque::new(),
            heard: Hearsay::default(),
            acted: Vec::new(),
            reported: Vec::new(),
            caption: None,
            hold_until: f64::NEG_INFINITY,
            versions: BTreeMap::new(),
            anchor: (0, None),
            problem: None,
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The lists and watches due at wall time `ts`.
    fn due(&mut self, ts: f64) {
        for i in 0..self.kinds.len() {
            let Stage::Idle { retry_at } = self.kinds[i].stage else { continue };
            if ts < retry_at {
                continue;
            }
            let id = self.id();
            let k = &mut self.kinds[i];
            k.stage = Stage::Listing(id);
            let url = view::collection_path(&self.base, k.kind);
            self.outgoing.push(Request { id, method: "GET", url, body: None, content_type: None, stream: false });
        }
    }

    fn watch(&mut self, i: usize, ts: f64) {
        if !WATCHED.contains(&self.kinds[i].kind) {
            self.kinds[i].stage = Stage::Idle { retry_at: ts + RELIST_MS };
            return;
        }
        let id = self.id();
        let k = &mut self.kinds[i];
        k.stage = Stage::Watching(id);
        let url = view::watch_url(&self.base, k.kind, &k.resource_version);
        self.outgoing.push(Request { id, method: "GET", url, body: None, content_type: None, stream: true });
    }

    fn kind_of(&self, id: u64) -> Option<usize> {
        self.kinds.iter().position(|k| matches!(k.stage, Stage::Listing(i) | Stage::Watching(i) if i == id))
    }

    /// Hears an Event at once (attribution may need it before the stage shows it), and queues
    /// every change.
    fn seen(&mut self, observed: Observed) {
        if let Some(event) = observed.object.as_event() {
            self.heard.hear(event);
        }
        self.queue.push_back(observed);
    }

    fn status(&self) -> String {
        if let Some(p) = &self.problem {
            return p.clone();
        }
        if self.kinds.iter().all(|k| k.listed) {
            "watching nodes, pods and events; listing the other kinds every 2 s".to_string()
        } else {
            let listed = self.kinds.iter().filter(|k| k.listed).count();
            format!("listing the cluster: {listed} of {} kinds", self.kinds.len())
        }
    }
}

/// The newest time an object carries that is not in the future: its creation, or an Event's
/// last report.
fn stamp(observed: &Observed) -> Option<Time> {
    let created = observed.object.meta().creation_timestamp;
    let reported = observed.object.as_event().and_then(|e| e.last_timestamp);
    created.max(reported)
}

impl Engine {
    /// An engine attached to the Kubernetes API at `base` on the page's origin: an empty
    /// simulation that runs nothing, fed with what the page observes.
    #[inline(never)]
    pub(crate) fn attached(base: &str) -> Engine {
        let mut engine = Engine::with_session(Session::from_sim(crate::sim::Sim::empty(0)), format!("cluster {base}"));
        engine.attach = Some(Box::new(Attach::new(base)));
        engine.hints = None;
        engine.story.quiet = false;
        engine
    }

    /// Whether the page draws a cluster it does not run.
    pub fn is_attached(&self) -> bool {
        self.attach.is_some()
    }

    /// The requests to make now (`ts`: the frame's wall time). Empty when not attached.
    #[inline(never)]
    pub fn attach_requests(&mut self, ts: f64) -> Vec<Request> {
        let Some(a) = self.attach.as_mut() else { return Vec::new() };
        a.due(ts);
        std::mem::take(&mut a.outgoing)
    }

    /// A whole answer to request `id`: a list, a write, or a watch the server refused.
    #[inline(never)]
    /// Shown at the next frame, as everything the page brings back.
    pub fn attach_answer(&mut self, id: u64, code: u16, content_type: &str, body: &str) {
        let ts = self.clock_ts();
        let Some(a) = self.attach.as_mut() else { return };
        if let Some(at) = a.writes.iter().position(|(w, _)| *w == id) {
            let (_, write) = a.writes.swap_remove(at);
            return self.written(write, code, content_type, body);
        }
        let Some(i) = a.kind_of(id) else { return };
        let kind = a.kinds[i].kind;
        let ok = (200..300).contains(&code);
        if matches!(a.kinds[i].stage, Stage::Watching(_)) {
            // A watch answered with an error instead of a stream: list again.
            a.kinds[i].stage = Stage::Idle { retry_at: 0.0 };
            if code != 410 {
                a.problem = Some(format!(
                    "watching {}: {}",
                    kind.plural(),
                    view::server_error(code, content_type, body, "watch", kind.plural(), "")
                ));
            }
            return;
        }
        let listed =
            if ok { view::read_list(kind, body) } else { Err(view::server_error(code, content_type, body, "list", kind.plural(), "")) };
        match listed {
            Ok((items, rv)) => {
                a.kinds[i].resource_version = rv;
                a.problem = None;
                let first = !std::mem::replace(&mut a.kinds[i].listed, true);
                a.watch(i, ts);
                self.relisted(kind, items, first);
            }
            Err(e) => {
                a.problem = Some(format!("listing {}: {e}", kind.plural()));
                a.kinds[i].stage = Stage::Idle { retry_at: ts + RETRY_MS };
            }
        }
    }

    /// The wall time of the last frame (for retries).
    fn clock_ts(&self) -> f64 {
        self.attach.as_ref().and_then(|a| a.anchor.1).unwrap_or(0.0)
    }

    /// A list of `kind`: the first is stored at once and told nothing (it is the picture to start
    /// from); a re-list's differences from what is stored are queued as changes.
    fn relisted(&mut self, kind: Kind, items: Vec<Observed>, first: bool) {
        let Some(a) = self.attach.as_ref() else { return };
        let listed: BTreeSet<ObjectKey> = items.iter().map(view::key_of).collect();
        let gone: Vec<ObjectKey> =
            self.session.sim().objects(kind).map(|o| o.key()).filter(|k| !listed.contains(k) && a.versions.contains_key(k)).collect();
        for item in items {
            let key = view::key_of(&item);
            let Some(a) = self.attach.as_mut() else { return };
            if first {
                if let Some(e) = item.object.as_event() {
                    a.heard.hear(e);
                }
                a.versions.insert(key, item.resource_version.clone());
                if let Some(t) = stamp(&item) {
                    a.anchor.0 = a.anchor.0.max(t.0);
                }
                self.session.sim_mut().observe(item.object);
                continue;
            }
            if a.versions.get(&key) != Some(&item.resource_version) {
                let change = if a.versions.contains_key(&key) { ChangeType::Modified } else { ChangeType::Added };
                a.seen(Observed { change, ..item });
            }
        }
        for key in gone {
            if let Some(object) = self.session.sim().api().etcd.get(&key).map(|o| (**o).clone()) {
                let a = self.attach.as_mut().expect("attached");
                a.seen(Observed { change: ChangeType::Deleted, object, resource_version: String::new(), manager: None });
            }
        }
        if kind == Kind::Deployment {
            self.pick_deployment();
        }
        if first && kind == Kind::Event {
            self.seed_boxes();
        }
        self.events_dirty = true;
    }

    /// Each box's detail before anything changes: the newest Event its loop reported, so a page
    /// opened on a quiet cluster still says what each loop did last (by its own report).
    fn seed_boxes(&mut self) {
        let mut reported: Vec<(u64, String, String)> = self
            .session
            .sim()
            .objects(Kind::Event)
            .filter_map(|o| o.as_event())
            .filter_map(|e| {
                let who = view::reporter_box(&e.reporting_component, &e.reporting_instance)
                    .or_else(|| view::reporter_box(&e.source.component, &e.source.host))?;
                let at = e.last_timestamp.or(e.metadata.creation_timestamp).map_or(0, |t| t.0);
                Some((at, who, format!("last reported: {} {} ({})", e.reason, e.involved_object.name, e.message)))
            })
            .collect();
        crate::sort::sort_by_key(&mut reported, |r| r.0);
        if let Some(a) = self.attach.as_mut() {
            a.reported = reported.into_iter().map(|(at, who, text)| (who, text, at)).collect();
        }
    }

    /// One line of the watch answering request `id`.
    #[inline(never)]
    pub fn attach_line(&mut self, id: u64, line: &str) {
        let Some(a) = self.attach.as_mut() else { return };
        let Some(i) = a.kind_of(id) else { return };
        if line.trim().is_empty() {
            return;
        }
        match view::read_watch_line(a.kinds[i].kind, line) {
            Ok(WatchLine::Change(seen)) => {
                a.kinds[i].resource_version = seen.resource_version.clone();
                a.seen(*seen);
            }
            Ok(WatchLine::Bookmark(rv)) => a.kinds[i].resource_version = rv,
            // Too old: list again (the page's picture stays until the list's differences come).
            Ok(WatchLine::Gone) => a.kinds[i].stage = Stage::Idle { retry_at: 0.0 },
            Ok(WatchLine::Failed(message)) => {
                a.problem = Some(format!("watching {}: {message}", a.kinds[i].kind.plural()));
                a.kinds[i].stage = Stage::Idle { retry_at: 0.0 };
            }
            Err(e) => a.problem = Some(e),
        }
    }

    /// The watch answering request `id` ended: watched again from where it was (a server ends
    /// watches after a while), or, if it failed, listed again after a pause.
    #[inline(never)]
    pub fn attach_ended(&mut self, id: u64, failure: Option<String>) {
        let ts = self.clock_ts();
        let Some(a) = self.attach.as_mut() else { return };
        let Some(i) = a.kind_of(id) else { return };
        match failure {
            None if !a.kinds[i].resource_version.is_empty() => a.watch(i, ts),
            None => a.kinds[i].stage = Stage::Idle { retry_at: 0.0 },
            Some(e) => {
                a.problem = Some(format!("watching {}: {e}; listing again", a.kinds[i].kind.plural()));
                a.kinds[i].stage = Stage::Idle { retry_at: ts + RETRY_MS };
            }
        }
    }

    /// A frame of the attached page: the cluster's time moves on with the wall clock, and the
    /// changes seen are shown — in story mode one at a time, each held for its caption.
    #[inline(never)]
    pub(crate) fn attach_frame(&mut self, ts: f64) -> Option<std::rc::Rc<super::Snapshot>> {
        let paced = self.story.on;
        let speed = self.clock.speed;
        let paused = self.clock.mode == Mode::Paused;
        let a = self.attach.as_mut()?;
        let (at, since) = a.anchor;
        let now = Time(at + since.map(|s| (ts - s).max(0.0) as u64).unwrap_or(0));
        a.anchor = (now.0, Some(ts));
        self.session.sim_mut().observe_time(now);
        if !paused {
            self.show_seen(ts, paced, speed, usize::MAX);
        }
        self.publish()
    }

    /// Shows changes from the queue: all of them (story mode off, or a backlog past
    /// [`CATCH_UP`]), or up to the next that makes a caption, which then holds the rest back.
    fn show_seen(&mut self, ts: f64, paced: bool, speed: f64, most: usize) {
        let mut shown = 0;
        loop {
            let Some(a) = self.attach.as_mut() else { return };
            let catch_up = !paced || a.queue.len() > CATCH_UP;
            if shown >= most || (!catch_up && ts < a.hold_until) {
                return;
            }
            let Some(seen) = a.queue.pop_front() else { return };
            shown += 1;
            if let Some(caption) = self.show(seen) {
                let a = self.attach.as_mut().expect("attached");
                if !catch_up {
                    a.hold_until = ts + hold_ms(&caption) / speed.max(0.01);
                    return;
                }
            }
        }
    }

    /// Stores one change and tells it: the caption, if it is a step of a story.
    fn show(&mut self, seen: Observed) -> Option<Caption> {
        let key = view::key_of(&seen);
        let prev = self.session.sim().api().etcd.get(&key).cloned();
        let a = self.attach.as_mut()?;
        let caption = view::attribute(prev.as_deref(), &seen, &a.heard);
        if let Some(t) = stamp(&seen).filter(|t| t.0 > a.anchor.0) {
            a.anchor.0 = t.0;
        }
        let now = self.session.sim().now().0.max(a.anchor.0);
        if seen.change == ChangeType::Deleted {
            a.versions.remove(&key);
            self.session.sim_mut().observe_deleted(&key);
        } else {
            a.versions.insert(key, seen.resource_version.clone());
            self.session.sim_mut().observe(seen.object);
        }
        let a = self.attach.as_mut()?;
        let caption = caption?;
        a.acted.push((caption.component.clone(), caption.text.clone(), now));
        let extra = a.acted.len().saturating_sub(200);
        a.acted.drain(..extra);
        a.caption = Some(caption.clone());
        self.events_dirty = true;
        Some(caption)
    }

    /// A control on the attached page: Kill and the replicas box send kubectl's requests; the
    /// clock controls pace the changes seen; what only a simulation can do is refused.
    /// Returns None for actions that behave as on a simulated page (selection, filters), else
    /// what changed.
    #[inline(never)]
    pub(crate) fn attach_act(&mut self, action: &Action) -> Option<Option<std::rc::Rc<super::Snapshot>>> {
        match action {
            Action::Kill => {
                if let Some((ns, name)) = self.selected.clone() {
                    self.send_write(
                        "DELETE",
                        view::object_path(self.attach_base(), Kind::Pod, &ns, &name),
                        r#"{"propagationPolicy":"Background"}"#.into(),
                        "application/json",
                        Write {
                            line: crate::view::page::kill_command(&ns, &name),
                            verb: "delete",
                            resource: "pods",
                            done: format!("pod \"{name}\" deleted"),
                            name,
                        },
                    );
                }
            }
            Action::Scale(n) => self.scale(&n.max(&0).to_string()),
            Action::Command(line) => match scale_value(line) {
                Some(value) => self.scale(&value),
                None => self.report(attached_refusal(line)),
            },
            Action::Step => {
                self.clock.mode = Mode::Paused;
                let ts = self.clock_ts();
                self.show_seen(ts, true, self.clock.speed, 1);
                if let Some(a) = self.attach.as_mut() {
                    a.hold_until = f64::NEG_INFINITY;
                }
            }
            Action::FastForward => {
                let ts = self.clock_ts();
                self.show_seen(ts, false, self.clock.speed, usize::MAX);
            }
            Action::Play | Action::Pause | Action::Speed(_) | Action::ToggleStory => return None,
            Action::Select(..) | Action::Deselect | Action::Pin(_) | Action::FilterObject(_) | Action::FilterComponent(_) => return None,
            Action::ToggleHints | Action::DismissErrors => return None,
            Action::Console(line) => self.report(attached_refusal(line)),
            _ => self.report(attached_refusal("that control")),
        }
        Some(self.publish())
    }

    fn attach_base(&self) -> &str {
        self.attach.as_ref().map(|a| a.base.as_str()).unwrap_or("/")
    }

    /// `kubectl scale deployment NAME --replicas=VALUE` as kubectl sends it: a merge patch of
    /// the scale subresource. A value that is not a whole number gets kubectl's flag error.
    fn scale(&mut self, value: &str) {
        let (ns, name) = (self.gap.namespace().to_string(), self.gap.name().to_string());
        let line = crate::view::page::scale_command(&ns, &name, 0).replacen("--replicas=0", &format!("--replicas={value}"), 1);
        let Ok(n) = value.parse::<i32>() else {
            let message =
                format!("invalid argument \"{value}\" for \"--replicas\" flag: strconv.ParseInt: parsing \"{value}\": invalid syntax");
            return self.log_write(&line, &format!("error: {message}"), false);
        };
        let path = format!("{}/scale", view::object_path(self.attach_base(), Kind::Deployment, &ns, &name));
        let write = Write { line, verb: "patch", resource: "deployments", done: format!("deployment.apps/{name} scaled"), name };
        self.send_write("PATCH", path, format!("{{\"spec\":{{\"replicas\":{n}}}}}"), "application/merge-patch+json", write);
    }

    fn send_write(&mut self, method: &'static str, url: String, body: String, content_type: &'static str, write: Write) {
        let Some(a) = self.attach.as_mut() else { return };
        let id = a.id();
        a.writes.push((id, write));
        a.outgoing.push(Request { id, method, url, body: Some(body), content_type: Some(content_type), stream: false });
    }

    /// A write's answer: kubectl's line for it in the command log, and a refusal in the banner.
    fn written(&mut self, write: Write, code: u16, content_type: &str, body: &str) {
        if (200..300).contains(&code) {
            self.log_write(&write.line, &write.done, true);
        } else {
            let error = view::server_error(code, content_type, body, write.verb, write.resource, &write.name);
            self.log_write(&write.line, &error, false);
            self.report(error);
        }
    }

    fn log_write(&mut self, line: &str, output: &str, ok: bool) {
        self.command_seq += 1;
        self.commands.push_front(CommandEntry { seq: self.command_seq, line: line.to_string(), output: output.to_string(), ok });
        self.commands.truncate(COMMANDS_KEPT);
        if !ok && output.starts_with("error:") {
            self.report(output.to_string());
        }
    }

    /// The snapshot `built` as the attached page shows it: the boxes a cluster shows from
    /// outside, the caption of the change shown last, and the attachment's own line.
    #[inline(never)]
    pub(crate) fn attach_dress(&self, built: std::rc::Rc<super::Snapshot>) -> std::rc::Rc<super::Snapshot> {
        let Some((components, caption, view)) = self.attach_views() else { return built };
        let old = &self.snapshot;
        let mut s = (*built).clone();
        s.components = if *old.components == components { old.components.clone() } else { std::rc::Rc::new(components) };
        s.caption = match (caption, &old.caption) {
            (Some(c), Some(o)) if **o == c => Some(o.clone()),
            (c, _) => c.map(std::rc::Rc::new),
        };
        s.attached = Some(match &old.attached {
            Some(o) if **o == view => o.clone(),
            _ => std::rc::Rc::new(view),
        });
        std::rc::Rc::new(s)
    }

    /// The attachment's boxes, caption and line for the snapshot.
    fn attach_views(&self) -> Option<(Vec<ComponentView>, Option<Caption>, AttachedView)> {
        let a = self.attach.as_ref()?;
        let nodes: Vec<String> = self.session.sim().objects(Kind::Node).map(|o| o.meta().name.to_string()).collect();
        let boxes: Vec<(String, String, u64)> = a.reported.iter().chain(&a.acted).cloned().collect();
        let components = view::components(&a.base, &nodes, &boxes);
        let told = a.acted.iter().rev().take(TOLD_KEPT).map(|(_, text, _)| text.clone()).collect();
        let shown = AttachedView { cluster: a.base.clone(), status: a.status(), told, behind: a.queue.len() };
        // Before anything is seen, the strip says what it is for (naming no box, as the intro does).
        let caption = a.caption.clone().unwrap_or_else(|| Caption { text: WATCHING.to_string(), ..Caption::default() });
        Some((components, Some(caption).filter(|_| self.story.on), shown))
    }
}

/// The `--replicas` value of a `kubectl scale` line the replicas box made.
fn scale_value(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("kubectl scale ")?;
    let value = rest.split_whitespace().find_map(|w| w.strip_prefix("--replicas="))?;
    Some(value.trim_matches('\'').to_string())
}

/// Why a control that needs the simulation does nothing on an attached page.
fn attached_refusal(what: &str) -> String {
    format!("error: {what}: this page draws a real cluster; use your own kubectl")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attached() -> Engine {
        let (params, errors) = crate::view::page::parse_query("?cluster=/");
        assert!(errors.is_empty());
        Engine::new(params, errors)
    }

    fn pod(name: &str, rv: &str, node: Option<&str>, running: bool) -> serde_json::Value {
        let mut p = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": rv, "creationTimestamp": "2026-01-01T00:00:10Z",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-97f4f98bc", "uid": "u", "controller": true}]},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2"}]}, "status": {"phase": if running { "Running" } else { "Pending" }}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        if running {
            p["status"]["containerStatuses"] = json!([{"name": "nginx", "ready": true, "restartCount": 0, "image": "nginx:1.14.2", "imageID": "", "state": {"running": {}}}]);
            p["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        }
        p
    }

    fn list(kind: &str, items: Vec<serde_json::Value>, rv: &str) -> String {
        json!({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": rv}, "items": items}).to_string()
    }

    /// Answers every list the engine asks for: nodes, one running pod, the rest empty.
    fn answer_lists(e: &mut Engine, reqs: &[Request]) -> BTreeMap<&'static str, u64> {
        let mut watches = BTreeMap::new();
        for r in reqs {
            let (kind, items) = match r.url.as_str() {
                "/api/v1/nodes" => ("NodeList", vec![json!({"metadata": {"name": "node-1"}}), json!({"metadata": {"name": "node-2"}})]),
                "/api/v1/pods" => ("PodList", vec![pod("web-97f4f98bc-aaaaa", "5", Some("node-1"), true)]),
                "/api/v1/events" => (
                    "EventList",
                    vec![json!({"metadata": {"name": "e1", "namespace": "default"}, "reason": "Scheduled",
                    "involvedObject": {"kind": "Pod", "name": "web-97f4f98bc-aaaaa", "namespace": "default"},
                    "message": "Successfully assigned default/web-97f4f98bc-aaaaa to node-1",
                    "reportingComponent": "default-scheduler", "source": {"component": "default-scheduler"}})],
                ),
                _ => ("List", vec![]),
            };
            assert_eq!((r.method, r.stream), ("GET", false), "{r:?}");
            e.attach_answer(r.id, 200, "application/json", &list(kind, items, "10"));
        }
        for w in e.attach_requests(0.0) {
            assert!(w.stream && w.url.contains("?watch=1&resourceVersion=10&allowWatchBookmarks=true"), "{w:?}");
            let kind = view::KINDS
                .iter()
                .find(|k| w.url.ends_with(&format!("/{}?watch=1&resourceVersion=10&allowWatchBookmarks=true", k.plural())))
                .expect("a kind");
            watches.insert(kind.plural(), w.id);
        }
        watches
    }

    #[test]
    fn an_attached_page_lists_then_watches_and_tells_a_replacement_one_change_at_a_time() {
        let mut e = attached();
        assert!(e.is_attached());
        let lists = e.attach_requests(0.0);
        assert_eq!(lists.len(), 7, "{lists:?}");
        assert_eq!(lists[0].url, "/api/v1/nodes");
        let watches = answer_lists(&mut e, &lists);
        // Three streams, so a browser's six connections to the server leave room for the rest.
        assert_eq!(watches.keys().copied().collect::<Vec<_>>(), ["events", "nodes", "pods"]);
        assert!(e.attach_requests(1000.0).is_empty(), "the other kinds are listed again later");
        let again: Vec<String> = e.attach_requests(2500.0).into_iter().map(|r| r.url).collect();
        assert_eq!(
            again,
            ["/apis/apps/v1/replicasets", "/apis/apps/v1/deployments", "/api/v1/services", "/apis/discovery.k8s.io/v1/endpointslices"]
        );
        let s = e.attach_frame(16.0).unwrap_or_else(|| e.snapshot());
        assert_eq!(s.cluster.nodes.len(), 2);
        assert_eq!(s.cluster.pod_count, 1);
        assert_eq!(
            s.caption.as_ref().map(|c| c.text.as_str()),
            Some(WATCHING),
            "the first list is the picture to start from, told nothing"
        );
        // Each box starts with what its loop last reported in an Event.
        let scheduler = s.components.iter().find(|c| c.name == "kube-scheduler").expect("kube-scheduler's box");
        assert_eq!(
            scheduler.detail,
            "last reported: Scheduled web-97f4f98bc-aaaaa (Successfully assigned default/web-97f4f98bc-aaaaa to node-1)"
        );
        let names: Vec<&str> = s.components.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet-node-1", "kubelet-node-2"]);
        assert!(s.attached.as_ref().is_some_and(|a| a.status.starts_with("watching nodes, pods and events")), "{:?}", s.attached);

        // The replacement's three changes arrive together, as a real cluster makes them.
        let w = watches["pods"];
        let new = "web-97f4f98bc-bbbbb";
        for (t, p) in [
            ("ADDED", pod(new, "11", None, false)),
            ("MODIFIED", pod(new, "12", Some("node-2"), false)),
            ("MODIFIED", pod(new, "13", Some("node-2"), true)),
        ] {
            e.attach_line(w, &json!({"type": t, "object": p}).to_string());
        }
        let s = e.attach_frame(32.0).expect("a change shows");
        let c = s.caption.clone().expect("a caption");
        assert!(c.text.starts_with("ReplicaSet controller: create pod web-…-bbbbb"), "{}", c.text);
        let new_pod = s.cluster.unscheduled.iter().find(|p| p.name == new);
        assert!(new_pod.is_some(), "the replacement waits in the pending area: {:?}", s.cluster.unscheduled);
        assert_eq!(s.attached.as_ref().map(|a| a.behind), Some(2));
        // Held for its caption: nothing more until the dwell is over.
        assert!(e.attach_frame(100.0).is_none_or(|s| s.caption.as_deref() == Some(&c)));
        let s = e.attach_frame(10_000.0).expect("the next change");
        assert!(s.caption.as_ref().unwrap().text.starts_with("kube-scheduler: bind web-…-bbbbb → node-2"));
        assert!(s.cluster.unscheduled.iter().all(|p| p.name != new), "bound");
        let s = e.attach_frame(20_000.0).expect("the last change");
        let c = s.caption.clone().unwrap();
        assert_eq!(c.component, "kubelet-node-2");
        assert!(c.text.starts_with("kubelet node-2: web-…-bbbbb Running 1/1"), "{}", c.text);
        let told = &s.attached.as_ref().unwrap().told;
        assert_eq!(told.len(), 3);
        assert_eq!(s.components.iter().find(|c| c.name == "kubelet-node-2").map(|c| c.detail.as_str()), Some(c.text.as_str()));
        assert!(s.time_ms >= 10_000, "the cluster's time comes from what it wrote: {}", s.time_ms);
    }

    #[test]
    fn gone_relists_and_the_relists_differences_are_told() {
        let mut e = attached();
        let lists = e.attach_requests(0.0);
        let watches = answer_lists(&mut e, &lists);
        e.attach_line(
            watches["pods"],
            r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410,"reason":"Expired","message":"too old"}}"#,
        );
        let again = e.attach_requests(1.0);
        assert_eq!(again.len(), 1);
        assert_eq!((again[0].url.as_str(), again[0].stream), ("/api/v1/pods", false));
        // The pod went while the watch was gone.
        e.attach_answer(again[0].id, 200, "application/json", &list("PodList", vec![], "20"));
        let s = e.attach_frame(16.0).expect("the pod goes");
        assert_eq!(s.cluster.pod_count, 0);
        assert!(s.caption.clone().unwrap().text.starts_with("kubelet node-1: web-…-aaaaa removed (inferred"));
        let w = e.attach_requests(17.0);
        assert!(w.len() == 1 && w[0].stream && w[0].url.contains("resourceVersion=20"), "{w:?}");
    }

    #[test]
    fn kill_and_the_replicas_box_send_kubectls_requests_and_print_its_errors() {
        let mut e = attached();
        let lists = e.attach_requests(0.0);
        answer_lists(&mut e, &lists);
        e.act(Action::Select("default".into(), "web-97f4f98bc-aaaaa".into()));
        e.act(Action::Kill);
        let kill = e.attach_requests(1.0);
        assert_eq!(kill.len(), 1);
        assert_eq!((kill[0].method, kill[0].url.as_str()), ("DELETE", "/api/v1/namespaces/default/pods/web-97f4f98bc-aaaaa"));
        e.attach_answer(kill[0].id, 403, "text/plain; charset=utf-8", "Forbidden\n");
        let s = e.attach_frame(1.5).expect("the refusal shows");
        assert_eq!(s.errors.last().map(String::as_str), Some("Error from server (Forbidden): Forbidden (delete pods web-97f4f98bc-aaaaa)"));
        assert_eq!(s.commands[0].line, "kubectl delete pod web-97f4f98bc-aaaaa");
        assert!(!s.commands[0].ok);

        e.act(Action::Command("kubectl scale deployment web --replicas=5".into()));
        let scale = e.attach_requests(2.0);
        assert_eq!((scale[0].method, scale[0].url.as_str()), ("PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale"));
        assert_eq!(
            (scale[0].body.as_deref(), scale[0].content_type),
            (Some(r#"{"spec":{"replicas":5}}"#), Some("application/merge-patch+json"))
        );
        e.attach_answer(scale[0].id, 200, "application/json", "{}");
        let s = e.attach_frame(2.5).expect("done");
        assert_eq!((s.commands[0].output.as_str(), s.commands[0].ok), ("deployment.apps/web scaled", true));
        let s = e.act(Action::Command("kubectl scale deployment web --replicas=x".into())).expect("kubectl's flag error");
        assert!(e.attach_requests(3.0).is_empty(), "nothing sent");
        assert!(s.errors.last().unwrap().starts_with("error: invalid argument \"x\" for \"--replicas\" flag"), "{:?}", s.errors);
    }
}
