//! kube-proxy, one per node: the loop that keeps a routing table pointed at a Service's ready pods.
//!
//! It watches Services and EndpointSlices like any controller watches its kinds, and its
//! reconcile is the iptables proxier's `syncProxyRules`: for every service port, the endpoints
//! traffic may go to — the ready ones, or when none is ready the serving-and-terminating ones
//! (upstream's `CategorizeEndpoints`) — in address order. The rules it computes are not its own
//! memory: it hands each change to its node's machine as an effect (`Effect::ProgramRules`), and
//! connections are routed by what the machine holds. A stopped kube-proxy therefore leaves its
//! node routing by a stale table.
//!
//! Syncs run through a bounded-frequency runner, as upstream's: a change asks for a sync, which
//! runs at once if the last one was at least `minSyncPeriod` (1 s) ago and otherwise waits until
//! it is; with nothing changing it still syncs every `syncPeriod` (30 s). The first sync after a
//! start waits for both caches to sync and replaces the whole table. So a change to a Service's
//! endpoints reaches this node's table at most about a second (plus watch latency) after the
//! EndpointSlice controller writes it.
//!
//! Past teaching scale its watches may be shared with every other node's kube-proxy
//! (`shared.rs`): then a sync reads the one shared cache and table (`Ctx::shared_proxy`) instead
//! of its own informers', and writes that table whole; the runner and everything else stay its
//! own.

pub mod shared;

use crate::api::{ApiResult, FieldFilter, WatchEvent, WatchId};
use crate::model::{Duration, EndpointSlice, Kind, Object, Service, Time, LABEL_SERVICE_NAME};
use crate::net::{port_key, RuleEndpoint, RulesTable, RulesUpdate, ServiceRules};
use crate::runtime::informer::{Delta, Informer};
use crate::runtime::store::{service_name_value, Store, BY_SERVICE_NAME};
use crate::runtime::{Component, Ctx, LoopPhase, LoopStatus, RequestId};
use shared::SharedProxyCache;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// One service port's change to a table: its new rules, or `None` when it is gone.
type PortChange = (String, Option<Rc<ServiceRules>>);

/// `--iptables-min-sync-period`: the least time between two syncs.
pub const MIN_SYNC_PERIOD: Duration = Duration::secs(1);
/// `--iptables-sync-period`: a sync at least this often even when nothing changed.
pub const SYNC_PERIOD: Duration = Duration::secs(30);

pub struct KubeProxy {
    node: String,
    services: Informer,
    slices: Informer,
    /// Services (`NAMESPACE/NAME`) whose rules may have changed since the last sync
    /// (upstream's service and endpoint change trackers).
    dirty: BTreeSet<String>,
    /// The next sync replaces the whole table (the first after a start).
    full: bool,
    last_sync: Option<Time>,
    /// When the runner will sync next.
    next_sync: Option<Time>,
    /// What it last wrote to the machine, by port key: a sync sends only what differs. While its
    /// watches are shared, a revision of the shared table (the machine holds the same `Rc`).
    written: Rc<RulesTable>,
    /// The last sync that read the shared table and changed the machine: whether it was full,
    /// and the table before and after. Its words (`LoopStatus::last_action`) are worked out
    /// only when someone looks, so thousands of nodes adopting a revision compare no tables.
    shared_sync: Option<(bool, Rc<RulesTable>, Rc<RulesTable>)>,
    /// Whether its last call read the shared cache: if its watches then end, its informers'
    /// caches hold only what they listed, so they list again.
    reading_shared: bool,
    status: LoopStatus,
}

