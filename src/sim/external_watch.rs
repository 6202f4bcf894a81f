//! Watches of clients outside the simulation (`kubeloop serve`'s HTTP watches), delivered by the
//! simulation's watch machinery as a component's are, without changing the simulation.
//!
//! An outside client's watch is opened in kube-apiserver's watch registry like any other, so it
//! hears a change by the same fan-out (selectors, ADDED/DELETED as an object enters or leaves
//! them, 410 Gone from a compacted revision) and its notifications travel with the same watch
//! latency, `sim watch delay` and `sim watch drop` that reach every component, and it ends when
//! the watches are severed. What keeps the simulation's trace the same with or without outside
//! watchers: their notifications wait in a queue of their own (not the simulation's delivery
//! queue, whose stepping would move compaction and lease expiry), their jitter and drops are
//! drawn from a generator of their own, and nothing about them is traced. The shell takes what
//! is due after each move of the clock (`Sim::take_external_events`).

use super::{ComponentId, Sim};
use crate::api::{ApiError, ApiResponse, FieldFilter, Narrowing, WatchEvent, WatchId, WatchRequest};
use crate::model::{Duration, FieldSelector, Kind, LabelSelector, Name, Time};
use crate::rng::Rng;
use crate::vec_map::VecMap;
use std::collections::VecDeque;

/// Seeds the outside watches' generator (mixed with the simulation's seed), so their draws are
/// reproducible and never the simulation's.
const EXTERNAL_SEED: u64 = 0x6578_7465_726e_616c;

/// A watch as a client outside the simulation asks for it: a kind, narrowed by namespace, label
/// and field selectors, from a revision (`resourceVersion`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalWatch {
    pub kind: Kind,
    pub namespace: Option<String>,
    pub labels: Option<LabelSelector>,
    pub fields: FieldSelector,
    /// For `Kind::CustomObject`: the custom resource watched (empty: every one).
    pub resource: Name,
    /// Every change after this revision is delivered.
    pub resource_version: u64,
}

impl ExternalWatch {
    /// Every object of `kind`, from `resource_version`.
    pub fn new(kind: Kind, resource_version: u64) -> Self {
        ExternalWatch { kind, namespace: None, labels: None, fields: FieldSelector::default(), resource: Name::default(), resource_version }
    }
}

/// What an outside watch hears.
#[derive(Clone, Debug)]
pub enum ExternalEvent {
    /// A notification, due now.
    Event(WatchId, WatchEvent),
    /// The watch ended (severed, kube-apiserver or etcd restarted): its client re-watches.
    Ended(WatchId),
}

/// One open outside watch's notifications on their way.
#[derive(Debug)]
struct Pending {
    /// Due times never decrease, so the front is the next one due.
    queue: VecDeque<(Time, WatchEvent)>,
    /// The last due time given, so one watch's notifications never overtake each other.
    last: Time,
    /// The revision of the last notification delivered.
    delivered: u64,
}

#[derive(Debug)]
pub(crate) struct ExternalWatches {
    rng: Rng,
    /// In id order. A sorted vector: a few watches, looked up by binary search, and the page
    /// (which never has any) pays a few hundred bytes for it rather than a hash map's code.
    open: VecMap<WatchId, Pending>,
    /// The watches that ended since the shell last took events, in the order they ended.
    ended: Vec<WatchId>,
    /// Notifications queued over every watch, so an idle take costs nothing.
    queued: usize,
    /// After `sim watch sever`, a re-watch from before this revision is 410 Gone, as a
    /// component's is: it lands where its revision is unknown.
    relist_below: u64,
}

impl ExternalWatches {
    pub(crate) fn new(seed: u64) -> Self {
        ExternalWatches { rng: Rng::new(seed ^ EXTERNAL_SEED), open: VecMap::default(), ended: Vec::new(), queued: 0, relist_below: 0 }
    }

    /// Whether `watch` is an outside client's (false at once while there are none).
    pub(crate) fn owns(&self, watch: WatchId) -> bool {
        !self.open.is_empty() && self.open.contains_key(&watch)
    }

