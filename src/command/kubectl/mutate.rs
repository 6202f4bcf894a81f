//! The imperative writes: `create deployment`, `delete`, `scale`, `set image`.
//!
//! Each builds the object kubectl would send (a Deployment exactly as `kubectl create
//! deployment` generates it; the live object with a new replica count or image) and writes it
//! through the simulation, printing kubectl's one-line result.

use super::apply::{self, print_result, DryRun};
use super::{check_namespace, flags, namespace, submit, usage_error};
use crate::api::{ApiError, ApiRequest, DeleteRequest, Reason};
use crate::command::parse::{FlagKind, FlagSpec};
use crate::command::printers::json_text;
use crate::command::resources::{self, kind_string, Selection};
use crate::command::selector::parse_label_selector;
use crate::command::yaml::to_yaml;
use crate::command::{CommandOutput, Session};
use crate::model::*;
use serde_json::Value;
use std::rc::Rc;

const CREATE_DEPLOYMENT_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("image", None, FlagKind::StringList),
    FlagSpec::new("replicas", Some('r'), FlagKind::Int(32)),
    FlagSpec::new("port", None, FlagKind::Int(32)),
    FlagSpec::new("dry-run", None, FlagKind::String),
    FlagSpec::new("output", Some('o'), FlagKind::String),
];

/// `parseImageName`: the last path element of an image reference, without tag or digest.
pub fn container_name_for(image: &str) -> String {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    let name = last.split(':').next().unwrap_or(last);
    name.replace('_', "-")
}

/// The Deployment `kubectl create deployment NAME --image=... --replicas=N` sends.
pub fn generated_deployment(name: &str, images: &[String], replicas: i32, port: Option<i64>) -> Deployment {
    let labels: StringMap = [("app".to_string(), name.to_string())].into();
    let mut seen: Vec<String> = Vec::new();
    let containers = images
        .iter()
        .map(|image| {
            let mut cname = container_name_for(image);
            if seen.contains(&cname) {
                cname = format!("{cname}-{}", seen.len() + 1);
            }
            seen.push(cname.clone());
            Container {
                name: cname,
                image: image.clone(),
                ports: port.map(|p| vec![ContainerPort { container_port: p, ..Default::default() }]).unwrap_or_default(),
                ..Default::default()
            }
        })
        .collect::<Vec<_>>();
    Deployment {
        metadata: ObjectMeta { name: name.into(), labels: labels.clone().into(), ..Default::default() },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector { match_labels: labels.clone(), match_expressions: Vec::new() },
            template: PodTemplateSpec {
                metadata: ObjectMeta { labels: labels.into(), ..Default::default() },
                spec: PodSpec { containers: containers.into(), ..Default::default() }.into(),
            }
            .into(),
            ..Default::default()
        },
        status: Default::default(),
    }
}

/// The JSON `--dry-run=client -o yaml` shows for a generated object: what the Go structs
/// marshal, including `creationTimestamp: null` and empty `resources: {}`.
fn generated_json(d: &Deployment) -> Value {
    let mut v = crate::command::printers::object_json(&Object::Deployment(d.clone()));
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("creationTimestamp".into(), Value::Null);
    }
    if let Some(t) = v.pointer_mut("/spec/template/metadata").and_then(Value::as_object_mut) {
        t.insert("creationTimestamp".into(), Value::Null);
    }
    if let Some(Value::Array(cs)) = v.pointer_mut("/spec/template/spec/containers") {
        for c in cs.iter_mut().filter_map(Value::as_object_mut) {
            c.entry("resources").or_insert_with(|| serde_json::json!({}));
        }
    }
    v
}