impl KubeProxy {
    pub fn new(node: &str) -> Self {
        KubeProxy {
            node: node.to_string(),
            // Services are only looked up by key and slices by Service: no other index, which
            // thousands of nodes would each build.
            services: Informer::with_indexers(Kind::Service, FieldFilter::All, &[]),
            slices: Informer::with_indexers(Kind::EndpointSlice, FieldFilter::All, &[BY_SERVICE_NAME]),
            dirty: BTreeSet::new(),
            full: true,
            last_sync: None,
            next_sync: None,
            written: Rc::default(),
            shared_sync: None,
            reading_shared: false,
            status: LoopStatus { name: "kube-proxy".into(), ..Default::default() },
        }
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    /// Handlers only note what changed and ask the runner for a sync.
    fn on_deltas(&mut self, now: Time, deltas: Vec<Delta>) {
        for delta in &deltas {
            let mut note = |o: &Object| {
                if let Some(s) = service_of(o) {
                    self.dirty.insert(s);
                }
            };
            if let Delta::Updated { old, .. } = delta {
                note(old);
            }
            note(delta.object());
        }
        if !deltas.is_empty() {
            self.status.phase = LoopPhase::Observe;
            self.request_sync(now);
        }
    }

    /// The bounded-frequency runner's `Run`: as soon as `minSyncPeriod` allows.
    fn request_sync(&mut self, now: Time) {
        let earliest = self.last_sync.map_or(now, |t| (t + MIN_SYNC_PERIOD).max(now));
        if self.next_sync.is_none_or(|t| earliest < t) {
            self.next_sync = Some(earliest);
        }
    }

    fn synced(&self) -> bool {
        self.services.has_synced() && self.slices.has_synced()
    }

    /// `syncProxyRules`: recompute the rules of every changed service and hand the difference
    /// to the machine — or, with its watches shared, adopt the shared table's current revision.
    fn sync(&mut self, ctx: &mut Ctx) {
        self.next_sync = None;
        if !self.synced() {
            return;
        }
        match ctx.shared_proxy {
            Some(shared) => {
                if let Some(table) = self.sync_shared(ctx.now, shared) {
                    ctx.program_table(table);
                }
                // With no sync pending, only the next change to the shared cache can ask for one.
                ctx.await_shared_change();
            }
            // Its informers left what they listed to the shared cache, which its watches are
            // not open on yet: the sync waits for them (joining asks for it again).
            None if !self.keeps_caches() => {}
            None => self.sync_private(ctx),
        }
    }

    fn keeps_caches(&self) -> bool {
        self.services.keeps_cache() && self.slices.keeps_cache()
    }

    /// What every call starts with: whether the shared cache is on offer decides whether the
    /// informers' next lists are kept. Returns whether the previous call read the shared cache.
    fn observe(&mut self, ctx: &Ctx) -> bool {
        for informer in [&mut self.services, &mut self.slices] {
            informer.keep_cache_from_next_list(!ctx.shared_watch_offered);
        }
        std::mem::replace(&mut self.reading_shared, ctx.shared_proxy.is_some())
    }

    /// An informer that kept nothing but will not be shared after all (a watch fault came
    /// between its list and its watch) lists again, keeping what it lists this time.
    fn relist_if_unshared(&mut self, ctx: &mut Ctx) {
        if ctx.shared_watch_offered {
            return;
        }
        for informer in [&mut self.services, &mut self.slices] {
            if !informer.keeps_cache() && informer.is_watching() {
                informer.relist_now(ctx);
            }
        }
    }

    /// A sync from its own informers: the rules of each changed service, and only what differs.
    fn sync_private(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        let services: Vec<String> = if self.full {
            let mut all: BTreeSet<String> = self.services.iter().filter_map(|o| service_of(o)).collect();
            all.extend(self.written.values().map(|r| r.service.clone()));
            all.into_iter().collect()
        } else {
            std::mem::take(&mut self.dirty).into_iter().collect()
        };
        self.dirty.clear();
        let mut changed = Vec::new();
        for service in &services {
            let desired = rules_of(&self.services, &self.slices, service);
            let changes = service_changes(&self.written, service, desired);
            if !changes.is_empty() {
                apply_changes(Rc::make_mut(&mut self.written), changes.iter().cloned());
                changed.extend(changes);
            }
        }
        let full = std::mem::replace(&mut self.full, false);
        if full {
            changed = self.written.iter().map(|(k, r)| (k.clone(), Some(r.clone()))).collect();
        }
        self.finish_sync(now);
        if full || !changed.is_empty() {
            self.shared_sync = None;
            self.status.last_action = describe_sync(full, &changed, self.written.len());
            self.status.last_action_at = Some(now);
            ctx.program_rules(RulesUpdate { full, changed });
        }
    }

    /// A sync from the shared cache: the table to write whole, if the machine's differs.
    fn sync_shared(&mut self, now: Time, shared: &SharedProxyCache) -> Option<Rc<RulesTable>> {
        self.dirty.clear();
        let table = shared.table();
        let full = std::mem::replace(&mut self.full, false);
        // Two revisions may hold the same rules (a pod turned unready and back), and so may a
        // table written privately: like a private sync, write only what differs.
        let same = Rc::ptr_eq(table, &self.written) || *table == self.written;
        self.finish_sync(now);
        if full || !same {
            let before = std::mem::replace(&mut self.written, table.clone());
            self.shared_sync = Some((full, before, table.clone()));
            self.status.last_action_at = Some(now);
            return Some(table.clone());
        }
        None
    }

    fn finish_sync(&mut self, now: Time) {
        self.status.turns += 1;
        self.status.phase = LoopPhase::Idle;
        self.last_sync = Some(now);
    }
}

/// What the rules of one service should be now, by port key, read from these caches (nothing
/// for a service that is gone, headless or an ExternalName, which kube-proxy does not program).
fn rules_of(services: &Store, slices: &Store, service: &str) -> BTreeMap<String, ServiceRules> {
    let Some((namespace, name)) = service.split_once('/') else { return BTreeMap::new() };
    let key = crate::model::ObjectKey::new(Kind::Service, namespace, name);
    let Some(svc) = services.get(&key).and_then(|o| o.as_service()) else { return BTreeMap::new() };
    let Some(cluster_ip) = programmable_ip(svc) else { return BTreeMap::new() };
    let slices: Vec<&EndpointSlice> = slices.by_index(BY_SERVICE_NAME.name, service).filter_map(|o| o.as_endpoint_slice()).collect();
    svc.spec
        .ports
        .iter()
        .map(|p| {
            let protocol = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            let (endpoints, terminating_fallback) = usable_endpoints(&slices, &p.name, &protocol);
            let rules = ServiceRules {
                service: service.to_string(),
                port_name: p.name.clone(),
                protocol,
                cluster_ip: cluster_ip.to_string(),
                port: p.port,
                node_port: p.node_port,
                endpoints,
                terminating_fallback,
            };
            (port_key(service, &p.name), rules)
        })
        .collect()
}

/// What turns `table`'s ports of `service` into `desired`: its ports that are gone, then those
/// new or different, in key order. Unchanged ports are left out, so they keep their `Rc`.
fn service_changes(table: &RulesTable, service: &str, desired: BTreeMap<String, ServiceRules>) -> Vec<PortChange> {
    let gone = table
        .range(service.to_string()..)
        .take_while(|(k, _)| k.starts_with(service))
        .filter(|(k, r)| r.service == service && !desired.contains_key(*k))
        .map(|(k, _)| (k.clone(), None));
    let mut changes: Vec<PortChange> = gone.collect();
    for (key, rules) in desired {
        if table.get(&key).is_none_or(|w| **w != rules) {
            changes.push((key, Some(Rc::new(rules))));
        }
    }
    changes
}

fn apply_changes(table: &mut RulesTable, changes: impl IntoIterator<Item = PortChange>) {
    for (key, rules) in changes {
        match rules {
            Some(r) => table.insert(key, r),
            None => table.remove(&key),
        };
    }
}

/// The ports whose rules differ between two tables, as `describe_sync` words them.
fn changes_between(before: &RulesTable, after: &RulesTable) -> Vec<PortChange> {
    let gone = before.keys().filter(|k| !after.contains_key(*k)).map(|k| (k.clone(), None));
    let new = after.iter().filter(|(k, r)| before.get(*k).is_none_or(|b| b != *r)).map(|(k, r)| (k.clone(), Some(r.clone())));
    gone.chain(new).collect()
}

/// The Service an object is about: a Service itself, or the one an EndpointSlice is labelled for.
fn service_of(o: &Object) -> Option<String> {
    let meta = o.meta();
    match o {
        Object::Service(_) => Some(service_name_value(&meta.namespace, &meta.name)),
        Object::EndpointSlice(_) => meta.labels.get(LABEL_SERVICE_NAME).map(|n| service_name_value(&meta.namespace, n)),
        _ => None,
    }
}

/// The cluster IP kube-proxy programs: none for headless and ExternalName services.
fn programmable_ip(svc: &Service) -> Option<&str> {
    if svc.type_() == "ExternalName" || svc.is_headless() {
        return None;
    }
    svc.spec.cluster_ip.as_deref().filter(|ip| !ip.is_empty())
}

/// The endpoints of one service port across its slices, as `CategorizeEndpoints` picks them for
/// cluster traffic: the ready ones; if there are none, those serving and terminating. An unset
/// `ready` counts as ready and an unset `serving` as `ready`, as the API documents. Sorted by
/// address and without duplicates (an endpoint may sit in two slices while it moves).
fn usable_endpoints(slices: &[&EndpointSlice], port_name: &str, protocol: &str) -> (Vec<RuleEndpoint>, bool) {
    let mut ready = BTreeMap::new();
    let mut terminating = BTreeMap::new();
    for slice in slices {
        let Some(port) = slice
            .ports
            .iter()
            .find(|p| p.name.as_deref().unwrap_or("") == port_name && p.protocol.as_deref().unwrap_or("TCP") == protocol)
            .and_then(|p| p.port)
        else {
            continue;
        };
        for e in &slice.endpoints {
            let Some(ip) = e.addresses.first() else { continue };
            let is_ready = e.conditions.ready.unwrap_or(true);
            let serving = e.conditions.serving.unwrap_or(is_ready);
            let endpoint = RuleEndpoint { ip: ip.clone(), port, pod: e.target_ref.as_ref().map(|r| r.name.to_string()) };
            if is_ready {
                ready.insert(endpoint.address(), endpoint);
            } else if serving && e.conditions.terminating.unwrap_or(false) {
                terminating.insert(endpoint.address(), endpoint);
            }
        }
    }
    if ready.is_empty() && !terminating.is_empty() {
        (terminating.into_values().collect(), true)
    } else {
        (ready.into_values().collect(), false)
    }
}

/// The loop's last action in words: "default/web: 3 endpoints" or "wrote 4 service ports".
fn describe_sync(full: bool, changed: &[PortChange], total: usize) -> String {
    if full {
        return format!("wrote the whole table: {total} service port{}", if total == 1 { "" } else { "s" });
    }
    match changed {
        [(key, Some(r))] => match r.endpoints.len() {
            0 => format!("{key}: no endpoints, rejecting"),
            1 => format!("{key}: 1 endpoint"),
            n => format!("{key}: {n} endpoints"),
        },
        [(key, None)] => format!("{key}: removed"),
        _ => format!("updated {} service ports", changed.len()),
    }
}

impl Component for KubeProxy {
    fn name(&self) -> String {
        format!("kube-proxy-{}", self.node)
    }

