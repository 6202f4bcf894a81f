//! `sim load`: a CPU demand on a workload, which metrics-server reports and a
//! HorizontalPodAutoscaler scales on (`crate::sim::metrics`).
//!
//! `sim load deployment/web --cpu 300%` asks for three pods' worth of the CPU each pod requests,
//! shared by the workload's running pods; `--cpu 0%` takes it away; `sim load` lists the loads.

use super::kubectl::flags;
use super::parse::{FlagKind, FlagSpec};
use super::{CommandOutput, Session};
use crate::model::*;
use crate::sim::metrics::Load;

const LOAD_FLAGS: &[FlagSpec] = &[FlagSpec::new("cpu", None, FlagKind::String)];
const USAGE: &str = "Usage: sim load deployment|replicaset|replicationcontroller/NAME --cpu PERCENT% [-n NS]";

/// `sim load [TYPE/NAME --cpu N%]`.
pub fn load(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("sim load", args, LOAD_FLAGS) {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(e.stderr.replace("See 'kubectl sim load --help' for usage.\n", "")),
    };
    let ns = super::kubectl::namespace(&f);
    match positional.as_slice() {
        [] => CommandOutput::out(list(session)),
        [target] => {
            let Some(cpu) = f.str("cpu") else {
                return CommandOutput::err(format!("error: sim load needs --cpu, like --cpu 300%\n{USAGE}"));
            };
            match (parse_percent(cpu), selector_of(session, target, &ns)) {
                (Err(e), _) | (_, Err(e)) => CommandOutput::err(e),
                (Ok(percent), Ok((workload, selector))) => {
                    let message = if percent == 0 {
                        format!("load on {workload} removed")
                    } else {
                        format!("load on {workload}: CPU {percent}% of one pod's request, shared by its running pods")
                    };
                    session.sim_mut().set_load(Load { workload, namespace: ns, selector, percent });
                    CommandOutput::out(message)
                }
            }
        }
        _ => CommandOutput::err(format!("error: sim load takes one workload, got {:?}\n{USAGE}", positional.join(" "))),
    }
}

fn parse_percent(text: &str) -> Result<i64, String> {
    let digits = text.strip_suffix('%').unwrap_or(text);
    digits
        .parse::<i64>()
        .ok()
        .filter(|n| (0..=100_000).contains(n))
        .ok_or_else(|| format!("error: invalid --cpu {text:?}: want a percentage of one pod's CPU request, like 300%"))
}

/// The workload's name as `kind/name` and the selector of its pods.
fn selector_of(session: &Session, target: &str, ns: &str) -> Result<(String, LabelSelector), String> {
    let Some((typed, name)) = target.split_once('/') else {
        return Err(format!("error: sim load wants TYPE/NAME, got {target:?}\n{USAGE}"));
    };
    let kind = super::resources::resolve(typed).map_err(|e| format!("error: {e}"))?;
    let key = ObjectKey::new(kind, ns, name);
    let object = session.sim().api().get(&key).ok_or_else(|| crate::api::ApiError::not_found(kind, name).kubectl_message())?;
    let selector = match &**object {
        Object::Deployment(d) => d.spec.selector.clone(),
        Object::ReplicaSet(rs) => rs.spec.selector.clone(),
        Object::ReplicationController(rc) => rc.as_replica_set().spec.selector,
        _ => return Err(format!("error: sim load acts on a Deployment, ReplicaSet or ReplicationController, not a {}", kind.as_str())),
    };
    Ok((format!("{}/{name}", kind.info().singular), selector))
}

fn list(session: &Session) -> String {
    let loads = session.sim().loads();
    if loads.is_empty() {
        return "no load is set; try: sim load deployment/NAME --cpu 300%".into();
    }
    loads.iter().map(|l| format!("{}/{}: CPU {}% of one pod's request", l.namespace, l.workload, l.percent)).collect::<Vec<_>>().join("\n")
}
