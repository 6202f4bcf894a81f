//! What kube-apiserver does for a Service besides storing it: the defaults of
//! pkg/apis/core/v1/defaults.go, `ValidateService`'s messages, and the ClusterIP and NodePort
//! allocators of pkg/registry/core/service (ipallocator, portallocator) with their messages.
//!
//! Upstream's bitmap allocators pick a random free offset, first in the upper ("dynamic") band
//! of the range, then in the lower band kept for static requests. Here the offset is drawn from
//! the simulation's one seeded `Rng` and the scan goes up from it, so a run is reproducible and
//! the addresses look as a real cluster's do (10.96.143.7, not 10.96.0.2, 10.96.0.3 …).

use super::errors::FieldError;
use super::validation::{is_dns1123_label, is_dns1123_subdomain};
use crate::model::*;
use crate::rng::Rng;
use std::collections::BTreeSet;

/// `--service-cluster-ip-range` as kubeadm sets it.
pub const SERVICE_CIDR: &str = "10.96.0.0/12";
const SERVICE_BASE: u32 = u32::from_be_bytes([10, 96, 0, 0]);
/// Addresses in a /12, less the network and broadcast addresses the allocator never hands out.
const SERVICE_SIZE: u32 = (1 << 20) - 2;
/// `--service-node-port-range`'s default.
pub const NODE_PORT_MIN: i64 = 30000;
pub const NODE_PORT_MAX: i64 = 32767;
/// The `kubernetes` Service's address: the range's first, as the bootstrap controller asks.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

/// `calculateRangeOffset`: the lower band, reserved for static requests (ips: min(max(16,
/// size/16), 256); ports: min(max(16, size/32), 128)).
fn static_band(size: u32, divisor: u32, cap: u32) -> u32 {
    (size / divisor).clamp(16, cap)
}

/// The ClusterIPs and NodePorts in use (the allocators' bitmaps, kept in etcd upstream).
#[derive(Debug, Default)]
pub struct Allocations {
    ips: BTreeSet<u32>,
    ports: BTreeSet<i64>,
}

fn parse_ipv4(s: &str) -> Option<u32> {
    let parts: Vec<u8> = s.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    (parts.len() == 4).then(|| u32::from_be_bytes([parts[0], parts[1], parts[2], parts[3]]))
}

fn ipv4(addr: u32) -> String {
    let [a, b, c, d] = addr.to_be_bytes();
    format!("{a}.{b}.{c}.{d}")
}

/// Whether the type gets node ports (NodePort, and LoadBalancer unless told not to).
fn needs_node_ports(svc: &Service) -> bool {
    match svc.type_() {
        "NodePort" => true,
        "LoadBalancer" => svc.spec.allocate_load_balancer_node_ports != Some(false),
        _ => false,
    }
}

/// A random free offset in `[0, size)`, the upper band `[band, size)` first; the scan goes up
/// from a seeded random start and wraps, as `randomScanStrategyWithOffset` does.
fn pick_free(rng: &mut Rng, size: u32, band: u32, used: impl Fn(u32) -> bool) -> Option<u32> {
    let scan = |rng: &mut Rng, lo: u32, hi: u32| -> Option<u32> {
        if hi <= lo {
            return None;
        }
        let span = hi - lo;
        let start = rng.below(u64::from(span)) as u32;
        (0..span).map(|i| lo + (start + i) % span).find(|o| !used(*o))
    };
    scan(rng, band, size).or_else(|| scan(rng, 0, band))
}