    /// Boots the process: nothing in memory survives. The machine's table does, until the first
    /// sync replaces it.
    fn start(&mut self, ctx: &mut Ctx) {
        let node = std::mem::take(&mut self.node);
        *self = KubeProxy::new(&node);
        self.observe(ctx);
        self.services.start(ctx);
        self.slices.start(ctx);
        self.status.last_action = format!("started on {node}");
        self.status.last_action_at = Some(ctx.now);
    }

    fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) {
        self.observe(ctx);
        let deltas = if self.services.owns_request(id) {
            self.services.handle_response(ctx, id, result)
        } else if self.slices.owns_request(id) {
            self.slices.handle_response(ctx, id, result)
        } else {
            return;
        };
        self.on_deltas(ctx.now, deltas);
        self.relist_if_unshared(ctx);
        // A watch that opened shared makes the shared cache its own: sync from it, then hear its
        // changes.
        if (self.full || ctx.shared_proxy.is_some()) && self.synced() {
            self.request_sync(ctx.now);
        }
    }

    /// The shared cache changed since this kube-proxy's last sync: the runner's `Run`, as a
    /// delta on its own watch would ask.
    fn handle_shared_change(&mut self, ctx: &mut Ctx) {
        self.observe(ctx);
        self.status.phase = LoopPhase::Observe;
        self.request_sync(ctx.now);
    }