    /// Queues a notification for an outside watch: `from` plus the watch latency (jittered by
    /// this queue's own generator) and any `sim watch delay`, never before the previous one.
    pub(crate) fn schedule(&mut self, from: Time, latency: Duration, jitter: f64, delay: Duration, watch: WatchId, event: WatchEvent) {
        let base = from + Duration(self.rng.jitter(latency.0, jitter)) + delay;
        let Some(pending) = self.open.get_mut(&watch) else { return };
        let at = base.max(pending.last);
        pending.last = at;
        pending.queue.push_back((at, event));
        self.queued += 1;
    }

    /// Ends every outside watch.
    fn sever_all(&mut self) -> Vec<WatchId> {
        let ids: Vec<WatchId> = self.open.keys().copied().collect();
        self.open.clear();
        self.queued = 0;
        self.ended.extend(ids.iter().copied());
        ids
    }
}

impl Sim {
    /// Opens a watch for a client outside the simulation: from `request.resource_version`, the
    /// changes since then and every later one, delivered with the simulation's watch latency and
    /// faults (take them with [`Sim::take_external_events`]). A revision etcd has compacted, or
    /// one from before kube-apiserver's watch cache or a `sim watch sever`, is 410 Gone; a
    /// stopped kube-apiserver refuses. Opening one changes nothing in the simulation's trace.
    pub fn open_external_watch(&mut self, request: ExternalWatch) -> Result<WatchId, ApiError> {
        if let Some(error) = self.control_plane_refusal() {
            // With etcd gone the API server still serves new watches from its watch cache.
            if error.is_transport() {
                return Err(error);
            }
        }
        let kind = request.kind;
        if request.resource_version < self.external.relist_below {
            let floor = self.external.relist_below;
            return Err(ApiError::gone(format!("too old resource version: {} ({floor})", request.resource_version)));
        }
        let watch = WatchRequest {
            kind,
            resource: request.resource,
            field: FieldFilter::All,
            resource_version: request.resource_version,
            labels: request.labels,
        };
        let handled = self.api.watch_narrowed(watch, Narrowing { namespace: request.namespace, fields: request.fields });
        let id = match handled.result? {
            ApiResponse::Watching(id) => id,
            _ => return Err(ApiError::unavailable("the watch could not be opened")),
        };
        // The changes since the revision asked for come with the answer, from the watch cache,
        // as `Sim::submit`'s answers come at once; each later one after the watch latency.
        let queue: VecDeque<(Time, WatchEvent)> = handled.notifications.into_iter().map(|(_, event)| (self.now, event)).collect();
        self.external.queued += queue.len();
        self.external.open.insert(id, Pending { queue, last: self.now, delivered: request.resource_version });
        Ok(id)
    }

    /// The client went away: its watch hears nothing more.
    pub fn close_external_watch(&mut self, id: WatchId) {
        if let Some(pending) = self.external.open.remove(&id) {
            self.external.queued -= pending.queue.len();
            self.api.close_watch(id);
        }
    }

    /// Every outside watch notification due by now, in each watch's order, and the watches that
    /// ended. A notification `sim watch drop` loses is taken and not given, as a component's is.
    pub fn take_external_events(&mut self) -> Vec<ExternalEvent> {
        let mut out: Vec<ExternalEvent> = self.external.ended.drain(..).map(ExternalEvent::Ended).collect();
        if self.external.queued == 0 {
            return out;
        }
        let drop_percent = self.watch_fault_for(&ComponentId::User).map_or(0, |f| f.drop_percent);
        let now = self.now;
        let ExternalWatches { open, rng, queued, .. } = &mut self.external;
        for (&id, pending) in open.iter_mut() {
            while pending.queue.front().is_some_and(|(at, _)| *at <= now) {
                let Some((_, event)) = pending.queue.pop_front() else { break };
                *queued -= 1;
                pending.delivered = event.object.meta().resource_version;
                if drop_percent > 0 && rng.below(100) < u64::from(drop_percent) {
                    self.faults.dropped += 1;
                    continue;
                }
                out.push(ExternalEvent::Event(id, event));
            }
        }
        out
    }