impl Allocations {
    /// Everything the stored Services hold (after a restore or wipe of etcd).
    pub fn rebuild<'a>(services: impl Iterator<Item = &'a Service>) -> Self {
        let mut a = Allocations::default();
        for svc in services {
            a.ips.extend(svc.spec.cluster_ips.iter().filter_map(|ip| parse_ipv4(ip)));
            a.ports.extend(svc.spec.ports.iter().filter_map(|p| p.node_port));
        }
        a
    }

    /// Gives the Service its ClusterIP and node ports (requested ones checked), or the field
    /// errors the registry returns. `old` is the stored version on update: what it holds stays.
    pub fn allocate(&mut self, rng: &mut Rng, svc: &mut Service, old: Option<&Service>) -> Result<(), Vec<FieldError>> {
        let old_ips: BTreeSet<u32> = old.into_iter().flat_map(|o| &o.spec.cluster_ips).filter_map(|ip| parse_ipv4(ip)).collect();
        let old_ports: BTreeSet<i64> = old.into_iter().flat_map(|o| &o.spec.ports).filter_map(|p| p.node_port).collect();
        let ip = self.allocate_ip(rng, svc, &old_ips)?;
        let ports = self.allocate_ports(rng, svc, &old_ports)?;
        for o in old_ips.difference(&ip.iter().copied().collect()) {
            self.ips.remove(o);
        }
        for o in old_ports.difference(&ports.iter().copied().collect()) {
            self.ports.remove(o);
        }
        self.ips.extend(ip);
        self.ports.extend(ports);
        Ok(())
    }

    /// The Service was deleted: its address and ports are free again.
    pub fn release(&mut self, svc: &Service) {
        for ip in svc.spec.cluster_ips.iter().filter_map(|ip| parse_ipv4(ip)) {
            self.ips.remove(&ip);
        }
        for p in svc.spec.ports.iter().filter_map(|p| p.node_port) {
            self.ports.remove(&p);
        }
    }

    fn allocate_ip(&mut self, rng: &mut Rng, svc: &mut Service, old: &BTreeSet<u32>) -> Result<Option<u32>, Vec<FieldError>> {
        if svc.type_() == "ExternalName" || svc.is_headless() {
            return Ok(None);
        }
        let addr = match svc.spec.cluster_ip.as_deref().filter(|ip| !ip.is_empty()) {
            Some(requested) => {
                let fail = |why: String| {
                    vec![FieldError::invalid(
                        "spec.clusterIPs",
                        format!("[]string{{{requested:?}}}"),
                        &format!("failed to allocate IP {requested}: {why}"),
                    )]
                };
                let addr = parse_ipv4(requested).ok_or_else(|| fail("not a valid IP".into()))?;
                let offset = addr.wrapping_sub(SERVICE_BASE + 1);
                if offset >= SERVICE_SIZE {
                    return Err(fail(format!(
                        "the provided IP ({requested}) is not in the valid range. The range of valid IPs is {SERVICE_CIDR}"
                    )));
                }
                if self.ips.contains(&addr) && !old.contains(&addr) {
                    return Err(fail("provided IP is already allocated".into()));
                }
                addr
            }
            None => {
                let band = static_band(SERVICE_SIZE, 16, 256);
                let offset = pick_free(rng, SERVICE_SIZE, band, |o| self.ips.contains(&(SERVICE_BASE + 1 + o)))
                    .ok_or_else(|| vec![FieldError::invalid("spec.clusterIPs", "[]string{}", "failed to allocate IP: range is full")])?;
                SERVICE_BASE + 1 + offset
            }
        };
        svc.spec.cluster_ip = Some(ipv4(addr));
        svc.spec.cluster_ips = vec![ipv4(addr)];
        Ok(Some(addr))
    }

    fn allocate_ports(&mut self, rng: &mut Rng, svc: &mut Service, old: &BTreeSet<i64>) -> Result<Vec<i64>, Vec<FieldError>> {
        if !needs_node_ports(svc) {
            for p in &mut svc.spec.ports {
                p.node_port = None;
            }
            return Ok(Vec::new());
        }
        let mut taken: Vec<i64> = Vec::new();
        let mut errs = Vec::new();
        for (i, p) in svc.spec.ports.iter().enumerate() {
            let Some(n) = p.node_port.filter(|n| *n != 0) else { continue };
            let at = format!("spec.ports[{i}].nodePort");
            if !(NODE_PORT_MIN..=NODE_PORT_MAX).contains(&n) {
                let why = format!("provided port is not in the valid range. The range of valid ports is {NODE_PORT_MIN}-{NODE_PORT_MAX}");
                errs.push(FieldError::invalid(&at, n, &why));
            } else if (self.ports.contains(&n) && !old.contains(&n)) || taken.contains(&n) {
                errs.push(FieldError::invalid(&at, n, "provided port is already allocated"));
            } else {
                taken.push(n);
            }
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let size = (NODE_PORT_MAX - NODE_PORT_MIN + 1) as u32;
        let band = static_band(size, 32, 128);
        for p in &mut svc.spec.ports {
            if p.node_port.is_some_and(|n| n != 0) {
                continue;
            }
            let used = |o: u32| {
                let n = NODE_PORT_MIN + i64::from(o);
                self.ports.contains(&n) || taken.contains(&n)
            };
            let offset = pick_free(rng, size, band, used)
                .ok_or_else(|| vec![FieldError::invalid("spec.ports[0].nodePort", 0, "failed to allocate a nodePort: range is full")])?;
            let n = NODE_PORT_MIN + i64::from(offset);
            p.node_port = Some(n);
            taken.push(n);
        }
        Ok(taken)
    }
}