    fn handle_watch_event(&mut self, ctx: &mut Ctx, watch: WatchId, event: WatchEvent) {
        self.observe(ctx);
        let delta = if self.services.owns_watch(watch) {
            self.services.handle_watch_event(event)
        } else if self.slices.owns_watch(watch) {
            self.slices.handle_watch_event(event)
        } else {
            None
        };
        self.on_deltas(ctx.now, delta.into_iter().collect());
    }

    fn handle_watch_closed(&mut self, ctx: &mut Ctx, watch: WatchId) {
        // Read from the shared cache, its informers got only their list (and its replay): a
        // re-watch from there would replay what the node's table already shows, so they list.
        let was_reading_shared = self.observe(ctx);
        for informer in [&mut self.services, &mut self.slices] {
            if was_reading_shared {
                informer.handle_watch_closed_relist(ctx.now, watch);
            } else {
                informer.handle_watch_closed(ctx.now, watch);
            }
        }
    }

    fn poll(&mut self, ctx: &mut Ctx) {
        self.observe(ctx);
        self.relist_if_unshared(ctx);
        self.services.poll(ctx);
        self.slices.poll(ctx);
        let due = self.next_sync.is_some_and(|t| t <= ctx.now);
        let periodic = self.last_sync.is_some_and(|t| t + SYNC_PERIOD <= ctx.now);
        if due || periodic {
            self.sync(ctx);
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        let periodic = self.last_sync.map(|t| t + SYNC_PERIOD);
        [self.next_sync, periodic, self.services.next_wakeup(), self.slices.next_wakeup()].into_iter().flatten().min()
    }

    fn is_busy(&self) -> bool {
        self.next_sync.is_some() || !self.services.is_watching() || !self.slices.is_watching()
    }

    fn loops(&self) -> Vec<LoopStatus> {
        let mut status = self.status.clone();
        status.queue_depth = self.dirty.len();
        if let Some((full, before, after)) = &self.shared_sync {
            status.last_action = describe_sync(*full, &changes_between(before, after), after.len());
        }
        vec![status]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Endpoint, EndpointConditions, EndpointPort, ObjectMeta};

    /// An endpoint in a test slice: address, then its ready, serving and terminating conditions.
    type TestEndpoint<'a> = (&'a str, Option<bool>, Option<bool>, Option<bool>);

