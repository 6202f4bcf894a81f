//! The EndpointSlice controller (pkg/controller/endpointslice): keeps, for each Service with a
//! selector, EndpointSlices listing the pods it selects — with the conditions kube-proxy reads
//! to pick backends — at most 100 endpoints a slice.
//!
//! Handlers only enqueue Service keys: a Service's own change, a pod's (mapped to the Services
//! whose selector matches its old or new labels) and a change to a slice this controller manages
//! (by its `kubernetes.io/service-name` label). `reconcile` compares the desired endpoints, grouped
//! by their resolved ports, with the slices the cache holds, and writes the difference as
//! upstream's reconciler does: keep what is unchanged, update slices that lost or changed
//! endpoints, fill them before creating new ones, turn creates into updates of slices that would
//! be deleted, and keep one empty placeholder slice for a Service without endpoints.
//!
//! Like upstream's `endpointSliceTracker`, it remembers the generation of every slice it wrote and
//! does not act on a cache that has not caught up with its own writes (it would create twice).

use super::{Caches, Call, Controller, Outcome, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::informer::Delta;
use crate::runtime::store::{label_value, service_name_value, BY_POD_LABEL, BY_SELECTOR, BY_SERVICE_NAME};
use std::collections::BTreeMap;

pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
pub const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
pub const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";

/// The pods `svc` selects, in key order (none for a Service without a selector). The pod cache's
/// label index gives the pods holding the selector's rarest pair; the rest of the selector is
/// checked on those alone.
pub(crate) fn selected_pods<'a>(caches: &Caches<'a>, svc: &'a Service) -> impl Iterator<Item = &'a Pod> + 'a {
    let selector = &svc.spec.selector;
    let pods = caches.get(Kind::Pod).expect("the controller watches pods");
    let namespace = &svc.metadata.namespace;
    let rarest =
        selector.iter().map(|(k, v)| label_value(namespace, k, v)).min_by_key(|value| pods.count_in_index(BY_POD_LABEL.name, value));
    rarest
        .into_iter()
        .flat_map(move |value| pods.by_index(BY_POD_LABEL.name, &value).collect::<Vec<_>>())
        .filter_map(|o| o.as_pod())
        .filter(move |p| selector.iter().all(|(k, v)| p.metadata.labels.get(k) == Some(v)))
}

