//! `kubectl apply -f` and `kubectl create -f|deployment`: manifests in, objects created or
//! updated, one `kind/name created|configured|unchanged` line each.
//!
//! Loading follows kubectl's decoder: a YAML stream of documents (or JSON), `List` objects
//! expanded, empty documents skipped, `kind` and `apiVersion` mapped to a served resource, and
//! fields kubeloop does not model ignored (so the documentation's manifests apply unchanged).
//! As kubectl's builder reads with `ContinueOnError`, a document that cannot be decoded or whose
//! kind is not served fails alone: every other document is applied, in order, and each failure
//! is reported at the end (`failures.rs`), exit status 1. A file that is not YAML at all
//! changes nothing.
//!
//! Apply is a three-way merge, as kubectl's is: the new manifest, the previous one (kept in the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation) and the live object. Fields
//! the manifest sets win; fields the previous manifest set and this one drops are removed;
//! everything else (defaults, `spec.replicas` after a `kubectl scale`, the controllers'
//! annotations) stays. Lists are replaced whole rather than merged by key, which gives the same
//! result for the fields kubeloop models because the API server re-applies its defaults.

use super::failures::{report_apply, report_create, Failure};
use super::{check_namespace, flags, submit, usage_error};
use crate::api::crd::{Definition, Definitions};
use crate::api::{defaults, validation, ApiError, ApiRequest};
use crate::command::parse::{FlagKind, FlagSpec, Flags};
use crate::command::printers::json_text;
use crate::command::resources::object_kind_string;
use crate::command::yaml::{documents, to_yaml};
use crate::command::{CommandOutput, Session};
use crate::model::{Kind, Object, ObjectKey};
use serde_json::{Map, Value};

pub use super::describe::LAST_APPLIED;

const APPLY_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("filename", Some('f'), FlagKind::StringList),
    FlagSpec::new("dry-run", None, FlagKind::String),
    FlagSpec::new("output", Some('o'), FlagKind::String),
    FlagSpec::new("validate", None, FlagKind::String),
];

/// A manifest document, decoded, with where it came from.
#[derive(Clone, Debug)]
pub struct Manifest {
    pub object: Object,
    /// The document as written (for the last-applied annotation).
    pub raw: Value,
    /// `x.yaml` or `STDIN`, as kubectl names sources in errors.
    pub source: String,
    /// The fields kubeloop dropped because it does not simulate them (`unmodelled`).
    pub warnings: Vec<String>,
    /// Whether the object lives in a namespace (a custom resource's definition says).
    pub namespaced: bool,
}

/// `--dry-run`: none, client or server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DryRun {
    None,
    Client,
    Server,
}

impl DryRun {
    pub fn parse(flags: &Flags) -> Result<DryRun, String> {
        match flags.str("dry-run") {
            None | Some("none") => Ok(DryRun::None),
            Some("client") => Ok(DryRun::Client),
            Some("server") => Ok(DryRun::Server),
            Some(other) => Err(format!("error: Invalid dry-run value ({other}). Must be \"none\", \"server\", or \"client\".")),
        }
    }
    fn suffix(self) -> &'static str {
        match self {
            DryRun::None => "",
            DryRun::Client => " (dry run)",
            DryRun::Server => " (server dry run)",
        }
    }
}

/// Reads each `-f` source: a file (virtual, built-in example or disk) or `-` for stdin.
pub fn read_sources(session: &Session, filenames: &[String], stdin: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let mut sources = Vec::new();
    for f in filenames {
        if f == "-" {
            sources.push(("STDIN".to_string(), stdin.unwrap_or("").to_string()));
        } else {
            sources.push((f.clone(), session.files().read(f)?));
        }
    }
    Ok(sources)
}

/// Decodes every document of every source, or fails with kubectl's message for the first bad one.
pub fn load(sources: &[(String, String)], defs: &Definitions) -> Result<Vec<Manifest>, String> {
    load_each(sources, defs)?.into_iter().map(|d| d.map_err(|f| f.alone())).collect()
}