    fn slice(endpoints: &[TestEndpoint]) -> EndpointSlice {
        EndpointSlice {
            metadata: ObjectMeta { name: "web-abc".into(), namespace: "default".into(), ..Default::default() },
            address_type: "IPv4".into(),
            endpoints: endpoints
                .iter()
                .map(|(ip, ready, serving, terminating)| Endpoint {
                    addresses: vec![ip.to_string()],
                    conditions: EndpointConditions { ready: *ready, serving: *serving, terminating: *terminating },
                    ..Default::default()
                })
                .collect(),
            ports: vec![EndpointPort { name: Some(String::new()), protocol: Some("TCP".into()), port: Some(80) }],
        }
    }

    fn ips(v: &[RuleEndpoint]) -> Vec<&str> {
        v.iter().map(|e| e.ip.as_str()).collect()
    }

    #[test]
    fn only_ready_endpoints_get_traffic_in_address_order() {
        let s = slice(&[
            ("10.244.1.3", Some(true), Some(true), Some(false)),
            ("10.244.0.9", None, None, None),
            ("10.244.0.4", Some(false), Some(false), Some(false)),
        ]);
        let (e, fallback) = usable_endpoints(&[&s], "", "TCP");
        assert_eq!((ips(&e), fallback), (vec!["10.244.0.9", "10.244.1.3"], false));
    }

    #[test]
    fn with_no_ready_endpoint_the_serving_terminating_ones_are_used() {
        let s = slice(&[("10.244.1.3", Some(false), Some(true), Some(true)), ("10.244.0.4", Some(false), Some(false), Some(true))]);
        let (e, fallback) = usable_endpoints(&[&s], "", "TCP");
        assert_eq!((ips(&e), fallback), (vec!["10.244.1.3"], true));
        let none = slice(&[("10.244.0.4", Some(false), Some(false), Some(false))]);
        assert_eq!(usable_endpoints(&[&none], "", "TCP"), (vec![], false));
    }

    #[test]
    fn a_port_is_matched_by_name_and_protocol() {
        let s = slice(&[("10.244.1.3", Some(true), None, None)]);
        assert!(usable_endpoints(&[&s], "http", "TCP").0.is_empty());
        assert!(usable_endpoints(&[&s], "", "UDP").0.is_empty());
    }

    #[test]
    fn the_runner_waits_min_sync_period_after_a_sync() {
        let mut p = KubeProxy::new("node-1");
        p.request_sync(Time(5_000));
        assert_eq!(p.next_sync, Some(Time(5_000)));
        (p.last_sync, p.next_sync) = (Some(Time(5_000)), None);
        p.request_sync(Time(5_300));
        assert_eq!(p.next_sync, Some(Time(6_000)), "not before last + 1 s");
        p.request_sync(Time(5_900));
        assert_eq!(p.next_sync, Some(Time(6_000)), "one sync covers every change until then");
        (p.last_sync, p.next_sync) = (Some(Time(6_000)), None);
        assert_eq!(p.next_wakeup(), Some(Time(36_000)), "the 30 s periodic sync");
    }
}
