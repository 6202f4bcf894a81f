//! One Service and EndpointSlice cache, and one routing table built from it, for every node's
//! kube-proxy whose watches are shared — what lets a cluster of thousands of nodes have a
//! Service in front of every Deployment.
//!
//! Every kube-proxy watches every Service and EndpointSlice, so each slice write (about one per
//! pod that turns ready) reaches every node: at 5,000 nodes and 150,000 pods about 750 million
//! notifications, each followed by that node rebuilding the Service's rules. Those watches have
//! no field or label selector, so they carry the same events in the same order and their caches
//! differ only by when each event arrived; the rules a sync computes differ only by that too.
//! So past teaching scale (`sim::SHARED_PROXY_WATCH_NODES`) the simulation keeps that cache once:
//! kube-apiserver fans each change out once, to this cache, instead of once per node, and the
//! table is rebuilt here, once per change and only for the Service that changed (unchanged
//! ports keep their `Rc<ServiceRules>`), the first time a kube-proxy syncs after it. A node's
//! table is then the revision of this table its kube-proxy last synced, held by pointer.
//!
//! What stays per node: each kube-proxy lists and opens its own watches (refused, severed and
//! answered 410 like any client's; kube-apiserver just does not send on them), runs its own
//! bounded-frequency runner (minSyncPeriod 1 s, syncPeriod 30 s) and writes its own machine; a
//! stopped one writes nothing, so its node's table goes stale. A kube-proxy under a watch fault
//! (drop or delay aimed at it, its watches severed, its node partitioned, etcd restored) does
//! not read this cache: its watches are opened private again and its informers' caches are its
//! own, exactly as at teaching scale.
//!
//! Invariant: the table a sharing kube-proxy writes at time t is the one its own informers would
//! hold at t had every notification arrived with the shared watch's latency. After `refresh`
//! the table is exactly the rules of the cache's Services, and a new `Rc` means new content.

use super::{apply_changes, rules_of, service_changes, service_of};
use crate::api::{WatchEvent, WatchId};
use crate::model::{Kind, Object};
use crate::net::RulesTable;
use crate::runtime::store::{Store, Writer, BY_SERVICE_NAME};
use std::collections::BTreeSet;
use std::rc::Rc;

/// The kinds kube-proxy watches, in the order it starts their informers.
pub const KINDS: [Kind; 2] = [Kind::Service, Kind::EndpointSlice];

#[derive(Debug)]
pub struct SharedProxyCache {
    /// The watch kube-apiserver sends each kind's changes on (one per kind, owned by no
    /// component); `None` until opened, and again after every watch was ended (the API server
    /// restarted, etcd restored), so that it is re-listed before anyone reads it.
    watches: Option<[WatchId; 2]>,
    services: Writer,
    slices: Writer,
    /// Services (`NAMESPACE/NAME`) changed since the table was last built.
    dirty: BTreeSet<String>,
    table: Rc<RulesTable>,
}

impl Default for SharedProxyCache {
    fn default() -> Self {
        SharedProxyCache {
            watches: None,
            services: Writer::new(Kind::Service, &[]),
            slices: Writer::new(Kind::EndpointSlice, &[BY_SERVICE_NAME]),
            dirty: BTreeSet::new(),
            table: Rc::default(),
        }
    }
}

impl SharedProxyCache {
    /// The watches it is fed by, while open.
    pub fn watches(&self) -> Option<[WatchId; 2]> {
        self.watches
    }

    pub fn owns_watch(&self, watch: WatchId) -> bool {
        self.watches.is_some_and(|w| w.contains(&watch))
    }

    /// Starts over from a list of each kind (in `KINDS` order) and the watches that go on from
    /// it: what changed since the last list makes its Services dirty, as a re-list's deltas do.
    pub fn relist(&mut self, watches: [WatchId; 2], lists: [Vec<Rc<Object>>; 2]) {
        self.watches = Some(watches);
        let [services, slices] = lists;
        let deltas = self.services.replace(services).into_iter().chain(self.slices.replace(slices));
        for delta in deltas {
            if let crate::runtime::informer::Delta::Updated { old, .. } = &delta {
                self.dirty.extend(service_of(old));
            }
            self.dirty.extend(service_of(delta.object()));
        }
    }