/// Decodes every document of every source, each on its own: a manifest, or why kubectl could
/// not make one of it. Only a source that is not YAML at all fails the whole.
/// `defs` are the CustomResourceDefinitions discovery shows: kinds kubectl maps besides the
/// built-in ones (a definition in the same file as its objects is not one yet, as for kubectl).
pub fn load_each(sources: &[(String, String)], defs: &Definitions) -> Result<Vec<Result<Manifest, Failure>>, String> {
    let mut out = Vec::new();
    for (source, text) in sources {
        let docs = documents(text).map_err(|e| format!("error: error parsing {source}: error converting YAML to JSON: yaml: {e}"))?;
        for doc in docs {
            match expand_list(doc, source) {
                Ok(items) => out.extend(items.into_iter().map(|raw| decode(raw, source, defs))),
                Err(e) => out.push(Err(Failure::client(&e))),
            }
        }
    }
    Ok(out)
}

fn expand_list(doc: Value, source: &str) -> Result<Vec<Value>, String> {
    if !doc.is_object() {
        let what = match doc {
            Value::Array(_) => "array",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            _ => "null",
        };
        return Err(format!(
            "error: unable to decode {source:?}: json: cannot unmarshal {what} into Go value of type map[string]interface {{}}"
        ));
    }
    if doc.get("kind").and_then(Value::as_str) == Some("List") {
        return match doc.get("items") {
            Some(Value::Array(items)) => {
                let mut all = Vec::new();
                for item in items {
                    all.extend(expand_list(item.clone(), source)?);
                }
                Ok(all)
            }
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(_) => Err(format!("error: unable to decode {source:?}: items of a List must be a list")),
        };
    }
    Ok(vec![doc])
}

fn decode(raw: Value, source: &str, defs: &Definitions) -> Result<Manifest, Failure> {
    let kind = raw.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = raw.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if kind.is_empty() {
        let compact = serde_json::to_string(&raw).unwrap_or_default();
        return Err(Failure::Client(format!("unable to decode {source:?}: Object 'Kind' is missing in '{compact}'")));
    }
    let meta = raw.get("metadata");
    let name = meta.and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
    let ns = meta.and_then(|m| m.get("namespace")).and_then(Value::as_str).unwrap_or("");
    let served = Kind::from_kind_str(kind).filter(|k| k.serves(api_version));
    if let (None, Some(d)) = (served, defs.for_kind(api_version, kind)) {
        let object = custom_object(raw.clone(), d).map_err(|e| Failure::Client(e.to_string()))?;
        return Ok(Manifest { object, raw, source: source.to_string(), warnings: Vec::new(), namespaced: d.namespaced });
    }
    let Some(k) = served else {
        return Err(Failure::Client(format!(
            "resource mapping not found for name: {name:?} namespace: {ns:?} from {source:?}: no matches for kind {kind:?} in version {api_version:?}\nensure CRDs are installed first"
        )));
    };
    // kubectl sends what it mapped; the API server is the one that cannot decode it.
    let object = Object::from_json(raw.clone()).map_err(|e| {
        let detail = e.split_once(": ").map(|(_, d)| d).unwrap_or(&e);
        let message =
            format!("{kind} in version {:?} cannot be handled as a {kind}: {detail}", k.api_version().rsplit('/').next().unwrap_or("v1"));
        let error = ApiError::new(crate::api::Reason::BadRequest, message);
        Failure::Server { error, verb: "creating", source: source.to_string() }
    })?;
    // Fields are judged in the version the API server stores (an autoscaling/v1 HPA's CPU
    // target is a v2 metric there); `raw` stays as sent, for the last-applied annotation.
    let stored = if api_version == k.api_version() { raw.clone() } else { crate::model::autoscaling::from_v1(raw.clone()) };
    let mut warnings = super::unmodelled::warnings(&stored, &crate::command::printers::object_json(&object));
    warnings.extend(super::unmodelled::approximations(&object));
    Ok(Manifest { object, raw, source: source.to_string(), warnings, namespaced: k.namespaced() })
}

