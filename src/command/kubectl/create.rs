//! `kubectl create namespace|configmap|secret generic|job|cronjob`: the imperative generators for the
//! objects that need no manifest. Each builds the object kubectl's generator sends, from
//! `--from-literal=KEY=VALUE` and `--from-file=[KEY=]PATH` (the session's files), and writes it
//! through the simulation with kubectl's one-line result.

use super::apply::{self, print_result, DryRun};
use super::{check_namespace, flags, namespace, usage_error};
use crate::api::ApiRequest;
use crate::command::parse::{FlagKind, FlagSpec, Flags};
use crate::command::printers::json_text;
use crate::command::yaml::to_yaml;
use crate::command::{CommandOutput, Session};
use crate::model::*;
use std::collections::BTreeMap;

const OUTPUT_FLAGS: [FlagSpec; 2] =
    [FlagSpec::new("dry-run", None, FlagKind::String), FlagSpec::new("output", Some('o'), FlagKind::String)];

const DATA_FLAGS: &[FlagSpec] = &[
    OUTPUT_FLAGS[0],
    OUTPUT_FLAGS[1],
    FlagSpec::new("from-literal", None, FlagKind::StringList),
    FlagSpec::new("from-file", None, FlagKind::StringList),
    FlagSpec::new("type", None, FlagKind::String),
];

/// The `kubectl create` subcommands that build an object themselves (`run_create` dispatches
/// each to its generator), with their short names.
pub(crate) const GENERATORS: &[&str] =
    &["deployment", "deploy", "namespace", "ns", "configmap", "cm", "secret", "poddisruptionbudget", "pdb", "job", "cronjob", "cj"];

