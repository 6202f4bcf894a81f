//! The event log: `kubectl get events` as a table, newest first, filterable by object and by the
//! component that reported it, with the chain of a selected pod marked.
//!
//! Rows carry the cells kubectl prints (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, with SOURCE
//! from `-o wide`), computed by the same printer functions. "Newest first" orders by the time the
//! event was last seen and then by the revision of its last write, so events recorded in the same
//! millisecond keep the order the cluster wrote them in.
//!
//! A pod's chain is what happened because of it: the events about the pod itself and the
//! ReplicaSet's `SuccessfulCreate`/`SuccessfulDelete` whose message names it. A killed pod's
//! chain can be marked together with its replacement's (`EventFilter::linked`).

use super::Cursor;
use crate::command::printers;
use crate::model::{human_duration, Event, Kind, Object, Time};
use crate::sim::Sim;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One event as the log keeps it (the time-dependent cells are computed when a table is made).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRow {
    /// The Event object's `namespace/name`, a stable key.
    pub key: String,
    pub last_seen: u64,
    pub revision: u64,
    /// `Normal` or `Warning`.
    pub type_: String,
    pub reason: String,
    /// `pod/web-7d9f6c5b4-abcde`.
    pub object: String,
    pub object_kind: String,
    pub object_name: String,
    pub namespace: String,
    pub message: String,
    /// kubectl's SOURCE (`kubelet, node-1`).
    pub source: String,
    /// The reporting component alone (`kubelet`, `default-scheduler`, `replicaset-controller`).
    pub component: String,
    pub count: i32,
}

impl EventRow {
    pub fn of(e: &Event) -> EventRow {
        let component = if e.source.component.is_empty() { e.reporting_component.to_string() } else { e.source.component.clone() };
        EventRow {
            key: format!("{}/{}", e.metadata.namespace, e.metadata.name),
            last_seen: e.last_timestamp.or(e.first_timestamp).map(|t| t.0).unwrap_or_default(),
            revision: e.metadata.resource_version,
            type_: e.type_.to_string(),
            reason: e.reason.to_string(),
            object: printers::event_object(e),
            object_kind: e.involved_object.kind.to_string(),
            object_name: e.involved_object.name.to_string(),
            namespace: e.involved_object.namespace.to_string(),
            message: e.message.trim().to_string(),
            source: printers::event_source(e),
            component,
            count: e.count.max(1),
        }
    }

    /// Whether this event belongs to the chain of pod `name`.
    pub fn concerns_pod(&self, namespace: &str, name: &str) -> bool {
        if self.object_kind == "Pod" {
            return self.object_name == name && self.namespace == namespace;
        }
        // The ReplicaSet and DaemonSet controllers name the pod they created or deleted at the end.
        matches!(self.object_kind.as_str(), "ReplicaSet" | "DaemonSet")
            && self.namespace == namespace
            && (self.message.strip_prefix("Created pod: ") == Some(name) || self.message.strip_prefix("Deleted pod: ") == Some(name))
    }
}

/// What the table shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EventFilter {
    /// A substring of the OBJECT cell (`web`, `pod/web-7d9`); empty for all.
    pub object: String,
    /// The reporting component exactly; empty for all.
    pub component: String,
    /// `namespace/name` of the selected pod, whose chain is marked.
    pub pod: Option<(String, String)>,
    /// `namespace/name` of a pod whose chain is marked with the selected pod's: the pod that
    /// replaced it, or the one it replaced (story mode's `Story::linked`).
    pub linked: Option<(String, String)>,
    /// At most this many rows.
    pub limit: usize,
}

/// A row of the table with its cells for one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventCells {
    pub key: String,
    pub last_seen: String,
    pub type_: String,
    pub reason: String,
    pub object: String,
    pub source: String,
    pub message: String,
    pub count: i32,
    /// Part of the selected pod's chain.
    pub in_chain: bool,
}

/// The table for one moment: rows newest first, how many matched, and the components to
/// filter by.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EventTable {
    pub rows: Vec<EventCells>,
    pub matched: usize,
    pub total: usize,
    pub components: Vec<String>,
}

impl EventTable {
    /// How many events the panel's title counts: all that matched, or the newest shown of them.
    pub fn shown_words(&self) -> String {
        if self.matched > self.rows.len() {
            format!("newest {} of {}", self.rows.len(), self.matched)
        } else {
            self.matched.to_string()
        }
    }
}

impl EventCells {
    /// The MESSAGE cell, with the count of an aggregated event as `kubectl describe` prints it.
    pub fn message_with_count(&self) -> String {
        if self.count > 1 {
            format!("{} (x{})", self.message, self.count)
        } else {
            self.message.clone()
        }
    }
}

type Order = (u64, u64, String);

/// Keeps every Event in the store, ordered newest first. See the module documentation.
#[derive(Debug, Default)]
pub struct EventLog {
    cursor: Cursor,
    // Boxed: every map from a name to one pointer shares its B-tree code in the wasm.
    rows: BTreeMap<String, Box<EventRow>>,
    order: BTreeSet<Order>,
    components: BTreeMap<String, usize>,
}

