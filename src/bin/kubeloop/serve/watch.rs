//! Watches over HTTP: each open one is the simulation's watch of a client outside it
//! (`Sim::open_external_watch`), and a channel to its response body.
//!
//! The simulation delivers an HTTP client's notifications as it delivers a component's: after the
//! watch latency, later under `sim watch delay`, lost under `sim watch drop`, ended by `sim watch
//! sever` (the client's re-watch from before it is then 410 Gone, so it re-lists) and by a
//! restarted kube-apiserver or etcd. Its resourceVersion semantics are kube-apiserver's: a
//! compacted revision is told `410 Gone` (an ERROR event, then the end), an object entering the
//! watch's selectors arrives as ADDED and one leaving them as DELETED. After every step of the
//! clock the server takes what is due and writes it; an object is encoded once for all the
//! watches that carry it the same way.

use super::fields::Tracker;
use super::filter::Filter;
use super::status;
use super::table::{self, Include};
use hyper::body::Bytes;
use kubeloop::api::{ApiError, WatchEvent, WatchId};
use kubeloop::command::printers;
use kubeloop::model::{Kind, Object, Time};
use kubeloop::runtime::fasthash::FastMap;
use kubeloop::sim::{ExternalEvent, ExternalWatch, Sim};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::Sender;

/// The most events a watch holds that its client has not read yet. A client that falls further
/// behind is cut off, as kube-apiserver's watch cache ends an unresponsive watcher, and re-lists;
/// the server never buffers without bound for a client that stopped reading.
pub(crate) const BACKLOG: usize = 200_000;

/// How often a watch that asked for bookmarks gets one (kube-apiserver sends them about once a
/// minute; sooner here so short-lived clients see them too).
const BOOKMARK_EVERY: Duration = Duration::from_secs(10);

pub(crate) struct Watcher {
    pub(crate) kind: Kind,
    /// The group version it was opened at, which its objects are written in.
    pub(crate) api_version: String,
    pub(crate) filter: Filter,
    pub(crate) tx: Sender<Bytes>,
    /// As a Table (kubectl get -w), with what its rows include.
    pub(crate) table: Option<Include>,
    pub(crate) bookmarks: bool,
    /// When the client's `timeoutSeconds` ends it.
    pub(crate) deadline: Option<Instant>,
    pub(crate) next_bookmark: Instant,
    /// For a custom resource's watch: its definition and the version it was opened at (which
    /// objects, and the Table's printer columns).
    pub(crate) custom: Option<(std::rc::Rc<kubeloop::api::crd::Definition>, String)>,
}

impl Watcher {
    /// Sends one event; false once the client has gone.
    pub(crate) fn send(&self, type_: &str, object: Value) -> bool {
        self.send_text(type_, &object.to_string())
    }

    /// Sends one event whose object is already JSON text.
    pub(crate) fn send_text(&self, type_: &str, object: &str) -> bool {
        let line = format!("{{\"type\":\"{type_}\",\"object\":{object}}}\n");
        self.tx.try_send(Bytes::from(line)).is_ok()
    }

    /// An object as this watch carries it, as JSON text: the object, or a one-row Table.
    /// Whether an object is one this watch covers (its resource, namespace and labels).
    pub(crate) fn admits(&self, object: &Object) -> bool {
        let resource = self.custom.as_ref().map(|(d, _)| d.name.as_str());
        object.as_custom_object().map(|o| o.resource()) == resource && self.filter.admits(object)
    }

    pub(crate) fn encode(&self, fields: &Tracker, object: &Object, now: Time, revision: u64) -> String {
        if let Some((d, version)) = &self.custom {
            let meta = json!({"resourceVersion": revision.to_string()});
            return match self.table {
                Some(include) => super::custom::table_of(d, version, &[object], now, include, &meta).to_string(),
                None => {
                    let mut v = printers::object_json(object);
                    fields.annotate(object, &mut v);
                    v["apiVersion"] = self.api_version.clone().into();
                    v.to_string()
                }
            };
        }
        match self.table {
            None => {
                let mut value = printers::object_json(object);
                fields.annotate(object, &mut value);
                super::api::as_version(value, &self.api_version).to_string()
            }
            Some(include) => table::table(self.kind, &[object], now, include, &json!({"resourceVersion": revision.to_string()})),
        }
    }