pub fn create_deployment(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("create deployment", args, CREATE_DEPLOYMENT_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if positional.len() != 1 {
        return usage_error("create deployment", &format!("exactly one NAME is required, got {}", positional.len()));
    }
    let images = f.list("image");
    if images.is_empty() {
        return CommandOutput::err("error: required flag(s) \"image\" not set");
    }
    let dry_run = match DryRun::parse(&f) {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    let replicas = f.int("replicas").unwrap_or(1) as i32;
    let port = f.int("port").filter(|p| *p >= 0);
    let mut d = generated_deployment(&positional[0], &images, replicas, port);
    let ns = namespace(&f);
    if dry_run == DryRun::Client {
        return match f.str("output") {
            Some("yaml") => CommandOutput::out(to_yaml(&generated_json(&d))),
            Some("json") => CommandOutput::out(json_text(&generated_json(&d))),
            other => CommandOutput::out(print_result(&Object::Deployment(d), "created", dry_run, other)),
        };
    }
    const WRAP: Option<&str> = Some("failed to create deployment: ");
    if let Err(e) = check_namespace(session, &ns) {
        return super::create::server_refusal(&e, WRAP, Kind::Deployment, &ns);
    }
    d.metadata.namespace = ns.as_str().into();
    match apply::write(session, ApiRequest::Create(Object::Deployment(d)), dry_run) {
        Ok(stored) => CommandOutput::out(print_result(&stored, "created", dry_run, f.str("output"))),
        Err(e) => super::create::server_refusal(&e, WRAP, Kind::Deployment, &ns),
    }
}

const DELETE_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("filename", Some('f'), FlagKind::StringList),
    FlagSpec::new("selector", Some('l'), FlagKind::String),
    FlagSpec::new("all", None, FlagKind::Bool),
    FlagSpec::new("grace-period", None, FlagKind::Int(64)),
    FlagSpec::new("force", None, FlagKind::Bool),
    FlagSpec::new("now", None, FlagKind::Bool),
    FlagSpec::new("wait", None, FlagKind::Bool),
    FlagSpec::new("cascade", None, FlagKind::String),
    FlagSpec::new("output", Some('o'), FlagKind::String),
    FlagSpec::new("ignore-not-found", None, FlagKind::Bool),
    FlagSpec::new("all-namespaces", Some('A'), FlagKind::Bool),
];

const DELETE_NOTHING: &str = "error: You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'";

pub fn run_delete(session: &mut Session, args: &[String], stdin: Option<String>) -> CommandOutput {
    let (positional, f) = match flags("delete", args, DELETE_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if let Some(o) = f.str("output").filter(|o| *o != "name") {
        return CommandOutput::err(format!("error: unexpected -o output mode: {o}. We only support '-o name'"));
    }
    match f.str("cascade") {
        None | Some("background") | Some("true") => {}
        Some("orphan") | Some("foreground") | Some("false") => {
            return CommandOutput::err(
                "error: kubeloop's garbage collector only deletes dependents in the background (--cascade=background)",
            )
        }
        Some(other) => {
            return CommandOutput::err(format!(
                "error: invalid cascade value ({other}). Must be \"background\", \"foreground\", or \"orphan\"."
            ))
        }
    }
    let mut grace = f.int("grace-period").unwrap_or(-1);
    if f.bool("now") {
        if grace != -1 {
            return CommandOutput::err("error: --now and --grace-period cannot be specified together");
        }
        grace = 1;
    }
    let force = f.bool("force");
    let mut out = CommandOutput::empty();
    if grace == 0 && !force {
        // kubectl turns a zero grace period into one second unless forced.
        grace = 1;
    }
    if force && grace > 0 {
        return CommandOutput::err("error: --force and --grace-period greater than 0 cannot be specified together");
    }
    if force {
        grace = 0;
        out.note("warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.");
    }
    let ns = namespace(&f);
    let targets: Vec<(ObjectKey, String)> = if !f.list("filename").is_empty() {
        if !positional.is_empty() {
            return CommandOutput::err(
                "error: when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well",
            );
        }
        let manifests = match apply::read_sources(session, &f.list("filename"), stdin.as_deref())
            .and_then(|s| apply::load(&s, session.sim().api().definitions()))
        {
            Ok(m) => m,
            Err(e) => return CommandOutput::err(e),
        };
        manifests
            .into_iter()
            .map(|m| {
                let mut k = m.object.key();
                if k.namespace.is_empty() && m.namespaced {
                    k.namespace = ns.as_str().into();
                }
                (k, resources::object_kind_string(&m.object))
            })
            .collect()
    } else {
        if positional.is_empty() {
            return CommandOutput::err(DELETE_NOTHING);
        }
        let selection = match resources::select(&positional) {
            Ok(s) => s,
            Err(e) => {
                return match super::custom::named(session, &positional, &ns) {
                    Some(Ok(targets)) if !targets.is_empty() => delete_all(session, targets, &f, grace, force, out),
                    Some(Ok(_)) => CommandOutput::err("error: resource(s) were provided, but no name was specified"),
                    Some(Err(e)) => CommandOutput::err(e),
                    None => CommandOutput::err(e),
                };
            }
        };
        match selection {
            Selection::Named(named) => {
                if f.bool("all") || f.has("selector") {
                    return CommandOutput::err("error: name cannot be provided when a selector is specified");
                }
                named.into_iter().map(|(k, n)| (ObjectKey::new(k, &ns, &n), kind_string(k))).collect()
            }
            Selection::Kinds(kinds) => {
                if !f.bool("all") && !f.has("selector") {
                    return CommandOutput::err("error: resource(s) were provided, but no name was specified");
                }
                let labels = match f.str("selector").map(parse_label_selector).transpose() {
                    Ok(l) => l,
                    Err(e) => return CommandOutput::err(e),
                };
                let query = super::get::Query {
                    namespace: if f.bool("all-namespaces") { None } else { Some(ns.clone()) },
                    labels,
                    fields: Default::default(),
                };
                let mut found = Vec::new();
                for kind in kinds {
                    for o in super::get::list(session.sim(), kind, &query) {
                        found.push((o.key(), kind_string(kind)));
                    }
                }
                if found.is_empty() {
                    out.say("No resources found");
                    return out;
                }
                found
            }
        }
    };
    delete_all(session, targets, &f, grace, force, out)
}

/// Deletes each target, saying what was deleted as kubectl does.
fn delete_all(
    session: &mut Session,
    targets: Vec<(ObjectKey, String)>,
    f: &crate::command::parse::Flags,
    grace: i64,
    force: bool,
    mut out: CommandOutput,
) -> CommandOutput {
    let operation = if force { "force deleted" } else { "deleted" };
    for (key, kind) in targets {
        let name = key.name.clone();
        let request = DeleteRequest { key, uid: None, grace_period_seconds: (grace >= 0).then_some(grace) };
        match submit(session, ApiRequest::Delete(request)) {
            Ok(_) => {
                let text = if f.str("output") == Some("name") { format!("{kind}/{name}") } else { format!("{kind} {name:?} {operation}") };
                out.say(&text);
            }
            Err(e) if e.reason == Reason::NotFound && f.bool("ignore-not-found") => {}
            Err(e) => out.fail(&e.kubectl_message()),
        }
    }
    out
}

const SCALE_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("replicas", None, FlagKind::Int(32)),
    FlagSpec::new("current-replicas", None, FlagKind::Int(32)),
    FlagSpec::new("selector", Some('l'), FlagKind::String),
    FlagSpec::new("all", None, FlagKind::Bool),
    FlagSpec::new("output", Some('o'), FlagKind::String),
];

/// Finds the named targets of `scale`/`set`/`rollout`: `TYPE NAME...` or `TYPE/NAME...`.
fn named_targets(command: &str, positional: &[String], ns: &str) -> Result<Vec<ObjectKey>, CommandOutput> {
    if positional.is_empty() {
        return Err(usage_error(command, "required resource not specified"));
    }
    match resources::select(positional).map_err(CommandOutput::err)? {
        Selection::Named(named) => Ok(named.into_iter().map(|(k, n)| ObjectKey::new(k, ns, &n)).collect()),
        Selection::Kinds(_) => Err(CommandOutput::err("error: resource(s) were provided, but no name was specified")),
    }
}

/// The live object, or the NotFound error as kubectl prints it.
fn live(session: &Session, key: &ObjectKey) -> Result<Rc<Object>, String> {
    session.sim().api().get(key).cloned().ok_or_else(|| ApiError::not_found(key.kind, &key.name).kubectl_message())
}

pub fn run_scale(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("scale", args, SCALE_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let Some(replicas) = f.int("replicas") else {
        return CommandOutput::err("error: required flag(s) \"replicas\" not set");
    };
    if replicas < 0 {
        return CommandOutput::err("error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0");
    }
    let ns = namespace(&f);
    if let Some(targets) = super::custom::named(session, &positional, &ns) {
        return match targets {
            Ok(targets) => super::custom::scale(session, targets, replicas, &f),
            Err(e) => CommandOutput::err(e),
        };
    }
    let keys = match named_targets("scale", &positional, &ns) {
        Ok(k) => k,
        Err(e) => return e,
    };
    // kubectl gets every object first; with none found it says so, wrapping what it was told
    // (`no objects passed to scale %w`), otherwise it scales those found and then reports the rest.
    let mut missing = Vec::new();
    let mut found = Vec::new();
    for key in keys {
        match session.sim().api().get(&key).cloned() {
            Some(o) => found.push((key, o)),
            None => missing.push(ApiError::not_found(key.kind, &key.name)),
        }
    }
    if found.is_empty() {
        let errors: Vec<String> = missing.iter().map(|e| e.message.clone()).collect();
        let wrapped = if errors.len() == 1 { errors[0].clone() } else { format!("[{}]", errors.join(", ")) };
        return CommandOutput::err(format!("error: no objects passed to scale {wrapped}"));
    }
    let mut out = CommandOutput::empty();
    for (key, object) in found {
        let current = match &*object {
            Object::Deployment(d) => d.spec.replicas.unwrap_or(1),
            Object::ReplicaSet(rs) => rs.spec.replicas.unwrap_or(1),
            Object::ReplicationController(rc) => rc.spec.replicas.unwrap_or(1),
            Object::StatefulSet(sts) => sts.replicas(),
            other => {
                out.fail(&format!("error: no scaler has been implemented for {{\"{}\" \"{}\"}}", group(other.kind()), other.kind()));
                continue;
            }
        };
        if let Some(expected) = f.int("current-replicas").filter(|c| *c >= 0) {
            if expected != i64::from(current) {
                out.fail(&format!("error: Expected replicas to be {expected}, was {current}"));
                continue;
            }
        }
        let mut next = (*object).clone();
        match &mut next {
            Object::Deployment(d) => d.spec.replicas = Some(replicas as i32),
            Object::ReplicaSet(rs) => rs.spec.replicas = Some(replicas as i32),
            Object::ReplicationController(rc) => rc.spec.replicas = Some(replicas as i32),
            Object::StatefulSet(sts) => sts.spec.replicas = Some(replicas as i32),
            _ => {}
        }
        match submit(session, ApiRequest::Update(next)) {
            Ok(_) if f.str("output") == Some("name") => out.say(&format!("{}/{}", kind_string(key.kind), key.name)),
            Ok(_) => out.say(&format!("{}/{} scaled", kind_string(key.kind), key.name)),
            Err(e) => out.fail(&e.kubectl_message()),
        }
    }
    for e in missing {
        out.fail(&e.kubectl_message());
    }
    out
}

fn group(kind: Kind) -> &'static str {
    kind.api_version().split_once('/').map(|(g, _)| g).unwrap_or("")
}

const SET_IMAGE_FLAGS: &[FlagSpec] = &[FlagSpec::new("all", None, FlagKind::Bool), FlagSpec::new("selector", Some('l'), FlagKind::String)];

pub fn run_set(session: &mut Session, args: &[String]) -> CommandOutput {
    let Some(sub) = args.first() else {
        return CommandOutput::out("Configure application resources.\n\n These commands help you make changes to existing application resources.\n\nAvailable Commands:\n  image         Update the image of a pod template\n");
    };
    const SUBCOMMANDS: &[&str] = &["env", "image", "resources", "selector", "serviceaccount", "subject"];
    match sub.as_str() {
        "image" => set_image(session, &args[1..]),
        other if SUBCOMMANDS.contains(&other) => CommandOutput::err(format!("error: kubeloop does not simulate \"kubectl set {other}\"")),
        other => CommandOutput::err(super::unknown_command(other, "kubectl set", SUBCOMMANDS)),
    }
}

fn set_image(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("set image", args, SET_IMAGE_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let (pairs, resources_args): (Vec<String>, Vec<String>) = positional.into_iter().partition(|a| a.contains('='));
    let mut errors = Vec::new();
    if resources_args.is_empty() {
        errors.push("one or more resources must be specified as <resource> <name> or <resource>/<name>".to_string());
    }
    if pairs.is_empty() {
        errors.push("at least one image update is required".to_string());
    }
    if !errors.is_empty() {
        let text = if errors.len() == 1 { format!("error: {}", errors[0]) } else { format!("error: [{}]", errors.join(", ")) };
        return CommandOutput::err(text);
    }
    let mut updates: Vec<(String, String)> = Vec::new();
    for p in &pairs {
        let (name, image) = p.split_once('=').unwrap_or((p, ""));
        if name.is_empty() || image.is_empty() {
            return CommandOutput::err(format!("error: invalid image argument: {p}"));
        }
        updates.push((name.to_string(), image.to_string()));
    }
    let ns = namespace(&f);
    let keys = match named_targets("set image", &resources_args, &ns) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let mut out = CommandOutput::empty();
    for key in keys {
        let object = match live(session, &key) {
            Ok(o) => o,
            Err(e) => {
                out.fail(&e);
                continue;
            }
        };
        let mut next = (*object).clone();
        let spec = match &mut next {
            Object::Deployment(d) => &mut d.spec.template.spec,
            Object::ReplicaSet(rs) => &mut rs.spec.template.spec,
            Object::DaemonSet(ds) => &mut ds.spec.template.spec,
            Object::StatefulSet(sts) => &mut sts.spec.template.spec,
            Object::Pod(p) => &mut p.spec,
            other => {
                out.fail(&format!(
                    "error: {}/{} the object is not a pod or does not have a pod template: {}",
                    kind_string(other.kind()),
                    key.name,
                    other.kind()
                ));
                continue;
            }
        };
        for (container, image) in &updates {
            let mut found = false;
            for c in spec.containers.iter_mut().filter(|c| c.name == *container || container == "*") {
                c.image = image.clone();
                found = true;
            }
            if !found {
                out.fail(&format!("error: unable to find container named {container:?}"));
            }
        }
        if next == *object {
            continue;
        }
        match submit(session, ApiRequest::Update(next)) {
            Ok(_) => out.say(&format!("{}/{} image updated", kind_string(key.kind), key.name)),
            Err(e) => out.fail(&format!("error: failed to patch image update to pod template: {}", e.message)),
        }
    }
    out
}

/// Writes a changed copy of a live deployment (rollout undo, pause, resume, restart).
pub(crate) fn update_deployment(session: &mut Session, d: Deployment) -> Result<Rc<Object>, String> {
    submit(session, ApiRequest::Update(Object::Deployment(d))).map_err(|e| e.kubectl_message())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_names_come_from_the_image() {
        assert_eq!(container_name_for("nginx:1.14.2"), "nginx");
        assert_eq!(container_name_for("registry.k8s.io/pause:3.9"), "pause");
        assert_eq!(container_name_for("localhost:5000/my_app@sha256:abc"), "my-app");
    }

    #[test]
    fn create_deployment_builds_what_kubectl_sends() {
        let d = generated_deployment("web", &["nginx".to_string()], 2, None);
        let yaml = to_yaml(&generated_json(&d));
        assert_eq!(
            yaml,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: web\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  strategy: {}\n  template:\n    metadata:\n      creationTimestamp: null\n      labels:\n        app: web\n    spec:\n      containers:\n      - image: nginx\n        name: nginx\n        resources: {}\nstatus: {}\n"
        );
    }
}
