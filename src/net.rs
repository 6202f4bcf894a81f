//! A node's Service routing table, as kube-proxy's iptables mode programs it into the kernel.
//!
//! The table is the machine's, not kube-proxy's: kube-proxy computes it from what it watched and
//! hands it over as an effect (`runtime::Effect::ProgramRules`), the simulation writes it into the
//! node's machine, and traffic is routed by what the machine holds. So a stopped kube-proxy leaves
//! its node's table as it last wrote it — stale, still routing — exactly as on a real node, where
//! the iptables rules outlive the process that wrote them.
//!
//! This module is ground floor: plain data, the chain names upstream derives (`KUBE-SVC-…`,
//! `KUBE-SEP-…`, SHA-256 then base32, so they match a real node's `iptables-save`), and the
//! selection rule. It reads no component and no clock.

use crate::model::Time;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::rc::Rc;

/// One endpoint a service port's rules may send a connection to (a `KUBE-SEP-…` chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleEndpoint {
    pub ip: String,
    pub port: i64,
    /// The pod behind it (the endpoint's `targetRef`), if any.
    pub pod: Option<String>,
}

impl RuleEndpoint {
    /// `IP:PORT`, as the rules' comments and `--to-destination` write it.
    pub fn address(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }
}

/// The rules of one service port (a `KUBE-SVC-…` chain and what jumps to it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRules {
    /// `NAMESPACE/NAME`.
    pub service: String,
    /// The port's name (empty for an unnamed single port).
    pub port_name: String,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: String,
    /// Absent for a headless service, which kube-proxy does not program.
    pub cluster_ip: String,
    pub port: i64,
    pub node_port: Option<i64>,
    /// The endpoints traffic goes to, in the order the rules list them: the ready ones, or when
    /// none is ready the serving-and-terminating ones (`CategorizeEndpoints`). Empty: the service
    /// has no endpoints and its traffic is rejected.
    pub endpoints: Vec<RuleEndpoint>,
    /// Whether `endpoints` are the terminating fallback.
    pub terminating_fallback: bool,
}

impl ServiceRules {
    /// upstream's `ServicePortName.String()`: `NAMESPACE/NAME` plus `:PORTNAME` when named.
    pub fn port_key(&self) -> String {
        port_key(&self.service, &self.port_name)
    }
    /// The `KUBE-SVC-…` chain.
    pub fn chain(&self) -> String {
        format!("KUBE-SVC-{}", port_proto_hash(&self.port_key(), &self.protocol))
    }
    /// The `KUBE-SEP-…` chain of one endpoint.
    pub fn endpoint_chain(&self, endpoint: &RuleEndpoint) -> String {
        let mut input = self.port_key();
        input.push_str(&self.protocol.to_ascii_lowercase());
        input.push_str(&endpoint.address());
        format!("KUBE-SEP-{}", hash16(&input))
    }
    /// The probability rule `i` of the chain matches with (`1/(n-i)`; the last rule always).
    pub fn probability(&self, i: usize) -> Option<f64> {
        let n = self.endpoints.len();
        (i + 1 < n).then(|| 1.0 / (n - i) as f64)
    }
    /// Which endpoint a new connection goes to, from one uniform draw in `[0, 1)`. Walking the
    /// chain, rule `i` of `n` matches with probability `1/(n-i)`, so every endpoint is equally
    /// likely; one draw picks the same distribution.
    pub fn pick(&self, unit: f64) -> Option<&RuleEndpoint> {
        let n = self.endpoints.len();
        if n == 0 {
            return None;
        }
        let i = ((unit * n as f64) as usize).min(n - 1);
        self.endpoints.get(i)
    }
}

/// `NAMESPACE/NAME[:PORTNAME]`, upstream's `ServicePortName.String()`.
pub fn port_key(service: &str, port_name: &str) -> String {
    if port_name.is_empty() {
        service.to_string()
    } else {
        format!("{service}:{port_name}")
    }
}