    fn bookmark(&self, revision: u64) -> bool {
        let info = self.kind.info();
        self.send(
            "BOOKMARK",
            json!({"kind": info.name, "apiVersion": self.api_version, "metadata": {"resourceVersion": revision.to_string()}}),
        )
    }

    /// The initial-events-end bookmark `sendInitialEvents=true` asks for.
    pub(crate) fn initial_events_end(&self, revision: u64) -> bool {
        let info = self.kind.info();
        self.send(
            "BOOKMARK",
            json!({"kind": info.name, "apiVersion": self.api_version, "metadata": {
                "resourceVersion": revision.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}}),
        )
    }

    /// The simulation's watch for this one, from `revision`.
    pub(crate) fn request(&self, revision: u64) -> ExternalWatch {
        let filter = self.filter.clone();
        ExternalWatch {
            namespace: filter.namespace,
            labels: filter.labels,
            fields: filter.fields,
            resource: self.custom.as_ref().map(|(d, _)| d.name.clone()).unwrap_or_default(),
            ..ExternalWatch::new(self.kind, revision)
        }
    }

    /// Ends a watch whose revision is gone: an ERROR event with the 410, then the end.
    pub(crate) fn gone(&self, error: &ApiError) {
        self.send("ERROR", status::api_error_value(error));
    }

    /// The clock's look at a watch: its client's timeout, a bookmark when due. False when over.
    fn tend(&mut self, revision: Option<u64>, wall: Instant) -> bool {
        let Some(revision) = revision else { return false };
        if self.deadline.is_some_and(|d| wall >= d) || self.tx.is_closed() {
            return false;
        }
        if self.bookmarks && wall >= self.next_bookmark {
            self.next_bookmark = wall + BOOKMARK_EVERY;
            return self.bookmark(revision);
        }
        true
    }
}

/// The open watches, by the simulation's id for each, and the encodings they share.
#[derive(Default)]
pub(crate) struct Watchers {
    open: FastMap<WatchId, Watcher>,
    encoded: Encoded,
}

impl Watchers {
    pub(crate) fn insert(&mut self, id: WatchId, watcher: Watcher) {
        self.open.insert(id, watcher);
    }

    /// Writes every notification the simulation has due, and lets go of the watches that ended.
    /// A stopped kube-apiserver (`sim stop kube-apiserver`) has ended them all; clients re-list.
    pub(crate) fn deliver(&mut self, sim: &mut Sim, fields: &Tracker) {
        let mut gone = Vec::new();
        for event in sim.take_external_events() {
            match event {
                ExternalEvent::Ended(id) => {
                    self.open.remove(&id);
                }
                ExternalEvent::Event(id, event) => {
                    let Some(watcher) = self.open.get(&id) else { continue };
                    let line = self.encoded.line(watcher, fields, &event, sim.now());
                    // Gone, or too far behind: either way the watch ends.
                    if watcher.tx.try_send(line).is_err() {
                        gone.push(id);
                    }
                }
            }
        }
        for id in gone {
            self.open.remove(&id);
            sim.close_external_watch(id);
        }
    }

    /// Once a tick: timeouts, bookmarks, and clients that went away.
    pub(crate) fn tend(&mut self, sim: &mut Sim, wall: Instant) {
        let mut over = Vec::new();
        for (id, watcher) in &mut self.open {
            if !watcher.tend(sim.external_watch_revision(*id), wall) {
                over.push(*id);
            }
        }
        for id in over {
            self.open.remove(&id);
            sim.close_external_watch(id);
        }
    }
}