/// `kubectl create namespace NAME`.
pub fn create_namespace(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("create namespace", args, &OUTPUT_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let Some(name) = one_name("create namespace", &positional) else {
        return usage_error("create namespace", &format!("exactly one NAME is required, got {}", positional.len()));
    };
    send(session, &f, Object::Namespace(Namespace::new(name)), None, None)
}

/// `kubectl create configmap NAME [--from-literal=K=V] [--from-file=[K=]PATH]`.
pub fn create_config_map(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("create configmap", args, DATA_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if f.has("type") {
        return CommandOutput::err("error: unknown flag: --type\nSee 'kubectl create configmap --help' for usage.");
    }
    let Some(name) = one_name("create configmap", &positional) else {
        return usage_error("create configmap", &format!("exactly one NAME is required, got {}", positional.len()));
    };
    let data = match sources(session, &f, "ConfigMap", name) {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    let mut cm = ConfigMap::default();
    cm.metadata.name = name.into();
    cm.data = data;
    let ns = namespace(&f);
    send(session, &f, Object::ConfigMap(cm), Some(&ns), Some("failed to create configmap: "))
}

/// `kubectl create secret generic NAME ...` (the other secret generators are not modelled).
pub fn create_secret(session: &mut Session, args: &[String]) -> CommandOutput {
    match args.first().map(String::as_str) {
        Some("generic") => {}
        Some(other @ ("tls" | "docker-registry")) => {
            return CommandOutput::err(format!(
                "error: kubeloop does not simulate \"kubectl create secret {other}\"; try: kubectl create secret generic"
            ))
        }
        Some(other) if !other.starts_with('-') => {
            return CommandOutput::err(super::unknown_command(other, "kubectl create secret", &["docker-registry", "generic", "tls"]))
        }
        _ => return usage_error("create secret", "a secret type is required: kubectl create secret generic NAME --from-literal=KEY=VALUE"),
    }
    let (positional, f) = match flags("create secret generic", &args[1..], DATA_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let Some(name) = one_name("create secret generic", &positional) else {
        return usage_error("create secret generic", &format!("exactly one NAME is required, got {}", positional.len()));
    };
    let data = match sources(session, &f, "Secret", name) {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    let mut secret = Secret::default();
    secret.metadata.name = name.into();
    secret.type_ = f.str("type").unwrap_or_default().to_string();
    secret.data = data.into_iter().map(|(k, v)| (k, Bytes::encode(v.as_bytes()))).collect();
    let ns = namespace(&f);
    // Upstream's words have no colon here.
    send(session, &f, Object::Secret(secret), Some(&ns), Some("failed to create secret "))
}

const JOB_FLAGS: &[FlagSpec] =
    &[OUTPUT_FLAGS[0], OUTPUT_FLAGS[1], FlagSpec::new("image", None, FlagKind::String), FlagSpec::new("from", None, FlagKind::String)];

/// `kubectl create job NAME --image=IMAGE [-- COMMAND [ARGS...]]`: one container named after
/// the Job, restartPolicy Never, as kubectl's generator builds it.
pub fn create_job(session: &mut Session, args: &[String]) -> CommandOutput {
    // Everything after `--` is the container's command, never flags or the name.
    let (args, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], args[i + 1..].to_vec()),
        None => (args, Vec::new()),
    };
    let (positional, f) = match flags("create job", args, JOB_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let Some(name) = one_name("create job", &positional) else {
        return usage_error("create job", &format!("exactly one NAME is required, got {}", positional.len()));
    };
    let image = f.str("image").filter(|i| !i.is_empty());
    let from = f.str("from").filter(|i| !i.is_empty());
    let (image, from) = match (image, from) {
        (Some(image), None) => (image, None),
        (None, Some(from)) => ("", Some(from.to_string())),
        _ => return CommandOutput::err("error: either --image or --from must be specified"),
    };
    if let Some(from) = from {
        if !command.is_empty() {
            return CommandOutput::err("error: cannot specify --from and command");
        }
        return create_job_from(session, &f, name, &from);
    }
    let mut job = Job::default();
    job.metadata.name = name.into();
    let spec = PodSpec {
        containers: vec![Container { name: name.to_string(), image: image.to_string(), command, ..Default::default() }].into(),
        restart_policy: Some("Never".into()),
        ..Default::default()
    };
    job.spec.template = PodTemplateSpec { spec: spec.into(), ..Default::default() }.into();
    let ns = namespace(&f);
    send(session, &f, Object::Job(job), Some(&ns), Some("failed to create job: "))
}

/// `kubectl create job NAME --from=cronjob/CRONJOB`: the CronJob's Job template as a Job named
/// NAME, annotated `cronjob.kubernetes.io/instantiate: manual` and controlled by the CronJob
/// (`createJobFromCronJob`), so the CronJob controller sees it among its Jobs.
fn create_job_from(session: &mut Session, f: &Flags, name: &str, from: &str) -> CommandOutput {
    let Some((typed, source)) = from.split_once('/') else {
        return CommandOutput::err("error: resource(s) were provided, but no name was specified");
    };
    let kind = match crate::command::resources::resolve(typed) {
        Ok(k) => k,
        Err(e) => return CommandOutput::err(format!("error: {e}")),
    };
    let ns = namespace(f);
    let Some(object) = session.sim().api().get(&ObjectKey::new(kind, &ns, source)).cloned() else {
        return CommandOutput::err(crate::api::ApiError::not_found(kind, source).kubectl_message());
    };
    let Some(cj) = object.as_cron_job() else {
        let version = kind.api_version().rsplit('/').next().unwrap_or("v1");
        return CommandOutput::err(format!("error: unknown object type *{version}.{}", kind.as_str()));
    };
    let template = &cj.spec.job_template;
    let mut job = Job { spec: template.spec.clone().into(), ..Default::default() };
    job.metadata.name = name.into();
    job.metadata.labels = template.metadata.labels.clone();
    job.metadata.annotations.insert(CRONJOB_INSTANTIATE.into(), "manual".into());
    job.metadata.annotations.extend(template.metadata.annotations.clone());
    let owner = OwnerReference {
        api_version: "batch/v1".into(),
        kind: "CronJob".into(),
        name: cj.metadata.name.to_string(),
        uid: cj.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: None,
    };
    job.metadata.owner_references = vec![owner].into();
    send(session, f, Object::Job(job), Some(&ns), Some("failed to create job: "))
}

const CRONJOB_FLAGS: &[FlagSpec] = &[
    OUTPUT_FLAGS[0],
    OUTPUT_FLAGS[1],
    FlagSpec::new("image", None, FlagKind::String),
    FlagSpec::new("schedule", None, FlagKind::String),
    FlagSpec::new("restart", None, FlagKind::String),
];

/// `kubectl create cronjob NAME --image=IMAGE --schedule=SCHEDULE [--restart=OnFailure|Never]
/// [-- COMMAND [ARGS...]]`: one container named after the CronJob, restartPolicy OnFailure
/// unless `--restart` says otherwise, as kubectl's generator builds it.
pub fn create_cron_job(session: &mut Session, args: &[String]) -> CommandOutput {
    let (args, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], args[i + 1..].to_vec()),
        None => (args, Vec::new()),
    };
    let (positional, f) = match flags("create cronjob", args, CRONJOB_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let Some(name) = one_name("create cronjob", &positional) else {
        return usage_error("create cronjob", &format!("exactly one NAME is required, got {}", positional.len()));
    };
    // Both flags are `MarkFlagRequired`: cobra names the ones missing.
    let missing: Vec<String> = ["image", "schedule"].iter().filter(|n| !f.has(n)).map(|n| format!("{n:?}")).collect();
    if !missing.is_empty() {
        return CommandOutput::err(format!("error: required flag(s) {} not set", missing.join(", ")));
    }
    let image = f.str("image").unwrap_or_default();
    let restart = f.str("restart").filter(|r| !r.is_empty()).unwrap_or("OnFailure");
    let mut cj = CronJob::default();
    cj.metadata.name = name.into();
    cj.spec.schedule = f.str("schedule").unwrap_or_default().to_string();
    cj.spec.job_template.metadata.name = name.into();
    let spec = PodSpec {
        containers: vec![Container { name: name.to_string(), image: image.to_string(), command, ..Default::default() }].into(),
        restart_policy: Some(restart.into()),
        ..Default::default()
    };
    cj.spec.job_template.spec.template = PodTemplateSpec { spec: spec.into(), ..Default::default() }.into();
    let ns = namespace(&f);
    send(session, &f, Object::CronJob(cj), Some(&ns), Some("failed to create cronjob: "))
}

fn one_name<'a>(_command: &str, positional: &'a [String]) -> Option<&'a str> {
    match positional {
        [name] => Some(name),
        _ => None,
    }
}

/// The data `--from-literal` and `--from-file` give, in kubectl's order (files, then literals),
/// refusing a key given twice or one the API server would not take.
fn sources(session: &Session, f: &Flags, kind: &str, name: &str) -> Result<BTreeMap<String, String>, String> {
    let mut data = BTreeMap::new();
    let mut add = |key: String, value: String| -> Result<(), String> {
        let why = crate::api::validation::config_key_errors(&key);
        if !why.is_empty() {
            return Err(format!("error: {key:?} is not a valid key name for a {kind}: {}", why.join(";")));
        }
        if data.insert(key.clone(), value).is_some() {
            return Err(format!("error: cannot add key {key:?}, another key by that name already exists in Data for {kind} {name:?}"));
        }
        Ok(())
    };
    for source in f.list("from-file") {
        let (key, path) = match source.split_once('=') {
            Some((k, p)) if !k.is_empty() => (k.to_string(), p.to_string()),
            Some(_) => return Err(format!("error: key names or file paths cannot be empty: {source:?}")),
            None => (source.rsplit('/').next().unwrap_or(&source).to_string(), source.clone()),
        };
        let text = session.files().read(&path)?;
        add(key, text)?;
    }
    for literal in f.list("from-literal") {
        match literal.split_once('=') {
            Some((k, v)) if !k.is_empty() => add(k.to_string(), v.to_string())?,
            _ => return Err(format!("error: invalid literal source {literal}, expected key=value")),
        }
    }
    Ok(data)
}

/// Writes a generated object (in `ns` if it is namespaced), or prints it for a client dry run.
fn send(session: &mut Session, f: &Flags, mut object: Object, ns: Option<&str>, wrap: Option<&str>) -> CommandOutput {
    let dry_run = match DryRun::parse(f) {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    if let Some(ns) = ns {
        object.meta_mut().namespace = ns.into();
    }
    if dry_run == DryRun::Client {
        let mut v = crate::command::printers::object_json(&object);
        if let Some(m) = v.get_mut("metadata").and_then(serde_json::Value::as_object_mut) {
            m.insert("creationTimestamp".into(), serde_json::Value::Null);
        }
        return match f.str("output") {
            Some("yaml") => CommandOutput::out(to_yaml(&v)),
            Some("json") => CommandOutput::out(json_text(&v)),
            other => CommandOutput::out(print_result(&object, "created", dry_run, other)),
        };
    }
    let kind = object.kind();
    if let Some(ns) = ns {
        if let Err(e) = check_namespace(session, ns) {
            return server_refusal(&e, wrap, kind, ns);
        }
    }
    match apply::write(session, ApiRequest::Create(object), dry_run) {
        Ok(stored) => CommandOutput::out(print_result(&stored, "created", dry_run, f.str("output"))),
        Err(e) => server_refusal(&e, wrap, kind, ns.unwrap_or_default()),
    }
}

/// What kubectl prints when a `create` generator's POST of `kind` into `ns` fails. Most
/// generators wrap the error (`fmt.Errorf("failed to create job: %v", err)`), so the Status
/// message follows their words (`error: failed to create job: Job.batch "x" is invalid: …`)
/// instead of checkErr's `The Job "x" is invalid:` form, and a request that never reached a
/// server prints Go's `url.Error` (`Post "https://…/jobs?…": dial tcp …`) instead of kubectl's
/// "The connection to the server … was refused". `create namespace` and `autoscale` return the
/// error as it is (`wrap` None).
pub(crate) fn server_refusal(error: &crate::api::ApiError, wrap: Option<&str>, kind: Kind, ns: &str) -> CommandOutput {
    let Some(words) = wrap else {
        return CommandOutput::err(error.kubectl_message());
    };
    match error.dial_error() {
        Some(dial) => CommandOutput::err(format!("error: {words}Post {:?}: {dial}", create_url(kind, ns))),
        None => CommandOutput::err(format!("error: {words}{error}")),
    }
}

/// The URL a create generator POSTs to (client-go's request for a namespaced resource, with the
/// query kubectl create sends: its field manager and strict field validation).
fn create_url(kind: Kind, ns: &str) -> String {
    let root = if kind.info().group().is_empty() { "api" } else { "apis" };
    format!(
        "https://{}/{root}/{}/namespaces/{ns}/{}?fieldManager=kubectl-create&fieldValidation=Strict",
        crate::api::errors::API_SERVER_ADDRESS,
        kind.api_version(),
        kind.plural()
    )
}

const PDB_FLAGS: &[FlagSpec] = &[
    OUTPUT_FLAGS[0],
    OUTPUT_FLAGS[1],
    FlagSpec::new("selector", None, FlagKind::String),
    FlagSpec::new("min-available", None, FlagKind::String),
    FlagSpec::new("max-unavailable", None, FlagKind::String),
];

/// `kubectl create poddisruptionbudget NAME --selector=SELECTOR --min-available=N|--max-unavailable=N`.
pub fn create_pod_disruption_budget(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("create poddisruptionbudget", args, PDB_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let Some(name) = one_name("create poddisruptionbudget", &positional) else {
        return usage_error("create poddisruptionbudget", &format!("exactly one NAME is required, got {}", positional.len()));
    };
    let spec = match pod_disruption_budget_spec(&f) {
        Ok(spec) => spec,
        Err(e) => return CommandOutput::err(e),
    };
    let mut pdb = PodDisruptionBudget { spec, ..Default::default() };
    pdb.metadata.name = name.into();
    let ns = namespace(&f);
    send(session, &f, Object::PodDisruptionBudget(pdb), Some(&ns), Some("failed to create poddisruptionbudgets: "))
}

/// The budget's spec from the flags, checked as kubectl's `PodDisruptionBudgetOpts.Validate`
/// checks them: exactly one bound, a whole number or a percentage. Errors read as kubectl prints them.
fn pod_disruption_budget_spec(f: &Flags) -> Result<PodDisruptionBudgetSpec, String> {
    let (min, max) = (f.str("min-available").unwrap_or(""), f.str("max-unavailable").unwrap_or(""));
    match (min.is_empty(), max.is_empty()) {
        (true, true) => return Err("error: one of min-available or max-unavailable must be specified".into()),
        (false, false) => return Err("error: min-available and max-unavailable cannot be both specified".into()),
        _ => {}
    }
    let well_formed = |v: &str| {
        let digits = v.strip_suffix('%').unwrap_or(v);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if !min.is_empty() && !well_formed(min) {
        return Err("error: invalid format specified for min-available".into());
    }
    if !max.is_empty() && !well_formed(max) {
        return Err("error: invalid format specified for max-unavailable".into());
    }
    // `intstr.Parse`: a number when it is one, else the text.
    let bound = |v: &str| (!v.is_empty()).then(|| v.parse::<i64>().map_or_else(|_| IntOrString::String(v.into()), IntOrString::Int));
    let selector = crate::command::selector::parse_label_selector(f.str("selector").unwrap_or(""))?;
    Ok(PodDisruptionBudgetSpec {
        min_available: bound(min),
        selector: Some(selector),
        max_unavailable: bound(max),
        unhealthy_pod_eviction_policy: None,
    })
}

const AUTOSCALE_FLAGS: &[FlagSpec] = &[
    OUTPUT_FLAGS[0],
    OUTPUT_FLAGS[1],
    FlagSpec::new("min", None, FlagKind::Int(32)),
    FlagSpec::new("max", None, FlagKind::Int(32)),
    FlagSpec::new("cpu-percent", None, FlagKind::Int(32)),
    FlagSpec::new("name", None, FlagKind::String),
];

/// `kubectl autoscale (TYPE NAME | TYPE/NAME) --max=N [--min=N] [--cpu-percent=N] [--name=NAME]`:
/// a HorizontalPodAutoscaler for a Deployment, ReplicaSet or ReplicationController.
pub fn autoscale(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("autoscale", args, AUTOSCALE_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let (max, min) = (f.int("max").unwrap_or(-1), f.int("min").unwrap_or(-1));
    if max < 1 {
        return CommandOutput::err(format!("error: --max=MAXPODS is required and must be at least 1, max: {max}"));
    }
    if max < min {
        return CommandOutput::err(format!("error: --max=MAXPODS must be larger or equal to --min=MINPODS, max: {max}, min: {min}"));
    }
    let target = match positional.as_slice() {
        [both] => both.split_once('/').map(|(t, n)| (t.to_string(), n.to_string())),
        [typed, name] => Some((typed.clone(), name.clone())),
        _ => None,
    };
    let Some((typed, name)) = target else {
        return usage_error("autoscale", "USAGE: autoscale (TYPE NAME | TYPE/NAME) [--min=MINPODS] --max=MAXPODS [--cpu-percent=CPU]");
    };
    let kind = match crate::command::resources::resolve(&typed) {
        Ok(k) => k,
        Err(e) => return CommandOutput::err(format!("error: {e}")),
    };
    let ns = namespace(&f);
    let Some(object) = session.sim().api().get(&ObjectKey::new(kind, &ns, &name)).cloned() else {
        return CommandOutput::err(crate::api::ApiError::not_found(kind, &name).kubectl_message());
    };
    if !matches!(kind, Kind::Deployment | Kind::ReplicaSet | Kind::ReplicationController) {
        return CommandOutput::err(format!("error: cannot autoscale a {}: it has no scale subresource", kind.as_str()));
    }
    let mut hpa = HorizontalPodAutoscaler::default();
    hpa.metadata.name = f.str("name").unwrap_or(&name).into();
    hpa.spec.scale_target_ref = CrossVersionObjectReference {
        api_version: kind.api_version().into(),
        kind: kind.as_str().into(),
        name: object.meta().name.to_string(),
    };
    hpa.spec.min_replicas = (min >= 0).then_some(min as i32);
    hpa.spec.max_replicas = max as i32;
    if let Some(cpu) = f.int("cpu-percent").filter(|c| *c >= 0) {
        let target = MetricTarget { type_: "Utilization".into(), average_utilization: Some(cpu as i32) };
        hpa.spec.metrics =
            vec![MetricSpec { type_: "Resource".into(), resource: Some(ResourceMetricSource { name: "cpu".into(), target }) }];
    }
    let out = send(session, &f, Object::HorizontalPodAutoscaler(hpa), Some(&ns), None);
    CommandOutput { stdout: out.stdout.replace(" created\n", " autoscaled\n"), ..out }
}
