//! `sim traffic` and `sim rules`: send connections to a Service and read where they went, and
//! print the Service rules a node's kube-proxy wrote, as `iptables-save` shows them on the node.
//!
//! The routing itself lives in `crate::sim::traffic` and the rules in `crate::net`; this module
//! parses, checks and prints. Every error changes nothing.

use super::kubectl::flags;
use super::parse::{FlagKind, FlagSpec};
use super::sim_verbs::format_sim_time;
use super::table::render_table;
use super::{CommandOutput, Session};
use crate::model::{Duration, Kind, ObjectKey};
use crate::net::{NodeRules, ServiceRules};
use crate::sim::traffic::{Flow, Source};

const TRAFFIC_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("rate", None, FlagKind::Int(32)),
    FlagSpec::new("from", None, FlagKind::String),
    FlagSpec::new("port", None, FlagKind::Int(32)),
];

/// How many connections per second a flow sends unless `--rate` says otherwise.
pub const DEFAULT_RATE: u32 = 10;

fn parse_error(verb: &str, e: CommandOutput) -> CommandOutput {
    CommandOutput::err(e.stderr.replace(&format!("See 'kubectl sim {verb} --help' for usage.\n"), ""))
}

/// `sim traffic [SERVICE [--rate N] [--from NODE|pod/NAME] [--port P] [-n NS]]`,
/// `sim traffic stop [SERVICE]`.
pub fn traffic(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("sim traffic", args, TRAFFIC_FLAGS) {
        Ok(v) => v,
        Err(e) => return parse_error("traffic", e),
    };
    let ns = super::kubectl::namespace(&f);
    let service_key =
        |name: &str| ObjectKey::new(Kind::Service, &ns, name.strip_prefix("svc/").or(name.strip_prefix("service/")).unwrap_or(name));
    match positional.as_slice() {
        [] => CommandOutput::out(show(session)),
        [stop] if stop == "stop" => {
            let n = session.sim_mut().stop_traffic(None);
            CommandOutput::out(format!("stopped {n} traffic flow{}", if n == 1 { "" } else { "s" }))
        }
        [stop, name] if stop == "stop" => match session.sim_mut().stop_traffic(Some(&service_key(name))) {
            0 => CommandOutput::err(format!("error: no traffic is flowing to service {name:?}")),
            _ => CommandOutput::out(format!("traffic to service/{} stopped", service_key(name).name)),
        },
        [name] => start(session, service_key(name), &ns, f.int("rate"), f.str("from"), f.int("port")),
        _ => CommandOutput::err(format!(
            "error: sim traffic takes one SERVICE (or stop [SERVICE]), got {:?}\nUsage: sim traffic SERVICE [--rate 10] [--from NODE|pod/NAME] [--port P]",
            positional.join(" ")
        )),
    }
}

fn start(session: &mut Session, service: ObjectKey, ns: &str, rate: Option<i64>, from: Option<&str>, port: Option<i64>) -> CommandOutput {
    let rate = match rate {
        None => DEFAULT_RATE,
        Some(r) => match u32::try_from(r) {
            Ok(r) => r,
            Err(_) => {
                return CommandOutput::err(format!(
                    "error: invalid argument \"{r}\" for \"--rate\" flag: from 1 to 1000 connections per second"
                ))
            }
        },
    };
    let source = match from {
        None | Some("") => Source::EveryNode,
        Some(p) if p.starts_with("pod/") => Source::Pod(ObjectKey::new(Kind::Pod, ns, &p[4..])),
        Some(n) => Source::Node(n.strip_prefix("node/").unwrap_or(n).to_string()),
    };
    match session.sim_mut().start_traffic(service, port, source, rate) {
        Ok(flow) => CommandOutput::out(format!(
            "traffic to service/{} started: {} connections/s from {}",
            flow.service.name, flow.rate, flow.source
        )),
        Err(e) => CommandOutput::err(e),
    }
}