/// upstream's `portProtoHash`: the first 16 base32 characters of SHA-256(port key + protocol in
/// lower case).
fn port_proto_hash(port_key: &str, protocol: &str) -> String {
    hash16(&format!("{port_key}{}", protocol.to_ascii_lowercase()))
}

/// SHA-256 of `input`, base32 (RFC 4648, upper case), first 16 characters: 80 bits, ten bytes.
fn hash16(input: &str) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let digest = Sha256::digest(input.as_bytes());
    let bits = digest[..10].iter().fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
    (0..16).map(|i| char::from(ALPHABET[((bits >> (75 - 5 * i)) & 31) as usize])).collect()
}

/// A whole table: every service port's rules, by port key. Held behind an `Rc` so that the
/// nodes whose kube-proxies synced the same revision of a shared watch hold one copy.
pub type RulesTable = BTreeMap<String, Rc<ServiceRules>>;

/// A change kube-proxy asks the machine to make: the service ports whose rules changed (`None`:
/// removed), or with `full` the whole table replaced (its first sync after a start flushes what
/// an earlier process left).
#[derive(Clone, Debug, PartialEq)]
pub struct RulesUpdate {
    pub full: bool,
    pub changed: Vec<(String, Option<Rc<ServiceRules>>)>,
}

/// What kube-proxy writes into the kernel: the changed ports, or a whole table at once (what a
/// kube-proxy reading a shared watch writes: the table built for that watch's revision, which
/// the machine then shares rather than copies).
#[derive(Clone, Debug, PartialEq)]
pub enum RulesWrite {
    Update(RulesUpdate),
    Table(Rc<RulesTable>),
}

/// What a node's kernel holds for Services.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeRules {
    by_port: Rc<RulesTable>,
    /// When kube-proxy last wrote the table.
    synced_at: Option<Time>,
    /// How many times it has.
    writes: u64,
}

impl NodeRules {
    pub fn apply(&mut self, now: Time, update: RulesUpdate) {
        // Copied only if another node (or kube-proxy's own record) shares the table.
        let by_port = Rc::make_mut(&mut self.by_port);
        if update.full {
            by_port.clear();
        }
        for (key, rules) in update.changed {
            match rules {
                Some(r) => by_port.insert(key, r),
                None => by_port.remove(&key),
            };
        }
        self.synced_at = Some(now);
        self.writes += 1;
    }
    /// Writes what kube-proxy asked for: changed ports, or a whole (shared) table.
    pub fn write(&mut self, now: Time, write: RulesWrite) {
        match write {
            RulesWrite::Update(update) => self.apply(now, update),
            RulesWrite::Table(table) => {
                self.by_port = table;
                self.synced_at = Some(now);
                self.writes += 1;
            }
        }
    }
    /// The whole table, as written.
    pub fn table(&self) -> &Rc<RulesTable> {
        &self.by_port
    }
    /// The machine lost power: the kernel's rules are gone.
    pub fn flush(&mut self) {
        self.by_port = Rc::default();
    }
    pub fn synced_at(&self) -> Option<Time> {
        self.synced_at
    }
    pub fn writes(&self) -> u64 {
        self.writes
    }
    /// Every service port's rules, by port key.
    pub fn iter(&self) -> impl Iterator<Item = &Rc<ServiceRules>> {
        self.by_port.values()
    }
    pub fn get(&self, port_key: &str) -> Option<&Rc<ServiceRules>> {
        self.by_port.get(port_key)
    }
    /// The rules a connection to `service` (`NAMESPACE/NAME`) on `port` (its number, or `None`
    /// for its first port) matches.
    pub fn for_service(&self, service: &str, port: Option<i64>) -> Option<&Rc<ServiceRules>> {
        // `default/web-2` sorts between `default/web` and `default/web:http`: walk every key with
        // the prefix and keep the service's own.
        let mut of_service = self
            .by_port
            .range(service.to_string()..)
            .take_while(|(k, _)| k.starts_with(service))
            .filter(|(k, _)| is_port_of(k, service))
            .map(|(_, r)| r);
        match port {
            Some(p) => of_service.find(|r| r.port == p),
            None => of_service.next(),
        }
    }
}

