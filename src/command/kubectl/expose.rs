//! `kubectl expose`: a Service in front of a Deployment, ReplicaSet or Pod, built as kubectl's
//! service generator builds it — the selector from the resource's selector (a pod's labels), its
//! labels copied, the ports from `--port` or from the pod template's container ports.

use super::{check_namespace, flags, namespace, submit, usage_error};
use crate::api::ApiRequest;
use crate::command::parse::{FlagKind, FlagSpec};
use crate::command::resources::{self, Selection};
use crate::command::{CommandOutput, Session};
use crate::model::*;

const FLAGS: &[FlagSpec] = &[
    FlagSpec::new("port", None, FlagKind::String),
    FlagSpec::new("target-port", None, FlagKind::String),
    FlagSpec::new("type", None, FlagKind::String),
    FlagSpec::new("name", None, FlagKind::String),
    FlagSpec::new("protocol", None, FlagKind::String),
];

/// What a resource offers to expose: its selector as a map, its labels, its containers' ports.
fn exposable(object: &Object) -> Result<(StringMap, StringMap, Vec<ContainerPort>), String> {
    let from_selector = |s: &LabelSelector| -> Result<StringMap, String> {
        if s.match_expressions.is_empty() {
            Ok(s.match_labels.clone())
        } else {
            Err(format!("couldn't convert expressions - \"{}\" to map: operator {:?} without a single value cannot be converted into the old label selector format", s.to_query(), s.match_expressions[0].operator))
        }
    };
    let ports = |spec: &PodSpec| spec.containers.iter().flat_map(|c| c.ports.iter().cloned()).collect();
    let labels = (*object.meta().labels).clone();
    match object {
        Object::Deployment(d) => Ok((from_selector(&d.spec.selector)?, labels, ports(&d.spec.template.spec))),
        Object::ReplicaSet(rs) => Ok((from_selector(&rs.spec.selector)?, labels, ports(&rs.spec.template.spec))),
        Object::Pod(p) => Ok((labels.clone(), labels, ports(&p.spec))),
        other => Err(format!("cannot expose a {}", other.kind())),
    }
}

fn target_port(text: &str) -> IntOrString {
    text.parse::<i64>().map(IntOrString::Int).unwrap_or_else(|_| IntOrString::String(text.to_string()))
}

pub fn run(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("expose", args, FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let ns = namespace(&f);
    let key = match resources::select(&positional) {
        _ if positional.is_empty() => return usage_error("expose", "You must provide one or more resources by argument or filename."),
        Ok(Selection::Named(named)) if named.len() == 1 => ObjectKey::new(named[0].0, &ns, &named[0].1),
        Ok(_) => return usage_error("expose", "exactly one NAME is required"),
        Err(e) => return CommandOutput::err(e),
    };
    let Some(object) = session.sim().api().get(&key).cloned() else {
        return CommandOutput::err(crate::api::ApiError::not_found(key.kind, &key.name).kubectl_message());
    };
    let (selector, labels, container_ports) = match exposable(&object) {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(format!("error: {e}")),
    };
    let protocol = f.str("protocol").map(str::to_string);
    let ports: Vec<ServicePort> = match f.str("port") {
        Some(p) => match p.parse::<i64>() {
            Ok(port) => vec![ServicePort {
                port,
                protocol: protocol.clone(),
                target_port: f.str("target-port").map(target_port),
                ..Default::default()
            }],
            Err(_) => return CommandOutput::err(format!("error: strconv.Atoi: parsing {p:?}: invalid syntax")),
        },
        None if container_ports.is_empty() => return CommandOutput::err("error: couldn't find port via --port flag or introspection"),
        None => {
            let many = container_ports.len() > 1;
            container_ports
                .iter()
                .enumerate()
                .map(|(i, cp)| ServicePort {
                    name: if many { format!("port-{}", i + 1) } else { String::new() },
                    port: cp.container_port,
                    protocol: protocol.clone().or_else(|| cp.protocol.clone()),
                    target_port: Some(f.str("target-port").map(target_port).unwrap_or(IntOrString::Int(cp.container_port))),
                    ..Default::default()
                })
                .collect()
        }
    };
    if let Err(e) = check_namespace(session, &ns) {
        return CommandOutput::err(e.kubectl_message());
    }
    let name = f.str("name").unwrap_or(&key.name).to_string();
    let svc = Service {
        metadata: ObjectMeta { name: name.as_str().into(), namespace: ns.as_str().into(), labels: labels.into(), ..Default::default() },
        spec: ServiceSpec { ports, selector, type_: f.str("type").map(str::to_string), ..Default::default() }.into(),
        status: Default::default(),
    };
    match submit(session, ApiRequest::Create(Object::Service(svc))) {
        Ok(_) => CommandOutput::out(format!("service/{name} exposed")),
        Err(e) => CommandOutput::err(e.kubectl_message()),
    }
}
