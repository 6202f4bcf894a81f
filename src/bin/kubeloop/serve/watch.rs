//! Watches over HTTP: each open one is a channel to its response body, fed from etcd's change
//! log after every step of the clock.
//!
//! A watch reads etcd's committed changes since the revision it was opened at, as kube-apiserver's
//! watch cache does, so its resourceVersion semantics are etcd's: a revision older than the last
//! compaction is told `410 Gone` (an ERROR event, then the end), and a watch that has seen every
//! change up to the current revision moves on with it, so an idle watch never falls behind a
//! compaction. An object that enters a watch's selector arrives as ADDED and one that leaves it
//! as DELETED, as the watch cache sends them.

use super::fields::Tracker;
use super::filter::Filter;
use super::status;
use super::table::{self, Include};
use hyper::body::Bytes;
use kubeloop::api::ApiError;
use kubeloop::command::printers;
use kubeloop::model::{Kind, Object, Time};
use kubeloop::sim::Sim;
use kubeloop::store::{ChangeType, StoreError};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// How often a watch that asked for bookmarks gets one (kube-apiserver sends them about once a
/// minute; sooner here so short-lived clients see them too).
const BOOKMARK_EVERY: Duration = Duration::from_secs(10);

pub(crate) struct Watcher {
    pub(crate) kind: Kind,
    /// The group version it was opened at, which its objects are written in.
    pub(crate) api_version: String,
    pub(crate) filter: Filter,
    /// The last revision this watch has seen.
    pub(crate) revision: u64,
    pub(crate) tx: UnboundedSender<Bytes>,
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
        self.tx.send(Bytes::from(line)).is_ok()
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

    /// Sends what changed since the last look. False when the watch is over.
    fn catch_up(&mut self, sim: &Sim, fields: &Tracker, wall: Instant) -> bool {
        if self.deadline.is_some_and(|d| wall >= d) {
            return false;
        }
        let etcd = &sim.api().etcd;
        let changes = match etcd.changes_since(self.revision) {
            Ok(changes) => changes,
            Err(StoreError::Compacted { oldest }) => {
                let gone = ApiError::gone(format!("too old resource version: {} ({})", self.revision, oldest));
                self.send("ERROR", status::api_error_value(&gone));
                return false;
            }
            Err(_) => return false,
        };
        let mut events = Vec::new();
        for change in changes.filter(|c| c.object.kind() == self.kind) {
            let now_in = self.admits(&change.object);
            let was_in = change.prev.as_deref().is_some_and(|p| self.admits(p));
            let type_ = match (change.type_, was_in, now_in) {
                (ChangeType::Deleted, _, true) => "DELETED",
                (ChangeType::Deleted, _, false) => continue,
                (_, false, true) => "ADDED",
                (_, true, false) => "DELETED",
                (ChangeType::Added, _, _) => continue,
                (ChangeType::Modified, true, true) => "MODIFIED",
                (ChangeType::Modified, false, false) => continue,
            };
            events.push((type_, change.object.clone(), change.revision));
        }
        for (type_, object, revision) in events {
            if !self.send_text(type_, &self.encode(fields, &object, sim.now(), revision)) {
                return false;
            }
        }
        self.revision = etcd.revision();
        if self.bookmarks && wall >= self.next_bookmark {
            self.next_bookmark = wall + BOOKMARK_EVERY;
            return self.bookmark(self.revision);
        }
        !self.tx.is_closed()
    }
}

/// Brings every open watch up to date, dropping those that ended. A stopped kube-apiserver
/// (`sim stop kube-apiserver`) ends them all, as its connections close; clients re-list.
pub(crate) fn deliver(sim: &Sim, fields: &Tracker, watchers: &mut Vec<Watcher>, wall: Instant) {
    if sim.control_plane_refusal().is_some_and(|e| e.is_transport()) {
        watchers.clear();
        return;
    }
    watchers.retain_mut(|w| w.catch_up(sim, fields, wall));
}