/// Every flow's counts, then where its connections went, pod by pod.
fn show(session: &Session) -> String {
    let sim = session.sim();
    let flows: Vec<&Flow> = sim.traffic_flows().collect();
    if flows.is_empty() {
        return "No traffic is flowing. Start some with: sim traffic SERVICE".into();
    }
    let rows: Vec<Vec<String>> = flows
        .iter()
        .map(|f| {
            vec![
                f.service_name(),
                f.source.to_string(),
                format!("{}/s", f.rate),
                f.sent.to_string(),
                f.answered.to_string(),
                f.refused.to_string(),
                f.timed_out.to_string(),
                format_sim_time(sim.now().since(f.started_at)),
            ]
        })
        .collect();
    let mut out = render_table(&["SERVICE", "FROM", "RATE", "SENT", "ANSWERED", "REFUSED", "TIMED OUT", "FOR"], &rows, true);
    let backends: Vec<Vec<String>> = flows
        .iter()
        .flat_map(|f| f.by_backend.iter().map(|(pod, c)| vec![f.service_name(), pod.clone(), c.answered.to_string(), c.failed.to_string()]))
        .collect();
    if !backends.is_empty() {
        out.push('\n');
        out.push_str(&render_table(&["SERVICE", "BACKEND POD", "ANSWERED", "FAILED"], &backends, true));
    }
    out
}

/// `sim rules NODE`: the Service part of the node's nat table.
pub fn rules(session: &Session, args: &[String]) -> CommandOutput {
    let [node] = args else {
        return CommandOutput::err("error: sim rules takes exactly one NODE: sim rules node-1");
    };
    let Some(machine) = session.sim().machine(node) else {
        return CommandOutput::err(crate::api::ApiError::not_found(Kind::Node, node).kubectl_message());
    };
    CommandOutput::out(iptables_save(node, machine.rules()))
}

/// What `iptables-save -t nat` prints of the Service chains (the masquerade marks and the
/// node-port and external chains are left out), plus the filter table's rejects for services
/// without endpoints.
pub fn iptables_save(node: &str, table: &NodeRules) -> String {
    let mut out = match table.synced_at() {
        Some(t) => format!("# kube-proxy's Service rules on {node} (iptables mode), last written at {}\n", format_sim_time(Duration(t.0))),
        None => format!("# kube-proxy has not written Service rules on {node} yet\n"),
    };
    let (mut nat, mut filter) = (Vec::new(), Vec::new());
    for r in table.iter() {
        service_rules(r, &mut nat, &mut filter);
    }
    if !filter.is_empty() {
        out.push_str("*filter\n");
        filter.iter().for_each(|l| push_line(&mut out, l));
        out.push_str("COMMIT\n");
    }
    out.push_str("*nat\n");
    nat.iter().for_each(|l| push_line(&mut out, l));
    out.push_str("COMMIT\n");
    out
}

fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

fn service_rules(r: &ServiceRules, nat: &mut Vec<String>, filter: &mut Vec<String>) {
    let (key, proto) = (r.port_key(), r.protocol.to_ascii_lowercase());
    let dest = format!("-d {}/32 -p {proto}", r.cluster_ip);
    if r.endpoints.is_empty() {
        filter.push(format!(
            "-A KUBE-SERVICES {dest} -m comment --comment \"{key} has no endpoints\" -m {proto} --dport {} -j REJECT --reject-with icmp-port-unreachable",
            r.port
        ));
        return;
    }
    let chain = r.chain();
    nat.push(format!("-A KUBE-SERVICES {dest} -m comment --comment \"{key} cluster IP\" -m {proto} --dport {} -j {chain}", r.port));
    for (i, e) in r.endpoints.iter().enumerate() {
        let statistic =
            r.probability(i).map(|p| format!(" -m statistic --mode random --probability {}", kernel_probability(p))).unwrap_or_default();
        nat.push(format!("-A {chain} -m comment --comment \"{key} -> {}\"{statistic} -j {}", e.address(), r.endpoint_chain(e)));
    }
    for e in &r.endpoints {
        nat.push(format!(
            "-A {} -p {proto} -m comment --comment \"{key}\" -m {proto} -j DNAT --to-destination {}",
            r.endpoint_chain(e),
            e.address()
        ));
    }
}

/// The probability as `iptables-save` prints it back: the statistic match keeps it as a 31-bit
/// fraction (`lround(p × 2³¹)`), printed with eleven decimals — so kube-proxy's `0.3333333333`
/// reads `0.33333333349`.
fn kernel_probability(p: f64) -> String {
    let fixed = (p * 2147483648.0).round();
    format!("{:.11}", fixed / 2147483648.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_read_back_as_the_kernel_stores_them() {
        assert_eq!(kernel_probability(1.0 / 3.0), "0.33333333349");
        assert_eq!(kernel_probability(0.5), "0.50000000000");
        assert_eq!(kernel_probability(0.25), "0.25000000000");
    }
}