impl EventLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn reset(&mut self) {
        *self = Self::default();
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Catches up with `sim`. Returns whether any event was added, changed or removed.
    pub fn update(&mut self, sim: &Sim) -> bool {
        let api = sim.api();
        let mut changed = false;
        if !self.cursor.continues(sim) {
            self.reset();
            changed = true;
            for e in sim.objects(Kind::Event) {
                self.apply(e, false);
            }
        } else if api.revision() != self.cursor.revision {
            match api.changes_since(self.cursor.revision) {
                Ok(changes) => {
                    for c in changes.filter(|c| c.object.kind() == Kind::Event) {
                        changed |= self.apply(&c.object, c.type_ == crate::store::ChangeType::Deleted);
                    }
                }
                Err(_) => {
                    self.reset();
                    changed = true;
                    for e in sim.objects(Kind::Event) {
                        self.apply(e, false);
                    }
                }
            }
        }
        self.cursor = Cursor::at(sim);
        changed
    }

    fn apply(&mut self, object: &Object, gone: bool) -> bool {
        let Some(e) = object.as_event() else { return false };
        let key = format!("{}/{}", e.metadata.namespace, e.metadata.name);
        if let Some(old) = self.rows.remove(&key) {
            self.order.remove(&(old.last_seen, old.revision, key.clone()));
            if let Some(n) = self.components.get_mut(&old.component) {
                *n -= 1;
                if *n == 0 {
                    self.components.remove(&old.component);
                }
            }
        }
        if !gone {
            let row = EventRow::of(e);
            self.order.insert((row.last_seen, row.revision, key.clone()));
            *self.components.entry(row.component.clone()).or_default() += 1;
            self.rows.insert(key, Box::new(row));
        }
        true
    }