/// Recent watch lines in plain JSON, by revision and type (with the group version they were
/// written in): a change a hundred watches carry is encoded once. Table lines carry an age, so
/// they are not shared.
#[derive(Default)]
struct Encoded {
    lines: FastMap<(u64, &'static str), (String, Bytes)>,
    order: VecDeque<(u64, &'static str)>,
}

/// How many encoded lines are kept (a few milliseconds of a large cluster's changes).
const ENCODED_KEPT: usize = 4096;

impl Encoded {
    fn line(&mut self, watcher: &Watcher, fields: &Tracker, event: &WatchEvent, now: Time) -> Bytes {
        let type_ = event.type_.as_str();
        let revision = event.object.meta().resource_version;
        let encode = || {
            let object = watcher.encode(fields, &event.object, now, revision);
            let mut line = Vec::with_capacity(object.len() + 32);
            line.extend_from_slice(b"{\"type\":\"");
            line.extend_from_slice(type_.as_bytes());
            line.extend_from_slice(b"\",\"object\":");
            line.extend_from_slice(object.as_bytes());
            line.extend_from_slice(b"}\n");
            Bytes::from(line)
        };
        if watcher.table.is_some() {
            return encode();
        }
        let key = (revision, type_);
        match self.lines.get(&key) {
            Some((version, line)) if *version == watcher.api_version => return line.clone(),
            Some(_) => return encode(),
            None => {}
        }
        let line = encode();
        if self.order.len() == ENCODED_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.lines.remove(&old);
            }
        }
        self.order.push_back(key);
        self.lines.insert(key, (watcher.api_version.clone(), line.clone()));
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeloop::api::ApiRequest;
    use kubeloop::sim::NodeConfig;

    fn watcher(tx: Sender<Bytes>) -> Watcher {
        let now = Instant::now();
        Watcher {
            kind: Kind::ConfigMap,
            api_version: "v1".into(),
            filter: Filter::default(),
            tx,
            table: None,
            bookmarks: false,
            deadline: None,
            next_bookmark: now,
            custom: None,
        }
    }

    fn configmap(sim: &mut Sim, name: &str) {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}});
        sim.submit(ApiRequest::Create(Object::from_json(cm).unwrap())).unwrap();
    }

    /// A client that stops reading is cut off once its backlog is full, as kube-apiserver ends an
    /// unresponsive watcher, and the simulation's watch with it: the server never buffers
    /// without bound. One that reads hears every change, each encoded once.
    #[test]
    fn a_watch_whose_client_stops_reading_is_cut_off_and_one_that_reads_hears_all() {
        let mut sim = Sim::new(1);
        sim.add_node(NodeConfig::new("node-1")).unwrap();
        let mut watchers = Watchers::default();
        let (stuck_tx, _stuck_rx) = tokio::sync::mpsc::channel(2);
        let (reading_tx, mut reading_rx) = tokio::sync::mpsc::channel(BACKLOG);
        let from = sim.api().revision();
        let (stuck, reading) = (watcher(stuck_tx), watcher(reading_tx));
        let stuck_id = sim.open_external_watch(stuck.request(from)).unwrap();
        let reading_id = sim.open_external_watch(reading.request(from)).unwrap();
        watchers.insert(stuck_id, stuck);
        watchers.insert(reading_id, reading);
        for name in ["a", "b", "c"] {
            configmap(&mut sim, name);
        }
        sim.advance(kubeloop::model::Duration::secs(1));
        watchers.deliver(&mut sim, &Tracker::default());
        assert_eq!(sim.external_watch_revision(stuck_id), None, "cut off");
        assert!(sim.external_watch_revision(reading_id).is_some());
        let mut heard = Vec::new();
        while let Ok(line) = reading_rx.try_recv() {
            heard.push(serde_json::from_slice::<Value>(&line).unwrap()["object"]["metadata"]["name"].as_str().unwrap().to_string());
        }
        assert_eq!(heard, ["a", "b", "c"]);
        assert_eq!(watchers.encoded.lines.len(), 3, "one encoding per change");
    }
}