/// An update keeps what the stored version was given and the request leaves out
/// (`patchAllocatedValues`): the ClusterIPs, and the node port of a port that still needs one.
pub fn patch_allocated_values(new: &mut Service, old: &Service) {
    if new.type_() != "ExternalName" && old.type_() != "ExternalName" && new.spec.cluster_ip.as_deref().is_none_or(str::is_empty) {
        new.spec.cluster_ip = old.spec.cluster_ip.clone();
        new.spec.cluster_ips = old.spec.cluster_ips.clone();
    }
    if needs_node_ports(new) && needs_node_ports(old) {
        for p in new.spec.ports.iter_mut().filter(|p| p.node_port.is_none_or(|n| n == 0)) {
            // Compared before defaulting: an unset protocol is TCP.
            let protocol = |q: &ServicePort| q.protocol.clone().unwrap_or_else(|| "TCP".into());
            let same = old.spec.ports.iter().find(|o| o.port == p.port && protocol(o) == protocol(p));
            p.node_port = same.and_then(|o| o.node_port);
        }
    }
}

/// `SetDefaults_Service` and the registry's IP family defaulting for a single-stack IPv4 cluster.
pub fn default_service(svc: &mut Service) {
    let spec = &mut svc.spec;
    spec.type_.get_or_insert_with(|| "ClusterIP".into());
    spec.session_affinity.get_or_insert_with(|| "None".into());
    let type_ = spec.type_.clone().unwrap_or_default();
    for p in &mut spec.ports {
        p.protocol.get_or_insert_with(|| "TCP".into());
        if p.target_port.as_ref().is_none_or(|t| matches!(t, IntOrString::Int(0)) || matches!(t, IntOrString::String(s) if s.is_empty())) {
            p.target_port = Some(IntOrString::Int(p.port));
        }
    }
    if type_ == "ExternalName" {
        return;
    }
    spec.internal_traffic_policy.get_or_insert_with(|| "Cluster".into());
    if type_ == "NodePort" || type_ == "LoadBalancer" {
        spec.external_traffic_policy.get_or_insert_with(|| "Cluster".into());
    }
    if type_ == "LoadBalancer" {
        spec.allocate_load_balancer_node_ports.get_or_insert(true);
    }
    if spec.cluster_ip.as_deref() == Some("None") {
        spec.cluster_ips = vec!["None".into()];
    }
    if spec.ip_families.is_empty() {
        spec.ip_families = vec!["IPv4".into()];
    }
    // A headless Service without a selector asks for every family the cluster has.
    let headless_without_selector = spec.cluster_ip.as_deref() == Some("None") && spec.selector.is_empty();
    let policy = if headless_without_selector { "RequireDualStack" } else { "SingleStack" };
    spec.ip_family_policy.get_or_insert_with(|| policy.into());
}