    /// Its watches ended: nobody reads it until it is re-listed.
    pub fn close(&mut self) {
        self.watches = None;
    }

    /// A notification on one of its watches.
    pub fn apply(&mut self, watch: WatchId, event: WatchEvent) {
        let Some([services, _]) = self.watches.filter(|_| self.owns_watch(watch)) else { return };
        let writer = if watch == services { &mut self.services } else { &mut self.slices };
        if let crate::runtime::informer::Delta::Updated { old, .. } = writer.apply(event.type_, event.object.clone()) {
            self.dirty.extend(service_of(&old));
        }
        self.dirty.extend(service_of(&event.object));
    }

    /// Brings the table up to date with the cache: only dirty Services are recomputed, and the
    /// table is copied only if one of them changed, so an unchanged table keeps its `Rc`.
    pub fn refresh(&mut self) {
        if self.dirty.is_empty() {
            return;
        }
        let dirty = std::mem::take(&mut self.dirty);
        let mut changes = Vec::new();
        for service in &dirty {
            let desired = rules_of(self.services(), self.slices(), service);
            changes.extend(service_changes(&self.table, service, desired));
        }
        if !changes.is_empty() {
            apply_changes(Rc::make_mut(&mut self.table), changes);
        }
    }

    /// The table as last refreshed.
    pub fn table(&self) -> &Rc<RulesTable> {
        &self.table
    }

    pub fn services(&self) -> &Store {
        self.services.as_reader()
    }

    pub fn slices(&self) -> &Store {
        self.slices.as_reader()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice, ObjectMeta, Service, ServicePort, ServiceSpec};
    use crate::store::ChangeType;

    fn service(name: &str) -> Rc<Object> {
        Rc::new(Object::Service(Service {
            metadata: ObjectMeta { name: name.into(), namespace: "default".into(), ..Default::default() },
            spec: ServiceSpec {
                cluster_ip: Some("10.96.0.20".into()),
                ports: vec![ServicePort { port: 80, ..Default::default() }],
                ..Default::default()
            }
            .into(),
            ..Default::default()
        }))
    }

    /// Service `service`'s slice at `resource_version` (a re-list compares those, as etcd gives
    /// every write a new one), its endpoints ready at `ips`.
    fn slice(service: &str, resource_version: u64, ips: &[&str]) -> Rc<Object> {
        let mut metadata =
            ObjectMeta { name: format!("{service}-abc").into(), namespace: "default".into(), resource_version, ..Default::default() };
        metadata.labels.insert(crate::model::LABEL_SERVICE_NAME.into(), service.into());
        Rc::new(Object::EndpointSlice(EndpointSlice {
            metadata,
            address_type: "IPv4".into(),
            endpoints: ips
                .iter()
                .map(|ip| Endpoint {
                    addresses: vec![ip.to_string()],
                    conditions: EndpointConditions { ready: Some(true), ..Default::default() },
                    ..Default::default()
                })
                .collect(),
            ports: vec![EndpointPort { name: Some(String::new()), protocol: Some("TCP".into()), port: Some(80) }],
        }))
    }

    fn event(type_: ChangeType, object: Rc<Object>) -> WatchEvent {
        WatchEvent { type_, object }
    }

    fn endpoints(cache: &SharedProxyCache, port_key: &str) -> Vec<String> {
        cache.table().get(port_key).map(|r| r.endpoints.iter().map(|e| e.address()).collect()).unwrap_or_default()
    }