/// An object of a definition's resource, read from its manifest.
#[inline(never)]
fn custom_object(raw: Value, d: &Definition) -> Result<Object, String> {
    let mut object = Object::custom_from_json(&raw)?;
    if let Object::CustomObject(o) = &mut object {
        o.body.resource = d.name.clone();
    }
    Ok(object)
}

/// A write from `source` the API server refused.
fn refused(error: ApiError, verb: &'static str, source: &str) -> Failure {
    Failure::Server { error, verb, source: source.to_string() }
}

/// Sets the manifest's namespace from `-n` (or `default`), refusing a conflicting one.
fn place(m: &mut Manifest, ns: &str, explicit: bool) -> Result<(), String> {
    if !m.namespaced {
        m.object.meta_mut().namespace = Default::default();
        return Ok(());
    }
    let given = m.object.meta().namespace.clone();
    if given.is_empty() {
        m.object.meta_mut().namespace = ns.into();
        if let Some(meta) = m.raw.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("namespace".into(), Value::String(ns.to_string()));
        }
    } else if explicit && given != ns {
        return Err(format!(
            "error: the namespace from the provided object {given:?} does not match the namespace {ns:?}. You must pass '--namespace={given}' to perform this operation."
        ));
    }
    Ok(())
}

pub fn run_apply(session: &mut Session, args: &[String], stdin: Option<String>) -> CommandOutput {
    let (positional, f) = match flags("apply", args, APPLY_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if let Some(sub) = positional.first() {
        if ["edit-last-applied", "set-last-applied", "view-last-applied"].contains(&sub.as_str()) {
            return CommandOutput::err(format!("error: kubeloop does not simulate \"kubectl apply {sub}\""));
        }
        return usage_error("apply", &format!("Unexpected args: [{}]", positional.join(" ")));
    }
    let filenames = f.list("filename");
    if filenames.is_empty() {
        return usage_error("apply", "must specify one of -f and -k");
    }
    let dry_run = match DryRun::parse(&f) {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    let output = f.str("output").map(str::to_string);
    if let Some(o) = output.as_deref().filter(|o| !["name", "json", "yaml"].contains(o)) {
        return CommandOutput::err(format!(
            "error: unable to match a printer suitable for the output format {o:?}, allowed formats are: json,name,yaml"
        ));
    }
    let documents = match read_sources(session, &filenames, stdin.as_deref()).and_then(|s| load_each(&s, session.sim().api().definitions()))
    {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    let ns = super::namespace(&f);
    let mut out = CommandOutput::empty();
    // kubectl's builder reports what it could not read; apply then reports what it could not send.
    let (mut builder, mut sent) = (Vec::new(), Vec::new());
    let mut any = false;
    for document in documents {
        let mut m = match document {
            Ok(m) => m,
            Err(e @ Failure::Client(_)) => {
                builder.push(e);
                continue;
            }
            Err(e) => {
                sent.push(e);
                continue;
            }
        };
        if let Err(e) = place(&mut m, &ns, f.has("namespace")) {
            builder.push(Failure::client(&e));
            continue;
        }
        any = true;
        let warnings = std::mem::take(&mut m.warnings);
        match apply_one(session, m, dry_run) {
            Ok(a) => {
                if let Some(w) = &a.warning {
                    out.note(w);
                }
                for w in &warnings {
                    out.note(w);
                }
                out.stdout.push_str(&print_result(&a.object, a.verb, dry_run, output.as_deref()));
            }
            Err(e) => sent.push(e),
        }
    }
    if !any && builder.is_empty() && sent.is_empty() {
        return CommandOutput::err("error: no objects passed to apply");
    }
    report_apply(&mut out, &builder, &sent);
    out
}

/// `deployment.apps/web created`, or the object in `-o` form.
pub fn print_result(object: &Object, verb: &str, dry_run: DryRun, output: Option<&str>) -> String {
    match output {
        Some("name") => format!("{}/{}\n", object_kind_string(object), object.meta().name),
        Some("json") => json_text(&crate::command::printers::object_json(object)),
        Some("yaml") => to_yaml(&crate::command::printers::object_json(object)),
        _ => format!("{}/{} {verb}{}\n", object_kind_string(object), object.meta().name, dry_run.suffix()),
    }
}

/// The configuration apply records: the manifest as given (namespace filled in), without its own
/// annotation, as compact JSON with a trailing newline.
fn last_applied(raw: &Value) -> String {
    let mut v = raw.clone();
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        let mut annotations = meta.get("annotations").and_then(Value::as_object).cloned().unwrap_or_default();
        annotations.remove(LAST_APPLIED);
        meta.insert("annotations".into(), Value::Object(annotations));
    }
    serde_json::to_string(&v).unwrap_or_default() + "\n"
}

/// What applying one manifest did.
pub struct Applied {
    /// The stored (or, for a dry run, would-be) object.
    pub object: Object,
    /// `created`, `configured` or `unchanged`.
    pub verb: &'static str,
    /// kubectl's warning when the live object was not created by apply.
    pub warning: Option<String>,
}

/// Applies one manifest: create it, or merge it into the live object.
pub fn apply_one(session: &mut Session, m: Manifest, dry_run: DryRun) -> Result<Applied, Failure> {
    let key = m.object.key();
    if m.object.meta().name.is_empty() {
        return Err(Failure::Client(format!(
            "error when retrieving current configuration of:\nResource: \"{}, Resource={}\", GroupVersionKind: \"{}, Kind={}\"\nName: \"\", Namespace: {:?}\nfrom server for: {:?}: resource name may not be empty",
            key.kind.api_version(),
            key.kind.plural(),
            key.kind.api_version(),
            key.kind.as_str(),
            key.namespace,
            m.source
        )));
    }
    let applied = last_applied(&m.raw);
    let live = session.sim().api().get(&key).cloned();
    let Some(live) = live else {
        if key.kind.namespaced() {
            check_namespace(session, &key.namespace).map_err(|e| refused(e, "creating", &m.source))?;
        }
        let mut object = m.object;
        object.meta_mut().annotations.insert(LAST_APPLIED.into(), applied);
        let stored = write(session, ApiRequest::Create(object), dry_run).map_err(|e| refused(e, "creating", &m.source))?;
        return Ok(Applied { object: stored, verb: "created", warning: None });
    };
    let original = live.meta().annotations.get(LAST_APPLIED).and_then(|t| serde_json::from_str::<Value>(t).ok());
    let warning = original.is_none().then(|| {
        format!(
            "Warning: resource {}/{} is missing the {LAST_APPLIED} annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.",
            key.kind.plural(),
            key.name
        )
    });
    let mut modified = m.raw.clone();
    if let Some(meta) = modified.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
        if let Some(a) = annotations.as_object_mut() {
            a.insert(LAST_APPLIED.into(), Value::String(applied));
        }
    }
    let merged = three_way(&live.to_json(), original.as_ref(), &modified);
    let object = match session.sim().api().definitions().get(&key.resource) {
        Some(d) => custom_object(merged, d),
        None => Object::from_json(merged),
    }
    .map_err(|e| Failure::Client(e.to_string()))?;
    let before = live.meta().resource_version;
    let stored = write(session, ApiRequest::Update(object), dry_run).map_err(|e| refused(e, "applying patch to", &m.source))?;
    let verb = if dry_run == DryRun::None && stored.meta().resource_version == before { "unchanged" } else { "configured" };
    Ok(Applied { object: stored, verb, warning })
}

/// Sends a write, or for a dry run checks it as the server would without storing it.
pub fn write(session: &mut Session, request: ApiRequest, dry_run: DryRun) -> Result<Object, ApiError> {
    match (dry_run, request) {
        (DryRun::None, request) => submit(session, request).map(|o| (*o).clone()),
        (DryRun::Client, ApiRequest::Create(o) | ApiRequest::Update(o)) => Ok(o),
        (DryRun::Server, ApiRequest::Create(mut o) | ApiRequest::Update(mut o)) => {
            defaults::default_object(&mut o);
            let errs = validation::validate(&o);
            if errs.is_empty() {
                Ok(o)
            } else {
                Err(ApiError::invalid(o.kind(), &o.meta().name, errs))
            }
        }
        (_, other) => submit(session, other).map(|o| (*o).clone()),
    }
}

/// The three-way merge of apply (JSON merge semantics; lists replace).
pub fn three_way(live: &Value, original: Option<&Value>, modified: &Value) -> Value {
    match (live, modified) {
        (Value::Object(l), Value::Object(m)) => {
            let mut result = l.clone();
            for (k, mv) in m {
                if mv.is_null() {
                    result.remove(k);
                    continue;
                }
                let merged = three_way(l.get(k).unwrap_or(&Value::Null), original.and_then(|o| o.get(k)), mv);
                result.insert(k.clone(), merged);
            }
            if let Some(Value::Object(o)) = original {
                for k in o.keys() {
                    if !m.contains_key(k) {
                        result.remove(k);
                    }
                }
            }
            Value::Object(result)
        }
        (_, m) => m.clone(),
    }
}

const CREATE_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("filename", Some('f'), FlagKind::StringList),
    FlagSpec::new("dry-run", None, FlagKind::String),
    FlagSpec::new("output", Some('o'), FlagKind::String),
    FlagSpec::new("save-config", None, FlagKind::Bool),
    FlagSpec::new("validate", None, FlagKind::String),
];