    /// The revision an outside watch has heard everything up to (a bookmark's
    /// `resourceVersion`): etcd's current one once nothing is on its way to it, since every
    /// change it must hear is queued for it as soon as etcd commits it. `None` once it ended.
    pub fn external_watch_revision(&self, id: WatchId) -> Option<u64> {
        let pending = self.external.open.get(&id)?;
        Some(if pending.queue.is_empty() { self.api.revision() } else { pending.delivered })
    }

    /// When the next outside notification is due, if any is on its way.
    pub fn next_external_time(&self) -> Option<Time> {
        if self.external.queued == 0 {
            return None;
        }
        self.external.open.values().filter_map(|p| p.queue.front().map(|(at, _)| *at)).min()
    }

    /// Ends the outside watches (`sever_watches` of every client); with `relist`, a re-watch from
    /// before the current revision is 410 Gone, so each client re-lists.
    pub(super) fn sever_external_watches(&mut self, relist: bool) -> usize {
        if relist {
            self.external.relist_below = self.api.revision();
        }
        let ids = self.external.sever_all();
        for &id in &ids {
            self.api.close_watch(id);
        }
        ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ApiRequest, DeleteRequest, Reason};
    use crate::model::Object;
    use crate::sim::NodeConfig;
    use crate::store::ChangeType;

    fn cluster(seed: u64) -> Sim {
        let mut sim = Sim::new(seed);
        sim.add_node(NodeConfig::new("node-1")).unwrap();
        sim.add_node(NodeConfig::new("node-2")).unwrap();
        sim.settle(Duration::secs(30)).unwrap();
        sim
    }