    #[test]
    fn the_table_is_rebuilt_once_per_change_and_an_unchanged_service_keeps_its_rules() {
        let mut cache = SharedProxyCache::default();
        let (services, slices) = (WatchId(1), WatchId(2));
        cache.relist([services, slices], [vec![service("web"), service("api")], vec![slice("web", 1, &["10.244.0.5"])]]);
        cache.refresh();
        assert_eq!(endpoints(&cache, "default/web"), vec!["10.244.0.5:80"]);
        assert!(endpoints(&cache, "default/api").is_empty(), "a Service without endpoints rejects");
        let (before, api) = (cache.table().clone(), cache.table()["default/api"].clone());

        cache.apply(slices, event(ChangeType::Modified, slice("web", 2, &["10.244.0.5", "10.244.1.7"])));
        cache.refresh();
        assert_eq!(endpoints(&cache, "default/web"), vec!["10.244.0.5:80", "10.244.1.7:80"]);
        assert!(!Rc::ptr_eq(&before, cache.table()), "a new revision of the table");
        assert!(Rc::ptr_eq(&api, &cache.table()["default/api"]), "default/api was not rebuilt");
        assert_eq!(endpoints(&SharedProxyCache { table: before, ..Default::default() }, "default/web"), vec!["10.244.0.5:80"]);

        let after = cache.table().clone();
        cache.apply(slices, event(ChangeType::Modified, slice("web", 3, &["10.244.1.7", "10.244.0.5"])));
        cache.refresh();
        assert!(Rc::ptr_eq(&after, cache.table()), "the same rules: the same revision");

        cache.apply(services, event(ChangeType::Deleted, service("web")));
        cache.refresh();
        assert!(cache.table().get("default/web").is_none());
    }

    #[test]
    fn a_relist_marks_what_changed_while_it_was_not_watching() {
        let mut cache = SharedProxyCache::default();
        cache.relist([WatchId(1), WatchId(2)], [vec![service("web")], vec![slice("web", 4, &["10.244.0.5"])]]);
        cache.refresh();
        cache.close();
        assert!(cache.watches().is_none() && !cache.owns_watch(WatchId(1)));
        cache.apply(WatchId(2), event(ChangeType::Modified, slice("web", 5, &[])));
        cache.refresh();
        assert_eq!(endpoints(&cache, "default/web"), vec!["10.244.0.5:80"], "a closed watch's notification is not applied");
        cache.relist([WatchId(3), WatchId(4)], [vec![service("web")], vec![slice("web", 6, &["10.244.2.9"])]]);
        assert!(cache.owns_watch(WatchId(4)));
        cache.refresh();
        assert_eq!(endpoints(&cache, "default/web"), vec!["10.244.2.9:80"]);
    }

    #[test]
    fn a_kube_proxy_writes_the_shared_revision_only_when_its_machine_holds_another() {
        use crate::model::Time;
        use crate::runtime::Component;
        let mut cache = SharedProxyCache::default();
        let slices = WatchId(2);
        cache.relist([WatchId(1), slices], [vec![service("web")], vec![slice("web", 1, &["10.244.0.5"])]]);
        cache.refresh();
        let mut proxy = super::super::KubeProxy::new("node-1");
        let first = proxy.sync_shared(Time(1_000), &cache).expect("the first sync after a start is full");
        assert!(Rc::ptr_eq(&first, cache.table()));
        assert_eq!(proxy.loops()[0].last_action, "wrote the whole table: 1 service port");
        assert!(proxy.sync_shared(Time(2_000), &cache).is_none(), "the machine holds this revision already");

        cache.apply(slices, event(ChangeType::Modified, slice("web", 2, &["10.244.0.5", "10.244.1.7"])));
        cache.refresh();
        assert!(proxy.sync_shared(Time(3_000), &cache).is_some());
        assert_eq!(proxy.loops()[0].last_action, "default/web: 2 endpoints");
        // A table written privately with the same content is not written again.
        proxy.written = Rc::new((**cache.table()).clone());
        assert!(proxy.sync_shared(Time(4_000), &cache).is_none());
        assert_eq!(proxy.loops()[0].turns, 4);
        assert_eq!(proxy.loops()[0].last_action, "default/web: 2 endpoints", "a sync that writes nothing keeps the last words");
    }
}
