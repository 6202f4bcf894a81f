//! The Endpoints controller (pkg/controller/endpoint): the older, one-object-per-Service view of
//! the same backends, still what `kubectl get endpoints` and `describe` read on many clusters.
//!
//! For each Service with a selector it keeps an Endpoints object of the same name: ready pods'
//! addresses under `addresses`, the others under `notReadyAddresses` (all under `addresses` with
//! `publishNotReadyAddresses`); terminating pods are dropped, unlike in EndpointSlices. Subsets
//! are repacked by port set as `RepackSubsets` does, and at most 1000 addresses are kept, with
//! the over-capacity annotation. Handlers only enqueue Service keys.

use super::endpoint_slice::{find_port, keys_for, pod_reference, selected_pods, should_pod_be_in_endpoints, LABEL_HEADLESS};
use super::{Caches, Call, Controller, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::informer::Delta;
use std::collections::BTreeMap;

/// `maxCapacity`: the most addresses one Endpoints object holds.
pub const MAX_CAPACITY: usize = 1000;
pub const OVER_CAPACITY_ANNOTATION: &str = "endpoints.kubernetes.io/over-capacity";
/// Endpoints written by this controller are not mirrored back into EndpointSlices.
pub const LABEL_SKIP_MIRROR: &str = "endpointslice.kubernetes.io/skip-mirror";

#[derive(Debug, Default)]
pub struct EndpointsController;

/// Per set of ports: the ready and the not-ready addresses.
type Subsets = BTreeMap<Vec<EndpointPort>, (Vec<EndpointAddress>, Vec<EndpointAddress>)>;

/// The subsets `syncService` computes, repacked: one per distinct port set, addresses by IP.
pub fn desired_subsets(svc: &Service, pods: &[&Pod]) -> (Vec<EndpointSubset>, bool) {
    let tolerate_unready = svc.spec.publish_not_ready_addresses;
    let mut by_ports: Subsets = BTreeMap::new();
    for pod in pods.iter().filter(|p| should_pod_be_in_endpoints(p, tolerate_unready)) {
        let address = EndpointAddress {
            ip: pod.status.pod_ip.clone().unwrap_or_default(),
            node_name: pod.node_name().map(str::to_string),
            target_ref: Some(pod_reference(pod)),
        };
        let ready = tolerate_unready || pod.is_ready();
        let mut put = |ports: Vec<EndpointPort>| {
            let entry = by_ports.entry(ports).or_default();
            if ready { &mut entry.0 } else { &mut entry.1 }.push(address.clone());
        };
        if svc.spec.ports.is_empty() {
            put(Vec::new());
        }
        for sp in &svc.spec.ports {
            if let Some(port) = find_port(pod, sp) {
                put(vec![EndpointPort { name: Some(sp.name.clone()), protocol: sp.protocol.clone(), port: Some(port) }]);
            }
        }
    }
    // RepackSubsets: addresses that share all their ports go into one subset.
    let mut per_address: BTreeMap<(String, bool), (EndpointAddress, Vec<EndpointPort>)> = BTreeMap::new();
    for (ports, (ready, not_ready)) in by_ports {
        for (a, is_ready) in ready.into_iter().map(|a| (a, true)).chain(not_ready.into_iter().map(|a| (a, false))) {
            let entry = per_address.entry((a.ip.clone(), is_ready)).or_insert_with(|| (a, Vec::new()));
            entry.1.extend(ports.iter().cloned());
        }
    }
    let mut packed: Subsets = BTreeMap::new();
    for ((_, is_ready), (address, mut ports)) in per_address {
        ports.sort();
        let entry = packed.entry(ports).or_default();
        if is_ready { &mut entry.0 } else { &mut entry.1 }.push(address);
    }
    let total: usize = packed.values().map(|(r, n)| r.len() + n.len()).sum();
    let over = total > MAX_CAPACITY;
    let mut room = MAX_CAPACITY;
    // Truncation keeps ready addresses before not-ready ones.
    for pass in [true, false] {
        for (ready, not_ready) in packed.values_mut() {
            let list = if pass { ready } else { not_ready };
            list.truncate(room);
            room -= list.len();
        }
    }
    let subsets = packed
        .into_iter()
        .filter(|(_, (r, n))| !r.is_empty() || !n.is_empty())
        .map(|(ports, (addresses, not_ready_addresses))| EndpointSubset { addresses, not_ready_addresses, ports })
        .collect();
    (subsets, over)
}

fn endpoints_labels(svc: &Service) -> StringMap {
    let mut labels: StringMap = (*svc.metadata.labels).clone();
    labels.insert(LABEL_SKIP_MIRROR.into(), "true".into());
    if svc.is_headless() {
        labels.insert(LABEL_HEADLESS.into(), String::new());
    }
    labels
}

impl Controller for EndpointsController {
    fn name(&self) -> &'static str {
        "endpoints-controller"
    }
    fn watches(&self) -> &'static [Kind] {
        &[Kind::Service, Kind::Pod, Kind::Endpoints]
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        match delta.object().kind() {
            // Someone changed or removed an Endpoints object: its Service's is looked at again.
            Kind::Endpoints => vec![ObjectKey::new(Kind::Service, &delta.object().meta().namespace, &delta.object().meta().name)],
            _ => keys_for(caches, delta),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, _now: Time) -> Sync {
        let ep_key = ObjectKey { kind: Kind::Endpoints, ..key.clone() };
        let current = caches[Kind::Endpoints].get(&ep_key).and_then(|o| o.as_endpoints());
        let Some(svc) = caches[Kind::Service].get(key).and_then(|o| o.as_service()) else {
            // The Service is gone: so goes its Endpoints object.
            return match current {
                Some(ep) => {
                    let d = DeleteRequest { uid: Some(ep.metadata.uid.to_string()), ..DeleteRequest::new(ep_key) };
                    Sync::with_steps(
                        vec![vec![Call::new(ApiRequest::Delete(d))]],
                        format!("Service {}: gone, deleting its Endpoints", key.name),
                    )
                }
                None => Sync::nothing(),
            };
        };
        if svc.spec.selector.is_empty() || svc.type_() == "ExternalName" || svc.metadata.is_deleting() {
            return Sync::nothing();
        }
        let pods: Vec<&Pod> = selected_pods(caches, svc).collect();
        let (subsets, over) = desired_subsets(svc, &pods);
        let labels = endpoints_labels(svc);
        let mut annotations = current.map(|c| c.metadata.annotations.clone()).unwrap_or_default();
        if over {
            annotations.insert(OVER_CAPACITY_ANNOTATION.into(), "truncated".into());
        } else {
            annotations.remove(OVER_CAPACITY_ANNOTATION);
        }
        let ready: usize = subsets.iter().map(|s| s.addresses.len()).sum();
        let summary = format!("Service {}: {ready} ready addresses", key.name);
        let request = match current {
            Some(c) if c.subsets == subsets && *c.metadata.labels == labels && c.metadata.annotations == annotations => {
                return Sync { summary: Some(summary), ..Sync::nothing() };
            }
            Some(c) => {
                let mut next = c.clone();
                next.subsets = subsets;
                next.metadata.labels = labels.into();
                next.metadata.annotations = annotations;
                ApiRequest::Update(Object::Endpoints(next))
            }
            None => {
                let metadata = ObjectMeta {
                    name: key.name.clone(),
                    namespace: key.namespace.clone(),
                    labels: labels.into(),
                    annotations,
                    ..Default::default()
                };
                ApiRequest::Create(Object::Endpoints(Endpoints { metadata, subsets }))
            }
        };
        Sync::with_steps(vec![vec![Call::new(request)]], summary)
    }

    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::super::endpoint_slice::tests::{pod, service, World};
    use super::*;

    fn written(sync: &Sync) -> Endpoints {
        match sync.steps.iter().flatten().map(|c| &c.request).next() {
            Some(ApiRequest::Create(Object::Endpoints(e)) | ApiRequest::Update(Object::Endpoints(e))) => e.clone(),
            other => panic!("no Endpoints write: {other:?}"),
        }
    }

    #[test]
    fn endpoints_list_ready_pods_as_addresses_others_as_not_ready_and_drop_terminating_ones() {
        let svc = service("web", &[("app", "web")], 80, IntOrString::String("http".into()));
        let mut gone = pod("web-c", "10.244.0.4", true);
        gone.metadata.deletion_timestamp = Some(Time(1));
        let world = World::new(svc, vec![pod("web-a", "10.244.0.2", true), pod("web-b", "10.244.0.3", false), gone], vec![]);
        let sync = EndpointsController.reconcile(&ObjectKey::new(Kind::Service, "default", "web"), &world.caches(), Time(0));
        let ep = written(&sync);
        assert_eq!(ep.metadata.name, "web");
        assert_eq!(ep.subsets.len(), 1);
        let s = &ep.subsets[0];
        assert_eq!(s.addresses.iter().map(|a| a.ip.as_str()).collect::<Vec<_>>(), ["10.244.0.2"]);
        assert_eq!(s.not_ready_addresses.iter().map(|a| a.ip.as_str()).collect::<Vec<_>>(), ["10.244.0.3"]);
        assert_eq!(s.ports[0].port, Some(8080));
        assert_eq!(ep.metadata.labels.get(LABEL_SKIP_MIRROR).map(String::as_str), Some("true"));
    }

    #[test]
    fn endpoints_hold_at_most_1000_addresses_and_say_they_were_truncated() {
        let svc = service("web", &[("app", "web")], 80, IntOrString::Int(80));
        let pods: Vec<Pod> = (0..1100).map(|i| pod(&format!("web-{i:04}"), &format!("10.244.{}.{}", i / 200, 2 + i % 200), true)).collect();
        let refs: Vec<&Pod> = pods.iter().collect();
        let (subsets, over) = desired_subsets(&svc, &refs);
        assert!(over);
        assert_eq!(subsets.iter().map(|s| s.addresses.len()).sum::<usize>(), 1000);
    }
}