const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const PORT_RANGE_MSG: &str = "must be between 1 and 65535, inclusive";

fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// `IsValidPortName`: an IANA service name (at most 15, lower-case letters, digits and
/// non-adjacent hyphens, at least one letter), with its first failing message.
fn port_name_error(name: &str) -> Option<&'static str> {
    if name.len() > 15 {
        Some("must be no more than 15 characters")
    } else if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        Some("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    } else if name.contains("--") {
        Some("must not contain consecutive hyphens")
    } else if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        Some("must contain at least one letter (a-z)")
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("must not begin or end with a hyphen")
    } else {
        None
    }
}

/// `ValidateService`, for the fields kubeloop models.
pub fn validate_service(svc: &Service, errs: &mut Vec<FieldError>) {
    let name = &svc.metadata.name;
    if !name.is_empty() && is_dns1123_subdomain(name) && !is_dns1035_label(name) {
        errs.push(FieldError::invalid("metadata.name", format!("{name:?}"), DNS1035_LABEL_MSG));
    }
    let spec = &svc.spec;
    let type_ = svc.type_();
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if !TYPES.contains(&type_) {
        errs.push(FieldError::unsupported("spec.type", type_, TYPES));
        return;
    }
    if type_ == "ExternalName" {
        match spec.external_name.as_deref().unwrap_or("") {
            "" => errs.push(FieldError::required("spec.externalName")),
            n if !is_dns1123_subdomain(n.trim_end_matches('.')) => {
                errs.push(FieldError::invalid("spec.externalName", format!("{n:?}"), "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"))
            }
            _ => {}
        }
    } else if spec.ports.is_empty() && !svc.is_headless() {
        errs.push(FieldError::required("spec.ports"));
    }
    if svc.is_headless() && (type_ == "NodePort" || type_ == "LoadBalancer") {
        errs.push(FieldError::invalid("spec.clusterIPs[0]", "\"None\"", &format!("may not be set to 'None' for {type_} services")));
    }
    let many = spec.ports.len() > 1;
    let mut names: Vec<&str> = Vec::new();
    for (i, p) in spec.ports.iter().enumerate() {
        let at = |f: &str| format!("spec.ports[{i}].{f}");
        if p.name.is_empty() {
            if many {
                errs.push(FieldError::required(&at("name")));
            }
        } else if !is_dns1123_label(&p.name) {
            errs.push(FieldError::invalid(&at("name"), format!("{:?}", p.name), "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
        } else if names.contains(&p.name.as_str()) {
            errs.push(FieldError { field: at("name"), detail: format!("Duplicate value: {:?}", p.name) });
        }
        names.push(&p.name);
        if !(1..=65535).contains(&p.port) {
            errs.push(FieldError::invalid(&at("port"), p.port, PORT_RANGE_MSG));
        }
        let protocol = p.protocol.as_deref().unwrap_or("TCP");
        if !["SCTP", "TCP", "UDP"].contains(&protocol) {
            errs.push(FieldError::unsupported(&at("protocol"), protocol, &["SCTP", "TCP", "UDP"]));
        }
        match &p.target_port {
            Some(IntOrString::Int(n)) if !(1..=65535).contains(n) => errs.push(FieldError::invalid(&at("targetPort"), n, PORT_RANGE_MSG)),
            Some(IntOrString::String(s)) => {
                if let Some(why) = port_name_error(s) {
                    errs.push(FieldError::invalid(&at("targetPort"), format!("{s:?}"), why));
                }
            }
            _ => {}
        }
        if p.node_port.is_some_and(|n| n != 0) && type_ == "ClusterIP" {
            errs.push(FieldError::forbidden(&at("nodePort"), "may not be used when `type` is 'ClusterIP'"));
        }
    }
    let affinity = spec.session_affinity.as_deref().unwrap_or("None");
    if !["ClientIP", "None"].contains(&affinity) {
        errs.push(FieldError::unsupported("spec.sessionAffinity", affinity, &["ClientIP", "None"]));
    }
    for (k, v) in &spec.selector {
        if !super::validation::valid_label_value(v) {
            errs.push(FieldError::invalid("spec.selector", format!("{v:?}"), "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
        }
        if k.is_empty() {
            errs.push(FieldError::invalid("spec.selector", "\"\"", "name part must be non-empty"));
        }
    }
}

/// The `kubernetes` Service the API server's bootstrap controller keeps in `default`: the API
/// server's own address on 443, port name `https`, target 6443.
pub fn kubernetes_service() -> Service {
    let mut svc = Service {
        metadata: ObjectMeta {
            name: "kubernetes".into(),
            namespace: "default".into(),
            labels: [("component".to_string(), "apiserver".to_string()), ("provider".to_string(), "kubernetes".to_string())]
                .into_iter()
                .collect::<StringMap>()
                .into(),
            ..Default::default()
        },
        spec: ServiceSpec {
            ports: vec![ServicePort { name: "https".into(), port: 443, target_port: Some(IntOrString::Int(6443)), ..Default::default() }],
            cluster_ip: Some(KUBERNETES_SERVICE_IP.into()),
            cluster_ips: vec![KUBERNETES_SERVICE_IP.into()],
            ..Default::default()
        }
        .into(),
        status: Default::default(),
    };
    default_service(&mut svc);
    svc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(type_: &str, ports: &[(i64, Option<i64>)]) -> Service {
        let mut s = Service::default();
        s.metadata.name = "web".into();
        s.spec.type_ = Some(type_.into());
        s.spec.ports = ports
            .iter()
            .enumerate()
            .map(|(i, (port, node_port))| ServicePort { name: format!("p{i}"), port: *port, node_port: *node_port, ..Default::default() })
            .collect();
        default_service(&mut s);
        s
    }

    #[test]
    fn cluster_ips_come_from_the_dynamic_band_of_10_96_0_0_12_and_never_twice() {
        let (mut a, mut rng) = (Allocations::default(), Rng::new(3));
        let mut seen = BTreeSet::new();
        for _ in 0..50 {
            let mut s = svc("ClusterIP", &[(80, None)]);
            a.allocate(&mut rng, &mut s, None).unwrap();
            let ip = parse_ipv4(s.spec.cluster_ip.as_deref().unwrap()).unwrap();
            assert!(ip > SERVICE_BASE + 256 && ip < SERVICE_BASE + (1 << 20) - 1, "{}", ipv4(ip));
            assert_eq!(s.spec.cluster_ips, vec![ipv4(ip)]);
            assert!(seen.insert(ip));
        }
    }

    #[test]
    fn a_requested_cluster_ip_outside_the_range_or_taken_is_refused_with_the_allocators_message() {
        let (mut a, mut rng) = (Allocations::default(), Rng::new(3));
        let mut s = svc("ClusterIP", &[(80, None)]);
        s.spec.cluster_ip = Some("10.0.0.10".into());
        let e = a.allocate(&mut rng, &mut s, None).unwrap_err();
        assert_eq!(e[0].to_string(), "spec.clusterIPs: Invalid value: []string{\"10.0.0.10\"}: failed to allocate IP 10.0.0.10: the provided IP (10.0.0.10) is not in the valid range. The range of valid IPs is 10.96.0.0/12");
        s.spec.cluster_ip = Some("10.96.0.10".into());
        a.allocate(&mut rng, &mut s.clone(), None).unwrap();
        let e = a.allocate(&mut rng, &mut s, None).unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "spec.clusterIPs: Invalid value: []string{\"10.96.0.10\"}: failed to allocate IP 10.96.0.10: provided IP is already allocated"
        );
    }

    #[test]
    fn node_ports_are_allocated_in_30000_32767_and_a_taken_or_out_of_range_request_is_refused() {
        let (mut a, mut rng) = (Allocations::default(), Rng::new(3));
        let mut s = svc("NodePort", &[(80, Some(30080)), (443, None)]);
        a.allocate(&mut rng, &mut s, None).unwrap();
        let second = s.spec.ports[1].node_port.unwrap();
        assert!((30086..=32767).contains(&second), "{second}");
        let mut again = svc("NodePort", &[(80, Some(30080))]);
        let e = a.allocate(&mut rng, &mut again, None).unwrap_err();
        assert_eq!(e[0].to_string(), "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated");
        let mut low = svc("NodePort", &[(80, Some(8080))]);
        let e = a.allocate(&mut rng, &mut low, None).unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767"
        );
        a.release(&s);
        a.allocate(&mut rng, &mut again, None).expect("30080 free again after the delete");
    }

    #[test]
    fn a_load_balancer_gets_a_node_port_and_headless_or_external_name_no_cluster_ip() {
        let (mut a, mut rng) = (Allocations::default(), Rng::new(3));
        let mut lb = svc("LoadBalancer", &[(80, None)]);
        a.allocate(&mut rng, &mut lb, None).unwrap();
        assert!(lb.spec.ports[0].node_port.is_some() && lb.spec.cluster_ip.is_some());
        assert_eq!(lb.spec.external_traffic_policy.as_deref(), Some("Cluster"));
        let mut headless = Service::default();
        headless.spec.cluster_ip = Some("None".into());
        headless.spec.selector.insert("app".into(), "web".into());
        default_service(&mut headless);
        a.allocate(&mut rng, &mut headless, None).unwrap();
        assert_eq!(headless.spec.cluster_ips, vec!["None".to_string()]);
        assert_eq!(headless.spec.ip_family_policy.as_deref(), Some("SingleStack"));
    }

    #[test]
    fn service_defaults_are_cluster_ip_tcp_target_port_equal_to_port_and_no_affinity() {
        let s = svc("ClusterIP", &[(80, None)]);
        let mut plain = Service::default();
        plain.spec.ports = vec![ServicePort { port: 8080, ..Default::default() }];
        default_service(&mut plain);
        assert_eq!(plain.spec.type_.as_deref(), Some("ClusterIP"));
        assert_eq!(plain.spec.ports[0].protocol.as_deref(), Some("TCP"));
        assert_eq!(plain.spec.ports[0].target_port, Some(IntOrString::Int(8080)));
        assert_eq!(plain.spec.session_affinity.as_deref(), Some("None"));
        assert_eq!(
            (plain.spec.ip_families.clone(), plain.spec.ip_family_policy.clone()),
            (vec!["IPv4".to_string()], Some("SingleStack".into()))
        );
        assert_eq!(s.spec.internal_traffic_policy.as_deref(), Some("Cluster"));
    }

    fn messages(s: &Service) -> Vec<String> {
        let mut errs = Vec::new();
        validate_service(s, &mut errs);
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn validate_service_gives_the_api_servers_messages() {
        let mut s = svc("ClusterIP", &[(0, None), (80, Some(30001))]);
        s.spec.ports[1].name = "p0".into();
        s.spec.ports[1].target_port = Some(IntOrString::String("Http".into()));
        assert_eq!(
            messages(&s),
            [
                "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ports[1].name: Duplicate value: \"p0\"",
                "spec.ports[1].targetPort: Invalid value: \"Http\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
            ]
        );
        let mut none = svc("ClusterIP", &[]);
        none.spec.type_ = Some("Bogus".into());
        assert_eq!(
            messages(&none),
            ["spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""]
        );
        assert_eq!(messages(&svc("ClusterIP", &[])), ["spec.ports: Required value"]);
        let mut two = svc("ClusterIP", &[(80, None), (81, None)]);
        two.spec.ports[0].name.clear();
        assert_eq!(messages(&two), ["spec.ports[0].name: Required value"]);
        assert_eq!(messages(&svc("ExternalName", &[])), ["spec.externalName: Required value"]);
        let mut named = svc("ClusterIP", &[(80, None)]);
        named.metadata.name = "1web".into();
        assert!(messages(&named)[0].starts_with("metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist"));
    }
}