/// The Services in `pod`'s namespace whose selector matches its labels (`GetPodServiceMemberships`),
/// in key order: those the selector index holds under one of the pod's labels, checked in full.
pub(crate) fn services_selecting(caches: &Caches, pod: &Object) -> Vec<ObjectKey> {
    let meta = pod.meta();
    let services = &caches[Kind::Service];
    let mut keys: Vec<ObjectKey> = meta
        .labels
        .iter()
        .flat_map(|(k, v)| services.by_index(BY_SELECTOR.name, &label_value(&meta.namespace, k, v)).collect::<Vec<_>>())
        .filter_map(|o| o.as_service())
        .filter(|s| !s.spec.selector.is_empty() && s.spec.selector.iter().all(|(k, v)| meta.labels.get(k) == Some(v)))
        .map(|s| ObjectKey::of(Kind::Service, &s.metadata))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The handlers' common part: which Services a pod or Service change concerns.
pub(crate) fn keys_for(caches: &Caches, delta: &Delta) -> Vec<ObjectKey> {
    match (delta.object().kind(), delta) {
        (Kind::Service, _) => vec![delta.object().key()],
        (Kind::Pod, Delta::Updated { old, new }) => {
            let mut keys = services_selecting(caches, new);
            if old.meta().labels != new.meta().labels {
                keys.extend(services_selecting(caches, old));
                keys.sort();
                keys.dedup();
            }
            keys
        }
        (Kind::Pod, _) => services_selecting(caches, delta.object()),
        _ => Vec::new(),
    }
}

/// `ShouldPodBeInEndpoints`: a pod with an IP that has not finished, and (unless
/// `include_terminating`) is not being deleted.
pub(crate) fn should_pod_be_in_endpoints(pod: &Pod, include_terminating: bool) -> bool {
    pod.status.pod_ip.as_deref().is_some_and(|ip| !ip.is_empty())
        && !pod.is_terminal()
        && (include_terminating || pod.metadata.deletion_timestamp.is_none())
}

/// `podutil.FindPort`: a named target port is looked up among the pod's container ports (same
/// name and protocol); a number is used as it is.
pub(crate) fn find_port(pod: &Pod, port: &ServicePort) -> Option<i64> {
    match port.target_port.as_ref() {
        Some(IntOrString::String(name)) => {
            let protocol = port.protocol.as_deref().unwrap_or("TCP");
            pod.spec
                .containers
                .iter()
                .flat_map(|c| &c.ports)
                .find(|cp| cp.name.as_deref() == Some(name.as_str()) && cp.protocol.as_deref().unwrap_or("TCP") == protocol)
                .map(|cp| cp.container_port)
        }
        Some(IntOrString::Int(n)) => Some(*n),
        None => Some(port.port),
    }
}

/// The ports of the Service as `pod` serves them; a port the pod cannot resolve is left out.
fn endpoint_ports(svc: &Service, pod: &Pod) -> Vec<EndpointPort> {
    svc.spec
        .ports
        .iter()
        .filter_map(|sp| {
            let port = find_port(pod, sp)?;
            Some(EndpointPort { name: Some(sp.name.clone()), protocol: sp.protocol.clone().or(Some("TCP".into())), port: Some(port) })
        })
        .collect()
}

pub(crate) fn pod_reference(pod: &Pod) -> ObjectReference {
    ObjectReference {
        kind: "Pod".into(),
        namespace: pod.metadata.namespace.clone(),
        name: pod.metadata.name.clone(),
        uid: pod.metadata.uid.clone(),
        ..Default::default()
    }
}

/// `podToEndpoint`: serving is the pod's readiness, terminating its deletion, and ready is
/// serving and not terminating — or always, with `publishNotReadyAddresses`.
pub fn pod_to_endpoint(svc: &Service, pod: &Pod, zone: Option<String>) -> Endpoint {
    let serving = pod.is_ready();
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let ready = svc.spec.publish_not_ready_addresses || (serving && !terminating);
    Endpoint {
        addresses: pod.status.pod_ip.iter().cloned().collect(),
        conditions: EndpointConditions { ready: Some(ready), serving: Some(serving), terminating: Some(terminating) },
        target_ref: Some(pod_reference(pod)),
        node_name: pod.node_name().map(str::to_string),
        zone,
    }
}

/// The labels of a Service's slices: the Service's own, plus the controller's two (and the
/// headless marker), as `setEndpointSliceLabels` builds them.
fn slice_labels(svc: &Service) -> StringMap {
    let mut labels: StringMap = (*svc.metadata.labels).clone();
    labels.insert(LABEL_SERVICE_NAME.into(), svc.metadata.name.to_string());
    labels.insert(LABEL_MANAGED_BY.into(), CONTROLLER_NAME.into());
    if svc.is_headless() {
        labels.insert(LABEL_HEADLESS.into(), String::new());
    }
    labels
}

fn new_slice(svc: &Service, ports: Vec<EndpointPort>, endpoints: Vec<Endpoint>) -> EndpointSlice {
    let owner = OwnerReference {
        api_version: "v1".into(),
        kind: "Service".into(),
        name: svc.metadata.name.to_string(),
        uid: svc.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    EndpointSlice {
        metadata: ObjectMeta {
            generate_name: format!("{}-", svc.metadata.name).into(),
            namespace: svc.metadata.namespace.clone(),
            labels: slice_labels(svc).into(),
            owner_references: vec![owner].into(),
            ..Default::default()
        },
        address_type: "IPv4".into(),
        endpoints,
        ports,
    }
}

/// What one reconcile decided to write.
#[derive(Debug, Default)]
struct Plan {
    create: Vec<EndpointSlice>,
    update: Vec<EndpointSlice>,
    delete: Vec<EndpointSlice>,
}

/// The desired endpoints grouped by their ports (pods resolving a named port differently land
/// in different slices), in port order then pod key order.
fn desired_endpoints(svc: &Service, caches: &Caches) -> BTreeMap<Vec<EndpointPort>, Vec<Endpoint>> {
    let mut groups: BTreeMap<Vec<EndpointPort>, Vec<Endpoint>> = BTreeMap::new();
    for pod in selected_pods(caches, svc).filter(|p| should_pod_be_in_endpoints(p, true)) {
        let zone = pod
            .node_name()
            .and_then(|n| caches[Kind::Node].get(&ObjectKey::new(Kind::Node, "", n)))
            .and_then(|n| n.meta().labels.get("topology.kubernetes.io/zone").cloned());
        groups.entry(endpoint_ports(svc, pod)).or_default().push(pod_to_endpoint(svc, pod, zone));
    }
    groups
}

fn endpoint_key(e: &Endpoint) -> &str {
    e.addresses.first().map(String::as_str).unwrap_or_default()
}

/// `reconcileByPortMapping` for one group of ports: the existing slices with those ports keep
/// what is still desired; the rest goes into slices being updated, then into one unchanged
/// slice with room for all of it, then into new slices of at most 100.
fn reconcile_group(
    svc: &Service,
    ports: &[EndpointPort],
    desired: Vec<Endpoint>,
    existing: Vec<&EndpointSlice>,
    labels: &StringMap,
    plan: &mut Plan,
) {
    let mut wanted: BTreeMap<String, Endpoint> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for e in desired {
        order.push(endpoint_key(&e).to_string());
        wanted.insert(endpoint_key(&e).to_string(), e);
    }
    let mut updating: Vec<EndpointSlice> = Vec::new();
    let mut unchanged: Vec<&EndpointSlice> = Vec::new();
    for slice in existing {
        let mut kept = Vec::new();
        let mut changed = *slice.metadata.labels != *labels;
        for e in &slice.endpoints {
            match wanted.remove(endpoint_key(e)) {
                Some(d) => {
                    changed |= d != *e;
                    kept.push(d);
                }
                None => changed = true,
            }
        }
        if kept.is_empty() {
            plan.delete.push(slice.clone());
        } else if changed {
            let mut next = slice.clone();
            next.endpoints = kept;
            next.metadata.labels = labels.clone().into();
            updating.push(next);
        } else {
            unchanged.push(slice);
        }
    }
    let mut rest: Vec<Endpoint> = order.iter().filter_map(|k| wanted.remove(k)).collect();
    for slice in &mut updating {
        let room = MAX_ENDPOINTS_PER_SLICE.saturating_sub(slice.endpoints.len()).min(rest.len());
        slice.endpoints.extend(rest.drain(..room));
    }
    if !rest.is_empty() {
        // The fullest unchanged slice that can take everything left, so as few slices change.
        unchanged.sort_by_key(|s| std::cmp::Reverse(s.endpoints.len()));
        if let Some(slice) = unchanged.iter().find(|s| s.endpoints.len() + rest.len() <= MAX_ENDPOINTS_PER_SLICE) {
            let mut next = (*slice).clone();
            next.endpoints.append(&mut rest);
            updating.push(next);
        }
    }
    while !rest.is_empty() {
        let chunk: Vec<Endpoint> = rest.drain(..rest.len().min(MAX_ENDPOINTS_PER_SLICE)).collect();
        plan.create.push(new_slice(svc, ports.to_vec(), chunk));
    }
    plan.update.extend(updating);
}

/// The whole of `reconcile` for one Service: every group, slices whose ports nobody wants
/// deleted, the placeholder, and creates turned into updates of slices that would go.
fn plan(svc: &Service, caches: &Caches, existing: &[&EndpointSlice]) -> Plan {
    let labels = slice_labels(svc);
    let desired = desired_endpoints(svc, caches);
    let mut plan = Plan::default();
    for slice in existing.iter().filter(|s| !desired.contains_key(&s.ports)) {
        plan.delete.push((*slice).clone());
    }
    for (ports, endpoints) in desired {
        let mine: Vec<&EndpointSlice> = existing.iter().copied().filter(|s| s.ports == ports).collect();
        reconcile_group(svc, &ports, endpoints, mine, &labels, &mut plan);
    }
    if existing.len() == plan.delete.len() && plan.create.is_empty() {
        let placeholder = new_slice(svc, Vec::new(), Vec::new());
        let is_placeholder = |s: &EndpointSlice| s.endpoints.is_empty() && s.ports.is_empty() && *s.metadata.labels == labels;
        if plan.delete.len() == 1 && is_placeholder(&plan.delete[0]) {
            plan.delete.clear();
        } else {
            plan.create.push(placeholder);
        }
    }
    while let (Some(_), Some(_)) = (plan.create.last(), plan.delete.first()) {
        let gone = plan.delete.remove(0);
        let mut slice = plan.create.pop().expect("checked");
        slice.metadata = ObjectMeta { labels: slice.metadata.labels.clone(), ..gone.metadata.clone() };
        plan.update.push(slice);
    }
    plan
}

#[derive(Debug, Default)]
pub struct EndpointSliceController {
    /// Per Service, the generation of each slice it last wrote (`None`: deleted), until the
    /// cache shows it.
    tracker: BTreeMap<ObjectKey, BTreeMap<Name, Option<i64>>>,
}

impl EndpointSliceController {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the cache is behind this controller's own writes for `svc`; forgets what it
    /// has caught up with.
    fn stale(&mut self, svc: &ObjectKey, slices: &[&EndpointSlice]) -> bool {
        let Some(written) = self.tracker.get_mut(svc) else { return false };
        written.retain(|name, generation| {
            let cached = slices.iter().find(|s| s.metadata.name == *name);
            match (generation, cached) {
                (Some(g), Some(s)) => s.metadata.generation < *g,
                (Some(_), None) => true,
                (None, cached) => cached.is_some(),
            }
        });
        let stale = !written.is_empty();
        if !stale {
            self.tracker.remove(svc);
        }
        stale
    }
}

/// The slices this controller manages for the Service `key`, in name order.
fn managed_slices<'a>(caches: &Caches<'a>, key: &'a ObjectKey) -> Vec<&'a EndpointSlice> {
    let slices = caches.get(Kind::EndpointSlice).expect("the controller watches EndpointSlices");
    slices
        .by_index(BY_SERVICE_NAME.name, &service_name_value(&key.namespace, &key.name))
        .filter_map(|o| o.as_endpoint_slice())
        .filter(|s| s.metadata.labels.get(LABEL_MANAGED_BY).map(String::as_str) == Some(CONTROLLER_NAME))
        .collect()
}

impl Controller for EndpointSliceController {
    fn name(&self) -> &'static str {
        "endpointslice-controller"
    }
    fn watches(&self) -> &'static [Kind] {
        &[Kind::Service, Kind::Pod, Kind::EndpointSlice, Kind::Node]
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        match delta.object().as_endpoint_slice() {
            Some(slice) => {
                let l = &slice.metadata.labels;
                let Some(svc) = l.get(LABEL_SERVICE_NAME).filter(|_| l.get(LABEL_MANAGED_BY).map(String::as_str) == Some(CONTROLLER_NAME))
                else {
                    return Vec::new();
                };
                let key = ObjectKey::new(Kind::Service, &slice.metadata.namespace, svc);
                // A deletion by anyone settles what the tracker waited for about this slice.
                if let (Delta::Deleted(_), Some(written)) = (delta, self.tracker.get_mut(&key)) {
                    written.remove(&slice.metadata.name);
                }
                vec![key]
            }
            None => keys_for(caches, delta),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, _now: Time) -> Sync {
        let Some(svc) = caches[Kind::Service].get(key).and_then(|o| o.as_service()) else {
            // The garbage collector deletes the slices through their owner reference.
            self.tracker.remove(key);
            return Sync::nothing();
        };
        if svc.spec.selector.is_empty() || svc.type_() == "ExternalName" || svc.metadata.is_deleting() {
            return Sync::nothing();
        }
        let existing = managed_slices(caches, key);
        if self.stale(key, &existing) {
            return Sync { summary: Some(format!("Service {}: EndpointSlice informer cache is out of date", key.name)), ..Sync::nothing() };
        }
        let plan = plan(svc, caches, &existing);
        let ready: usize =
            plan.update.iter().chain(&plan.create).flat_map(|s| &s.endpoints).filter(|e| e.conditions.ready == Some(true)).count();
        let writes = plan.create.len() + plan.update.len() + plan.delete.len();
        if writes == 0 {
            return Sync { summary: Some(format!("Service {}: EndpointSlices up to date", key.name)), ..Sync::nothing() };
        }
        let mut calls: Vec<Call> = plan.create.into_iter().map(|s| Call::new(ApiRequest::Create(Object::EndpointSlice(s)))).collect();
        calls.extend(plan.update.into_iter().map(|s| Call::new(ApiRequest::Update(Object::EndpointSlice(s)))));
        calls.extend(plan.delete.into_iter().map(|s| {
            let d = DeleteRequest {
                uid: Some(s.metadata.uid.to_string()),
                ..DeleteRequest::new(ObjectKey::of(Kind::EndpointSlice, &s.metadata))
            };
            Call::new(ApiRequest::Delete(d))
        }));
        Sync::with_steps(vec![calls], format!("Service {}: {writes} EndpointSlice writes, {ready} ready endpoints changed", key.name))
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &Outcome) {
        let Outcome::Done(object) = outcome else { return };
        let generation = match call.request {
            ApiRequest::Delete(_) => None,
            _ => Some(object.meta().generation),
        };
        self.tracker.entry(key.clone()).or_default().insert(object.meta().name.clone(), generation);
    }

    fn reset(&mut self) {
        self.tracker.clear();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::runtime::informer::Informer;

    pub(crate) fn service(name: &str, selector: &[(&str, &str)], port: i64, target: IntOrString) -> Service {
        let mut svc = Service::default();
        svc.metadata.name = name.into();
        svc.metadata.namespace = "default".into();
        svc.metadata.uid = format!("uid-{name}").into();
        svc.spec.selector = selector.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        svc.spec.ports = vec![ServicePort { port, target_port: Some(target), protocol: Some("TCP".into()), ..Default::default() }];
        svc
    }

    pub(crate) fn pod(name: &str, ip: &str, ready: bool) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.uid = format!("uid-{name}").into();
        p.metadata.labels = [("app".to_string(), "web".to_string())].into_iter().collect::<StringMap>().into();
        p.spec.node_name = Some("node-1".into());
        let mut c = Container { name: "web".into(), image: "nginx".into(), ..Default::default() };
        c.ports = vec![ContainerPort { container_port: 8080, name: Some("http".into()), ..Default::default() }];
        p.spec.containers = vec![c].into();
        p.status.phase = Some(PodPhase::Running);
        p.status.pod_ip = (!ip.is_empty()).then(|| ip.to_string());
        let status = if ready { "True" } else { "False" };
        p.status.conditions = vec![PodCondition { type_: "Ready".into(), status: status.into(), ..Default::default() }];
        p
    }

    pub(crate) struct World {
        pub services: Informer,
        pub pods: Informer,
        pub slices: Informer,
        pub nodes: Informer,
        pub endpoints: Informer,
    }

    impl World {
        pub(crate) fn new(svc: Service, pods: Vec<Pod>, slices: Vec<EndpointSlice>) -> Self {
            World {
                services: Informer::from_objects(Kind::Service, [Object::Service(svc)]),
                pods: Informer::from_objects(Kind::Pod, pods.into_iter().map(Object::Pod)),
                slices: Informer::from_objects(Kind::EndpointSlice, slices.into_iter().map(Object::EndpointSlice)),
                nodes: Informer::from_objects(Kind::Node, []),
                endpoints: Informer::from_objects(Kind::Endpoints, []),
            }
        }
        pub(crate) fn caches(&self) -> Caches<'_> {
            Caches::new([&self.services, &self.pods, &self.slices, &self.nodes, &self.endpoints].map(|i| i.store()))
        }
    }

    fn created(sync: &Sync) -> Vec<EndpointSlice> {
        sync.steps
            .iter()
            .flatten()
            .filter_map(|c| match &c.request {
                ApiRequest::Create(Object::EndpointSlice(s)) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }

    fn reconcile(world: &World) -> Sync {
        EndpointSliceController::new().reconcile(&ObjectKey::new(Kind::Service, "default", "web"), &world.caches(), Time(0))
    }

    #[test]
    fn pod_to_endpoint_marks_a_terminating_pod_not_ready_serving_and_terminating() {
        let svc = service("web", &[("app", "web")], 80, IntOrString::String("http".into()));
        let mut gone = pod("web-b", "10.244.0.3", true);
        gone.metadata.deletion_timestamp = Some(Time(1_000));
        let world = World::new(svc, vec![pod("web-a", "10.244.0.2", true), gone, pod("web-c", "10.244.0.4", false)], vec![]);
        let slices = created(&reconcile(&world));
        assert_eq!(slices.len(), 1);
        let s = &slices[0];
        assert_eq!(s.metadata.generate_name, "web-");
        assert_eq!(s.metadata.labels.get(LABEL_SERVICE_NAME).map(String::as_str), Some("web"));
        assert_eq!(s.metadata.labels.get(LABEL_MANAGED_BY).map(String::as_str), Some("endpointslice-controller.k8s.io"));
        assert_eq!(s.metadata.owner_references[0].kind, "Service");
        assert_eq!(s.metadata.owner_references[0].controller, Some(true));
        assert_eq!(s.ports, vec![EndpointPort { name: Some(String::new()), protocol: Some("TCP".into()), port: Some(8080) }]);
        let conditions: Vec<(bool, bool, bool)> = s
            .endpoints
            .iter()
            .map(|e| (e.conditions.ready.unwrap(), e.conditions.serving.unwrap(), e.conditions.terminating.unwrap()))
            .collect();
        assert_eq!(conditions, [(true, true, false), (false, true, true), (false, false, false)]);
    }

    #[test]
    fn publish_not_ready_addresses_makes_every_endpoint_ready() {
        let mut svc = service("web", &[("app", "web")], 80, IntOrString::Int(8080));
        svc.spec.publish_not_ready_addresses = true;
        let mut gone = pod("web-b", "10.244.0.3", false);
        gone.metadata.deletion_timestamp = Some(Time(1_000));
        let world = World::new(svc, vec![pod("web-a", "10.244.0.2", false), gone], vec![]);
        let slices = created(&reconcile(&world));
        assert!(slices[0].endpoints.iter().all(|e| e.conditions.ready == Some(true)));
        assert_eq!(slices[0].endpoints[1].conditions.terminating, Some(true));
    }

    #[test]
    fn pods_without_an_ip_or_finished_are_skipped_and_no_endpoints_leaves_a_placeholder() {
        let svc = service("web", &[("app", "web")], 80, IntOrString::Int(80));
        let mut done = pod("web-b", "10.244.0.3", false);
        done.status.phase = Some(PodPhase::Succeeded);
        let world = World::new(svc, vec![pod("web-a", "", false), done], vec![]);
        let slices = created(&reconcile(&world));
        assert_eq!(slices.len(), 1);
        assert!(slices[0].endpoints.is_empty() && slices[0].ports.is_empty(), "the placeholder");
        let mut placeholder = slices[0].clone();
        placeholder.metadata.name = "web-abcde".into();
        let world = World::new(service("web", &[("app", "web")], 80, IntOrString::Int(80)), vec![], vec![placeholder]);
        assert!(reconcile(&world).steps.is_empty(), "an existing placeholder is kept");
    }

    #[test]
    fn a_service_without_a_selector_gets_no_endpoint_slices() {
        let world = World::new(service("web", &[], 80, IntOrString::Int(80)), vec![pod("web-a", "10.244.0.2", true)], vec![]);
        assert!(reconcile(&world).steps.is_empty());
    }

    #[test]
    fn at_most_100_endpoints_per_slice_250_pods_make_three_slices() {
        let pods = (0..250).map(|i| pod(&format!("web-{i:03}"), &format!("10.244.{}.{}", i / 200, 2 + i % 200), true)).collect();
        let world = World::new(service("web", &[("app", "web")], 80, IntOrString::Int(80)), pods, vec![]);
        let sizes: Vec<usize> = created(&reconcile(&world)).iter().map(|s| s.endpoints.len()).collect();
        assert_eq!(sizes, [100, 100, 50]);
    }

    #[test]
    fn a_pod_that_cannot_resolve_a_named_port_goes_to_a_slice_without_that_port() {
        let svc = service("web", &[("app", "web")], 80, IntOrString::String("http".into()));
        let mut other = pod("web-b", "10.244.0.3", true);
        other.spec.containers[0].ports[0].name = Some("web".into());
        let world = World::new(svc, vec![pod("web-a", "10.244.0.2", true), other], vec![]);
        let mut ports: Vec<Vec<EndpointPort>> = created(&reconcile(&world)).into_iter().map(|s| s.ports).collect();
        ports.sort();
        assert_eq!(ports.len(), 2);
        assert!(ports[0].is_empty() && ports[1][0].port == Some(8080));
    }

    #[test]
    fn a_deleted_pod_is_removed_by_updating_its_slice_and_a_new_one_added_to_it() {
        let svc = service("web", &[("app", "web")], 80, IntOrString::Int(80));
        let world = World::new(svc.clone(), vec![pod("web-a", "10.244.0.2", true), pod("web-b", "10.244.0.3", true)], vec![]);
        let mut slice = created(&reconcile(&world)).remove(0);
        slice.metadata.name = "web-abcde".into();
        slice.metadata.generation = 1;
        let world = World::new(svc, vec![pod("web-a", "10.244.0.2", true), pod("web-c", "10.244.0.4", true)], vec![slice]);
        let sync = reconcile(&world);
        let calls: Vec<&ApiRequest> = sync.steps.iter().flatten().map(|c| &c.request).collect();
        assert_eq!(calls.len(), 1);
        let ApiRequest::Update(Object::EndpointSlice(s)) = calls[0] else { panic!("an update: {calls:?}") };
        let ips: Vec<&str> = s.endpoints.iter().map(|e| e.addresses[0].as_str()).collect();
        assert_eq!((s.metadata.name.as_str(), ips), ("web-abcde", vec!["10.244.0.2", "10.244.0.4"]));
    }
}