fn is_port_of(key: &str, service: &str) -> bool {
    key.strip_prefix(service).is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(n: usize) -> ServiceRules {
        ServiceRules {
            service: "default/web".into(),
            port_name: String::new(),
            protocol: "TCP".into(),
            cluster_ip: "10.96.0.20".into(),
            port: 80,
            node_port: None,
            endpoints: (0..n).map(|i| RuleEndpoint { ip: format!("10.244.0.{}", i + 2), port: 80, pod: None }).collect(),
            terminating_fallback: false,
        }
    }

    #[test]
    fn chain_names_are_upstreams_sha256_base32_hashes() {
        // Every kubeadm node's iptables-save shows this chain for the kubernetes Service.
        let mut k = rules(0);
        (k.service, k.port_name) = ("default/kubernetes".into(), "https".into());
        assert_eq!(k.chain(), "KUBE-SVC-NPX46M4PTMTKRN6Y");
        assert!(k.endpoint_chain(&RuleEndpoint { ip: "172.18.0.2".into(), port: 6443, pod: None }).starts_with("KUBE-SEP-"));
    }

    #[test]
    fn rule_i_of_n_matches_with_one_over_n_minus_i_and_the_last_always() {
        let r = rules(3);
        assert_eq!((r.probability(0), r.probability(1), r.probability(2)), (Some(1.0 / 3.0), Some(0.5), None));
        assert_eq!(r.pick(0.0).unwrap().ip, "10.244.0.2");
        assert_eq!(r.pick(0.999).unwrap().ip, "10.244.0.4");
        assert!(rules(0).pick(0.5).is_none());
    }

    #[test]
    fn updates_replace_or_remove_single_ports_and_a_full_one_flushes_the_rest() {
        let mut table = NodeRules::default();
        let web = Rc::new(rules(1));
        let mut named = rules(2);
        named.port_name = "http".into();
        named.port = 8080;
        table.apply(
            Time(5),
            RulesUpdate { full: false, changed: vec![(web.port_key(), Some(web.clone())), (named.port_key(), Some(Rc::new(named)))] },
        );
        assert_eq!(table.for_service("default/web", None).unwrap().port, 80);
        assert_eq!(table.for_service("default/web", Some(8080)).unwrap().endpoints.len(), 2);
        assert!(table.for_service("default/we", None).is_none(), "a prefix is not a service");
        let other = Rc::new(ServiceRules { service: "default/web-2".into(), ..rules(0) });
        table.apply(Time(6), RulesUpdate { full: false, changed: vec![(other.port_key(), Some(other))] });
        assert_eq!(table.for_service("default/web", Some(8080)).unwrap().port_name, "http", "past default/web-2");
        table.apply(Time(9), RulesUpdate { full: false, changed: vec![("default/web".into(), None)] });
        assert_eq!(table.iter().count(), 2);
        table.apply(Time(12), RulesUpdate { full: true, changed: vec![] });
        assert_eq!((table.iter().count(), table.synced_at(), table.writes()), (0, Some(Time(12)), 4));
    }

    #[test]
    fn a_whole_table_is_shared_not_copied_and_a_later_update_copies_it_first() {
        let web = Rc::new(rules(1));
        let shared: Rc<RulesTable> = Rc::new([(web.port_key(), web)].into_iter().collect());
        let (mut a, mut b) = (NodeRules::default(), NodeRules::default());
        a.write(Time(1), RulesWrite::Table(shared.clone()));
        b.write(Time(2), RulesWrite::Table(shared.clone()));
        assert!(Rc::ptr_eq(a.table(), b.table()) && Rc::ptr_eq(a.table(), &shared));
        assert_eq!((a.synced_at(), a.writes()), (Some(Time(1)), 1));
        a.apply(Time(3), RulesUpdate { full: false, changed: vec![("default/web".into(), None)] });
        assert_eq!((a.iter().count(), b.iter().count(), shared.len()), (0, 1, 1), "b's and the shared copy stay");
    }
}