pub fn run_create(session: &mut Session, args: &[String], stdin: Option<String>) -> CommandOutput {
    if let Some(sub) = args.first().filter(|a| !a.starts_with('-')) {
        return match sub.as_str() {
            "deployment" | "deploy" => super::mutate::create_deployment(session, &args[1..]),
            "namespace" | "ns" => super::create::create_namespace(session, &args[1..]),
            "configmap" | "cm" => super::create::create_config_map(session, &args[1..]),
            "secret" => super::create::create_secret(session, &args[1..]),
            "poddisruptionbudget" | "pdb" => super::create::create_pod_disruption_budget(session, &args[1..]),
            "job" => super::create::create_job(session, &args[1..]),
            "cronjob" | "cj" => super::create::create_cron_job(session, &args[1..]),
            other => {
                const SUBCOMMANDS: &[&str] = &[
                    "clusterrole",
                    "clusterrolebinding",
                    "configmap",
                    "cronjob",
                    "deployment",
                    "ingress",
                    "job",
                    "namespace",
                    "poddisruptionbudget",
                    "priorityclass",
                    "quota",
                    "role",
                    "rolebinding",
                    "secret",
                    "service",
                    "serviceaccount",
                    "token",
                ];
                if SUBCOMMANDS.contains(&other) {
                    CommandOutput::err(format!("error: kubeloop does not simulate \"kubectl create {other}\"; try: kubectl create deployment|namespace|configmap|secret generic"))
                } else {
                    CommandOutput::err(super::unknown_command(other, "kubectl create", SUBCOMMANDS))
                }
            }
        };
    }
    let (_, f) = match flags("create", args, CREATE_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let filenames = f.list("filename");
    if filenames.is_empty() {
        return usage_error("create", "must specify one of -f and -k");
    }
    let dry_run = match DryRun::parse(&f) {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    let documents = match read_sources(session, &filenames, stdin.as_deref()).and_then(|s| load_each(&s, session.sim().api().definitions()))
    {
        Ok(d) => d,
        Err(e) => return CommandOutput::err(e),
    };
    let ns = super::namespace(&f);
    let mut out = CommandOutput::empty();
    // Create's visitor meets every failure in document order, its own and the server's.
    let mut failures = Vec::new();
    let mut any = false;
    for document in documents {
        let mut m = match document {
            Ok(m) => m,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        if let Err(e) = place(&mut m, &ns, f.has("namespace")) {
            failures.push(Failure::client(&e));
            continue;
        }
        any = true;
        let key: ObjectKey = m.object.key();
        if key.kind.namespaced() {
            if let Err(e) = check_namespace(session, &key.namespace) {
                failures.push(refused(e, "creating", &m.source));
                continue;
            }
        }
        let mut object = m.object;
        if f.bool("save-config") {
            object.meta_mut().annotations.insert(LAST_APPLIED.into(), last_applied(&m.raw));
        }
        match write(session, ApiRequest::Create(object), dry_run) {
            Ok(stored) => {
                for w in &m.warnings {
                    out.note(w);
                }
                out.stdout.push_str(&print_result(&stored, "created", dry_run, f.str("output")))
            }
            Err(e) => failures.push(refused(e, "creating", &m.source)),
        }
    }
    if !any && failures.is_empty() {
        return CommandOutput::err("error: no objects passed to create");
    }
    report_create(&mut out, &failures);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn src(text: &str) -> Vec<(String, String)> {
        vec![("web.yaml".to_string(), text.to_string())]
    }

    #[test]
    fn the_documentation_deployment_loads_unchanged() {
        let m = load(&src(super::super::examples::NGINX_DEPLOYMENT), &Definitions::default()).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].object.key(), ObjectKey::new(Kind::Deployment, "", "nginx-deployment"));
    }

    #[test]
    fn unknown_fields_are_ignored_and_lists_expand() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n  spec:\n    containers: [{name: c, image: busybox, env: [{name: X, value: y}]}]\n    volumes: [{name: v, emptyDir: {}}]\n---\n";
        let m = load(&src(text), &Definitions::default()).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].object.key().name, "a");
    }

    #[test]
    fn decoding_errors_read_as_kubectls() {
        let e = load(&src("apiVersion: v1\nmetadata: {name: x}\n"), &Definitions::default()).unwrap_err();
        assert_eq!(
            e,
            "error: unable to decode \"web.yaml\": Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}'"
        );
        let e = load(&src("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: x}\n"), &Definitions::default()).unwrap_err();
        assert_eq!(
            e,
            "error: resource mapping not found for name: \"x\" namespace: \"\" from \"web.yaml\": no matches for kind \"Deployment\" in version \"extensions/v1beta1\"\nensure CRDs are installed first"
        );
        let e =
            load(&src("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: three}\n"), &Definitions::default())
                .unwrap_err();
        assert!(e.starts_with("Error from server (BadRequest): error when creating \"web.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: "), "{e}");
        assert!(load(&src("a: [1\n"), &Definitions::default())
            .unwrap_err()
            .starts_with("error: error parsing web.yaml: error converting YAML to JSON: yaml: "));
        assert!(load(&src("- 1\n"), &Definitions::default()).unwrap_err().contains("cannot unmarshal array"));
    }

    #[test]
    fn three_way_merge_keeps_what_others_set_and_drops_what_apply_dropped() {
        let live = json!({"spec": {"replicas": 5, "paused": true, "template": {"x": 1}}, "metadata": {"annotations": {"rev": "2"}}});
        let original = json!({"spec": {"paused": true, "template": {"x": 1}}});
        let modified = json!({"spec": {"template": {"x": 2}}});
        assert_eq!(
            three_way(&live, Some(&original), &modified),
            json!({"spec": {"replicas": 5, "template": {"x": 2}}, "metadata": {"annotations": {"rev": "2"}}})
        );
    }

    #[test]
    fn last_applied_records_the_manifest_with_empty_annotations() {
        let raw = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a", "namespace": "default"}});
        assert_eq!(
            last_applied(&raw),
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"annotations\":{},\"name\":\"a\",\"namespace\":\"default\"}}\n"
        );
    }
}