    /// Rows newest first.
    pub fn newest_first(&self) -> impl Iterator<Item = &EventRow> + '_ {
        self.order.iter().rev().filter_map(|(_, _, key)| self.rows.get(key).map(|r| &**r))
    }

    /// The table at `now` under `filter`.
    pub fn table(&self, filter: &EventFilter, now: Time) -> EventTable {
        let object = filter.object.trim().to_ascii_lowercase();
        let matching = self.newest_first().filter(|r| {
            (object.is_empty() || r.object.to_ascii_lowercase().contains(&object))
                && (filter.component.is_empty() || r.component == filter.component)
        });
        // Without a filter every row matches: stop once the table is full.
        let unfiltered = object.is_empty() && filter.component.is_empty();
        let mut rows = Vec::new();
        let mut matched = 0;
        for r in matching {
            matched += 1;
            if rows.len() >= filter.limit && unfiltered {
                matched = self.rows.len();
                break;
            }
            if rows.len() < filter.limit {
                let in_chain = [&filter.pod, &filter.linked].into_iter().flatten().any(|(ns, name)| r.concerns_pod(ns, name));
                rows.push(EventCells {
                    key: r.key.clone(),
                    last_seen: human_duration(now.since(Time(r.last_seen))),
                    type_: r.type_.clone(),
                    reason: r.reason.clone(),
                    object: r.object.clone(),
                    source: r.source.clone(),
                    message: r.message.clone(),
                    count: r.count,
                    in_chain,
                });
            }
        }
        EventTable { rows, matched, total: self.rows.len(), components: self.components.keys().cloned().collect() }
    }

    /// The reasons of pod `name`'s chain, oldest first.
    pub fn chain_reasons(&self, namespace: &str, name: &str) -> Vec<String> {
        let mut reasons: Vec<String> = self.newest_first().filter(|r| r.concerns_pod(namespace, name)).map(|r| r.reason.clone()).collect();
        reasons.reverse();
        reasons
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;

    fn filter(limit: usize) -> EventFilter {
        EventFilter { limit, ..Default::default() }
    }

    #[test]
    fn the_panel_counts_what_it_shows_and_aggregated_events_carry_their_count() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let mut log = EventLog::new();
        log.update(s.sim());
        let all = log.table(&filter(500), s.sim().now());
        assert_eq!(all.shown_words(), all.matched.to_string());
        let few = log.table(&filter(2), s.sim().now());
        assert_eq!(few.shown_words(), format!("newest 2 of {}", all.matched));
        let mut row = few.rows[0].clone();
        row.count = 1;
        assert_eq!(row.message_with_count(), row.message);
        row.count = 4;
        assert_eq!(row.message_with_count(), format!("{} (x4)", row.message));
    }

    #[test]
    fn the_log_lists_kubectl_cells_newest_first() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let mut log = EventLog::new();
        assert!(log.update(s.sim()));
        let t = log.table(&filter(500), s.sim().now());
        assert_eq!(t.matched, t.total);
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for r in log.newest_first() {
            *reasons.entry(r.reason.as_str()).or_default() += 1;
        }
        for (reason, n) in [("ScalingReplicaSet", 1), ("SuccessfulCreate", 3), ("Scheduled", 3), ("Created", 3), ("Started", 3)] {
            assert_eq!(reasons.get(reason), Some(&n), "{reason} in {reasons:?}");
        }
        let order: Vec<(u64, u64)> = log.newest_first().map(|r| (r.last_seen, r.revision)).collect();
        assert!(order.windows(2).all(|w| w[0] > w[1]), "strictly newest first: {order:?}");
        let oldest = log.newest_first().last().unwrap();
        assert_eq!((oldest.reason.as_str(), oldest.object.as_str()), ("ScalingReplicaSet", "deployment/web"));
        assert!(oldest.message.starts_with("Scaled up replica set web-"), "{}", oldest.message);
        assert_eq!(oldest.source, "deployment-controller");
        for c in ["default-scheduler", "deployment-controller", "kubelet", "replicaset-controller"] {
            assert!(t.components.iter().any(|x| x == c), "{c} in {:?}", t.components);
        }
        let started = t.rows.iter().find(|r| r.reason == "Started").unwrap();
        assert_eq!(started.message, "Started container nginx");
        assert!(started.source.starts_with("kubelet, node-"), "{}", started.source);
    }

    #[test]
    fn filters_narrow_by_object_and_component_and_limit_the_rows() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let mut log = EventLog::new();
        log.update(s.sim());
        let now = s.sim().now();
        let sched = log.table(&EventFilter { component: "default-scheduler".into(), limit: 100, ..Default::default() }, now);
        assert_eq!(sched.matched, 3);
        assert!(sched.rows.iter().all(|r| r.reason == "Scheduled"));
        let deploy = log.table(&EventFilter { object: "DEPLOYMENT/".into(), limit: 100, ..Default::default() }, now);
        assert_eq!(deploy.rows.iter().map(|r| r.reason.as_str()).collect::<Vec<_>>(), ["ScalingReplicaSet"]);
        let two = log.table(&filter(2), now);
        assert_eq!((two.rows.len(), two.matched), (2, two.total));
    }

    #[test]
    fn a_replacement_pods_chain_runs_from_successful_create_to_started() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let mut log = EventLog::new();
        log.update(s.sim());
        let before: BTreeSet<String> = s.sim().objects(Kind::Pod).map(|p| p.meta().name.to_string()).collect();
        let victim = before.iter().next().unwrap().clone();
        assert!(s.execute(&format!("kubectl delete pod {victim}")).ok);
        s.settle(Duration::mins(2)).unwrap();
        assert!(log.update(s.sim()));
        let new = s.sim().objects(Kind::Pod).map(|p| p.meta().name.to_string()).find(|n| !before.contains(n)).expect("a replacement");
        let chain = log.chain_reasons("default", &new);
        // The image is already on the node: the kubelet still reports Pulled ("already present").
        assert_eq!(chain, ["SuccessfulCreate", "Scheduled", "Pulled", "Created", "Started"]);
        let t = log.table(&EventFilter { pod: Some(("default".into(), new.to_string())), limit: 200, ..Default::default() }, s.sim().now());
        assert_eq!(t.rows.iter().filter(|r| r.in_chain).count(), 5);
        let victim_chain = log.chain_reasons("default", &victim);
        assert!(victim_chain.contains(&"Killing".to_string()), "{victim_chain:?}");
    }

    #[test]
    fn a_linked_pods_chain_is_marked_with_the_selected_ones() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let mut log = EventLog::new();
        let before: BTreeSet<String> = s.sim().objects(Kind::Pod).map(|p| p.meta().name.to_string()).collect();
        let victim = before.iter().next().unwrap().clone();
        assert!(s.execute(&format!("kubectl delete pod {victim}")).ok);
        s.settle(Duration::mins(2)).unwrap();
        log.update(s.sim());
        let new = s.sim().objects(Kind::Pod).map(|p| p.meta().name.to_string()).find(|n| !before.contains(n)).unwrap();
        let now = s.sim().now();
        let pod = |name: &str| Some(("default".to_string(), name.to_string()));
        let marked = |filter: &EventFilter| -> BTreeSet<String> {
            log.table(filter, now).rows.into_iter().filter(|r| r.in_chain).map(|r| r.key).collect()
        };
        let alone = EventFilter { pod: pod(&victim), limit: 200, ..Default::default() };
        let unused = EventFilter { linked: None, ..alone.clone() };
        assert_eq!(log.table(&unused, now), log.table(&alone, now), "unused, the table is as before");
        let linked = EventFilter { linked: pod(&new), ..alone.clone() };
        let (victims, both) = (marked(&alone), marked(&linked));
        let replacements = marked(&EventFilter { pod: pod(&new), limit: 200, ..Default::default() });
        assert_eq!(replacements.len(), 5);
        assert_eq!(both, victims.union(&replacements).cloned().collect::<BTreeSet<_>>());
        assert!(both.len() > victims.len());
    }
}