    fn deployment(name: &str, replicas: u32) -> ApiRequest {
        let yaml = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec: {{containers: [{{name: c, image: nginx}}]}}\n"
        );
        let value: serde_json::Value = yaml_serde::from_str(&yaml).unwrap();
        ApiRequest::Create(Object::from_json(value).unwrap())
    }

    /// Runs a scripted minute — a Deployment scaled up, a pod deleted — taking the outside
    /// events after every step, as `kubeloop serve` does.
    fn script(sim: &mut Sim, seen: &mut Vec<ExternalEvent>) {
        sim.submit(deployment("web", 3)).unwrap();
        for _ in 0..20_000 {
            if sim.now() >= Time(45_000) || !sim.step() {
                break;
            }
            seen.extend(sim.take_external_events());
            if sim.now() >= Time(40_000) && sim.api().count(Kind::Pod) == 3 {
                let victim = sim.objects(Kind::Pod).next().unwrap().key();
                sim.submit(ApiRequest::Delete(DeleteRequest::new(victim))).unwrap();
            }
        }
        sim.run_until(Time(60_000));
        seen.extend(sim.take_external_events());
    }

    fn pods_heard(seen: &[ExternalEvent]) -> Vec<(ChangeType, String)> {
        let heard = seen.iter().filter_map(|e| match e {
            ExternalEvent::Event(_, w) => Some((w.type_, w.object.meta().name.to_string())),
            ExternalEvent::Ended(_) => None,
        });
        heard.collect()
    }

    #[test]
    fn outside_watchers_leave_the_trace_as_it_was() {
        let mut alone = cluster(11);
        script(&mut alone, &mut Vec::new());
        let mut watched = cluster(11);
        let rv = watched.api().revision();
        for ns in [None, Some("default".to_string()), Some("other".to_string())] {
            watched.open_external_watch(ExternalWatch { namespace: ns, ..ExternalWatch::new(Kind::Pod, rv) }).unwrap();
        }
        watched.open_external_watch(ExternalWatch::new(Kind::Pod, 1)).unwrap();
        let mut seen = Vec::new();
        script(&mut watched, &mut seen);
        assert!(pods_heard(&seen).len() > 10, "the watchers heard the pods: {:?}", pods_heard(&seen));
        assert_eq!((watched.trace().hash(), watched.api().revision()), (alone.trace().hash(), alone.api().revision()));
    }

    #[test]
    fn a_notification_arrives_with_the_watch_latency_and_a_delay_fault_on_top() {
        let mut sim = cluster(5);
        sim.latencies.jitter = 0.0;
        let id = sim.open_external_watch(ExternalWatch::new(Kind::Deployment, sim.api().revision())).unwrap();
        sim.submit(deployment("a", 1)).unwrap();
        assert!(sim.take_external_events().is_empty(), "nothing before the latency");
        let etcd_and_watch = Duration(sim.latencies.etcd_write.0 + sim.latencies.watch.0);
        sim.run_until(sim.now() + etcd_and_watch);
        assert!(matches!(&sim.take_external_events()[..], [ExternalEvent::Event(w, e)] if *w == id && e.type_ == ChangeType::Added));
        assert_eq!(sim.external_watch_revision(id), Some(sim.api().revision()), "nothing on its way: it has seen everything");
        sim.set_watch_delay(None, Duration::secs(2));
        sim.submit(deployment("b", 1)).unwrap();
        sim.run_until(sim.now() + etcd_and_watch + Duration::millis(1_990));
        assert!(pods_heard(&sim.take_external_events()).iter().all(|(_, name)| name != "b"), "held back by the delay");
        sim.run_until(sim.now() + Duration::millis(20));
        assert!(pods_heard(&sim.take_external_events()).iter().any(|(_, name)| name == "b"));
    }

    #[test]
    fn a_drop_fault_loses_an_outside_watchers_notifications_as_a_components() {
        let mut sim = cluster(5);
        sim.open_external_watch(ExternalWatch::new(Kind::ConfigMap, sim.api().revision())).unwrap();
        sim.set_watch_drop(None, 100);
        let dropped = sim.watch_events_dropped();
        for name in ["a", "b", "c"] {
            let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}});
            sim.submit(ApiRequest::Create(Object::from_json(cm).unwrap())).unwrap();
        }
        sim.advance(Duration::secs(1));
        assert!(sim.take_external_events().is_empty());
        assert!(sim.watch_events_dropped() >= dropped + 3, "counted with the components' losses");
    }

    #[test]
    fn a_severed_outside_watch_ends_and_its_rewatch_is_gone_until_it_relists() {
        let mut sim = cluster(5);
        let rv = sim.api().revision();
        sim.submit(deployment("a", 1)).unwrap();
        let id = sim.open_external_watch(ExternalWatch::new(Kind::Pod, rv)).unwrap();
        sim.advance(Duration::secs(1));
        let severed = sim.sever_watches_to_relist(None);
        assert!(severed > 1);
        assert!(sim.take_external_events().iter().any(|e| matches!(e, ExternalEvent::Ended(w) if *w == id)));
        assert_eq!(sim.external_watch_revision(id), None);
        let gone = sim.open_external_watch(ExternalWatch::new(Kind::Pod, rv)).unwrap_err();
        assert_eq!(gone.reason, Reason::Gone);
        // A re-list reads the current revision; a watch from there is served.
        sim.open_external_watch(ExternalWatch::new(Kind::Pod, sim.api().revision())).unwrap();
        // And a compacted revision is gone as for any watch.
        sim.compact();
        sim.submit(deployment("b", 1)).unwrap();
        assert_eq!(sim.open_external_watch(ExternalWatch::new(Kind::Pod, rv + 1)).unwrap_err().reason, Reason::Gone);
    }

    #[test]
    fn an_outside_watch_is_narrowed_by_namespace_and_field_selector() {
        let mut sim = cluster(5);
        let rv = sim.api().revision();
        let fields = FieldSelector::parse("spec.nodeName=node-1", "/v1, Resource=pods", &["spec.nodeName"]).unwrap();
        let id = sim.open_external_watch(ExternalWatch { fields, ..ExternalWatch::new(Kind::Pod, rv) }).unwrap();
        sim.submit(deployment("a", 4)).unwrap();
        sim.advance(Duration::secs(20));
        let on_node_1: Vec<String> = sim
            .objects(Kind::Pod)
            .filter(|p| p.as_pod().and_then(|p| p.node_name()) == Some("node-1"))
            .map(|p| p.meta().name.to_string())
            .collect();
        let heard = pods_heard(&sim.take_external_events());
        assert!(!on_node_1.is_empty());
        assert!(heard.iter().all(|(_, name)| on_node_1.contains(name)), "{heard:?} {on_node_1:?}");
        assert!(heard.iter().any(|(t, _)| *t == ChangeType::Added), "a pod bound to the node enters the selection");
        sim.close_external_watch(id);
        assert!(!sim.api().is_watch_open(id));
    }
}
