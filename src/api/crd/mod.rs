//! CustomResourceDefinitions as apiextensions-apiserver (inside kube-apiserver) serves them.
//!
//! A definition is validated with upstream's messages (`ValidateCustomResourceDefinition`),
//! defaulted (singular and list kind, conversion `None`), and its names checked against the
//! group's other definitions (the naming controller: `NamesAccepted`, then `Established`). An
//! established definition makes its resource served: its objects are `Object::CustomObject`s,
//! created, read, listed, watched, updated and deleted through the same `ApiServer::handle` as
//! every built-in kind (`objects.rs`), checked against its schema (`schema.rs`).
//!
//! `Definitions` is the server's read of every stored definition, rebuilt from etcd whenever a
//! definition is written (and on restore), so it can never disagree with what etcd holds.
//!
//! Simplifications, each refused rather than skipped: one version's schema and columns apply to
//! every version (no conversion: strategy `None`, as upstream copies the object and changes only
//! `apiVersion`); a `Webhook` conversion, CEL rules and the schema keywords `schema.rs` lists
//! refuse the definition saying so. The naming and establishing controllers act within the
//! write that creates the definition (upstream they follow within milliseconds).

pub mod objects;
pub mod pattern;
pub mod schema;

use super::errors::FieldError;
use super::validation::is_dns1123_label;
use crate::model::*;
use schema::Schema;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The finalizer every definition carries until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The printer column types `additionalPrinterColumns` accepts.
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];

/// One served (or merely stored) version of a definition.
#[derive(Clone, Debug, Default)]
pub struct Version {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub schema: Schema,
    pub columns: Vec<Column>,
    /// The `status` subresource: spec and status are written separately.
    pub status: bool,
    pub scale: Option<ScalePaths>,
}

/// One of `additionalPrinterColumns`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Column {
    pub name: String,
    pub type_: String,
    pub priority: i64,
    pub json_path: String,
}

/// The `scale` subresource's JSON paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

/// A definition as the server reads it.
#[derive(Clone, Debug, Default)]
pub struct Definition {
    /// `plural.group`: the definition's name, and its objects' `ObjectKey::resource`.
    pub name: Name,
    pub uid: Name,
    pub group: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub versions: Vec<Version>,
    pub established: bool,
    pub terminating: bool,
}

impl Definition {
    /// `CronTab.stable.example.com`, as Status messages name the kind.
    pub fn qualified_kind(&self) -> String {
        format!("{}.{}", self.kind, self.group)
    }
    /// The version objects are stored in.
    pub fn storage_version(&self) -> Option<&Version> {
        self.versions.iter().find(|v| v.storage)
    }
    /// A served version by name.
    pub fn served(&self, version: &str) -> Option<&Version> {
        self.versions.iter().find(|v| v.served && v.name == version)
    }
    /// The served version kubectl prefers: the first served one (versions are listed by
    /// priority in discovery).
    pub fn preferred(&self) -> Option<&Version> {
        self.versions.iter().find(|v| v.served)
    }
    /// Whether `name` (lower case) is one of the resource's names kubectl accepts.
    pub fn is_named(&self, name: &str) -> bool {
        self.plural == name || self.singular == name || self.kind.to_ascii_lowercase() == name || self.short_names.iter().any(|s| s == name)
    }
    /// `crontab.stable.example.com`: how kubectl names the kind in `TYPE/NAME` output.
    pub fn kind_string(&self) -> String {
        format!("{}.{}", self.kind.to_ascii_lowercase(), self.group)
    }
}

/// Every stored definition the server has read, by name.
#[derive(Clone, Debug, Default)]
pub struct Definitions {
    by_name: BTreeMap<Name, Rc<Definition>>,
}

impl Definitions {
    /// Read again from every stored definition (they were all valid when written).
    pub fn rebuild<'a>(crds: impl Iterator<Item = &'a CustomResourceDefinition>) -> Self {
        let by_name = crds.map(|crd| (crd.metadata.name.clone(), Rc::new(read(crd).0))).collect();
        Definitions { by_name }
    }
    pub fn get(&self, name: &str) -> Option<&Rc<Definition>> {
        self.by_name.get(name)
    }
    pub fn iter(&self) -> impl Iterator<Item = &Rc<Definition>> {
        self.by_name.values()
    }
    /// The established definition serving `kind` in `api_version` (`group/version`).
    pub fn for_kind(&self, api_version: &str, kind: &str) -> Option<&Rc<Definition>> {
        let (group, version) = api_version.split_once('/')?;
        self.by_name.values().find(|d| d.established && d.group == group && d.kind == kind && d.served(version).is_some())
    }
    /// The established definition kubectl means by a typed resource name: plural, singular,
    /// kind or short name, case-insensitive, optionally qualified by `.group` or
    /// `.version.group`.
    pub fn resolve(&self, typed: &str) -> Option<&Rc<Definition>> {
        let lower = typed.to_ascii_lowercase();
        let (name, suffix) = lower.split_once('.').unwrap_or((&lower, ""));
        self.by_name.values().find(|d| {
            d.established
                && d.is_named(name)
                && (suffix.is_empty()
                    || suffix == d.group
                    || suffix.strip_suffix(&d.group).and_then(|v| v.strip_suffix('.')).is_some_and(|v| d.served(v).is_some()))
        })
    }
}

/// Reads a stored or submitted definition, with the field errors that make it invalid.
pub fn read(crd: &CustomResourceDefinition) -> (Definition, Vec<FieldError>) {
    let mut errs = Vec::new();
    let empty = Value::Object(Map::new());
    let spec = crd.spec().unwrap_or(&empty);
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let strings = |v: &Value, k: &str| -> Vec<String> {
        v.get(k).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
    };
    let names = spec.get("names").unwrap_or(&empty);
    let mut d = Definition {
        name: crd.metadata.name.clone(),
        uid: crd.metadata.uid.clone(),
        group: text(spec, "group"),
        plural: text(names, "plural"),
        singular: text(names, "singular"),
        kind: text(names, "kind"),
        list_kind: text(names, "listKind"),
        short_names: strings(names, "shortNames"),
        categories: strings(names, "categories"),
        namespaced: text(spec, "scope") == "Namespaced",
        versions: Vec::new(),
        established: crd.condition("Established").is_some_and(|c| c.0 == "True"),
        terminating: crd.metadata.is_deleting(),
    };
    validate_names(&d, &crd.metadata.name, &mut errs);
    match text(spec, "scope").as_str() {
        "" => errs.push(FieldError::required("spec.scope")),
        "Namespaced" | "Cluster" => {}
        other => errs.push(FieldError::unsupported("spec.scope", other, &["Cluster", "Namespaced"])),
    }
    let strategy = spec.get("conversion").map(|c| text(c, "strategy")).unwrap_or_default();
    if !strategy.is_empty() && strategy != "None" {
        if strategy == "Webhook" {
            errs.push(FieldError::forbidden(
                "spec.conversion.strategy",
                "conversion webhooks are not modelled by kubeloop: use strategy None (objects keep their fields and change only apiVersion)",
            ));
        } else {
            errs.push(FieldError::unsupported("spec.conversion.strategy", &strategy, &["None", "Webhook"]));
        }
    }
    let versions = spec.get("versions").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, v) in versions.iter().enumerate() {
        d.versions.push(read_version(v, &format!("spec.versions[{i}]"), &mut errs));
    }
    validate_versions(&d, &mut errs);
    // Discovery lists a definition's versions by priority, and clients prefer the first served.
    d.versions.sort_by(|a, b| version_priority(&a.name, &b.name));
    (d, errs)
}

/// Kubernetes' ordering of version names (`version.CompareKubeAwareVersionStrings`), highest
/// priority first: GA before beta before alpha, a higher major first, then a higher minor
/// (`v2` < `v1` < `v1beta2` < `v1beta1` < `v1alpha1`), and names of another shape last, in
/// alphabetical order.
pub fn version_priority(a: &str, b: &str) -> std::cmp::Ordering {
    /// (stability: 2 GA, 1 beta, 0 alpha; major; minor), or None for another shape.
    fn parse(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 || rest.starts_with('0') {
            return None;
        }
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((2, major, 0));
        }
        let (stability, minor) = if let Some(m) = tail.strip_prefix("beta") { (1, m) } else { (0, tail.strip_prefix("alpha")?) };
        if minor.is_empty() || !minor.bytes().all(|c| c.is_ascii_digit()) || minor.starts_with('0') {
            return None;
        }
        Some((stability, major, minor.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

fn validate_names(d: &Definition, name: &str, errs: &mut Vec<FieldError>) {
    if d.group.is_empty() {
        errs.push(FieldError::required("spec.group"));
    } else if !d.group.contains('.') {
        errs.push(FieldError::invalid("spec.group", format!("{:?}", d.group), "should be a domain with at least one dot"));
    }
    if !d.plural.is_empty() && !d.group.is_empty() && name != format!("{}.{}", d.plural, d.group) {
        errs.push(FieldError::invalid("metadata.name", format!("{name:?}"), "must be spec.names.plural+\".\"+spec.group"));
    }
    let label = |field: &str, value: &str, required: bool, errs: &mut Vec<FieldError>| {
        if value.is_empty() {
            if required {
                errs.push(FieldError::required(field));
            }
        } else if !is_dns1123_label(value) {
            errs.push(FieldError::invalid(field, format!("{value:?}"), "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
        }
    };
    label("spec.names.plural", &d.plural, true, errs);
    label("spec.names.singular", &d.singular, false, errs);
    for (i, short) in d.short_names.iter().enumerate() {
        label(&format!("spec.names.shortNames[{i}]"), short, true, errs);
    }
    if d.kind.is_empty() {
        errs.push(FieldError::required("spec.names.kind"));
    }
}

fn read_version(v: &Value, path: &str, errs: &mut Vec<FieldError>) -> Version {
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mut version = Version {
        name: v.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
        served: flag("served"),
        storage: flag("storage"),
        ..Default::default()
    };
    if version.name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.name")));
    } else if !is_dns1123_label(&version.name) {
        errs.push(FieldError::invalid(&format!("{path}.name"), format!("{:?}", version.name), "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"));
    }
    match v.get("schema").and_then(|s| s.get("openAPIV3Schema")) {
        Some(s) => version.schema = Schema::parse(s, &format!("{path}.schema.openAPIV3Schema"), errs),
        None => errs.push(FieldError::required_why(&format!("{path}.schema.openAPIV3Schema"), "schemas are required")),
    }
    let subresources = v.get("subresources");
    version.status = subresources.and_then(|s| s.get("status")).is_some();
    if let Some(scale) = subresources.and_then(|s| s.get("scale")) {
        version.scale = Some(read_scale(scale, &format!("{path}.subresources.scale"), errs));
    }
    for (i, c) in v.get("additionalPrinterColumns").and_then(Value::as_array).into_iter().flatten().enumerate() {
        version.columns.push(read_column(c, &format!("{path}.additionalPrinterColumns[{i}]"), errs));
    }
    version
}

fn read_scale(scale: &Value, path: &str, errs: &mut Vec<FieldError>) -> ScalePaths {
    let text = |k: &str| scale.get(k).and_then(Value::as_str).map(str::to_string);
    let under = |field: &str, value: Option<String>, root: &str, required: bool, errs: &mut Vec<FieldError>| match value {
        None if required => errs.push(FieldError::required(&format!("{path}.{field}"))),
        Some(p) if !p.starts_with(&format!(".{root}.")) => {
            errs.push(FieldError::invalid(&format!("{path}.{field}"), format!("{p:?}"), &format!("should be a json path under .{root}")))
        }
        _ => {}
    };
    under("specReplicasPath", text("specReplicasPath"), "spec", true, errs);
    under("statusReplicasPath", text("statusReplicasPath"), "status", true, errs);
    under("labelSelectorPath", text("labelSelectorPath"), "status", false, errs);
    ScalePaths {
        spec_replicas: text("specReplicasPath").unwrap_or_default(),
        status_replicas: text("statusReplicasPath").unwrap_or_default(),
        label_selector: text("labelSelectorPath"),
    }
}

fn read_column(c: &Value, path: &str, errs: &mut Vec<FieldError>) -> Column {
    let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let column = Column {
        name: text("name"),
        type_: text("type"),
        priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
        json_path: text("jsonPath"),
    };
    if column.name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.name")));
    }
    if column.type_.is_empty() {
        errs.push(FieldError::required(&format!("{path}.type")));
    } else if !COLUMN_TYPES.contains(&column.type_.as_str()) {
        errs.push(FieldError::unsupported(&format!("{path}.type"), &column.type_, &COLUMN_TYPES));
    }
    if column.json_path.is_empty() {
        errs.push(FieldError::required(&format!("{path}.jsonPath")));
    }
    column
}

fn validate_versions(d: &Definition, errs: &mut Vec<FieldError>) {
    let names: Vec<&str> = d.versions.iter().map(|v| v.name.as_str()).collect();
    if d.versions.is_empty() {
        errs.push(FieldError::invalid("spec.versions", "null", "must have exactly one version marked as storage version"));
        return;
    }
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            errs.push(FieldError { field: format!("spec.versions[{i}].name"), detail: format!("Duplicate value: {name:?}") });
        }
    }
    if d.versions.iter().filter(|v| v.storage).count() != 1 {
        let list: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        errs.push(FieldError::invalid(
            "spec.versions",
            format!("[{}]", list.join(", ")),
            "must have exactly one version marked as storage version",
        ));
    }
    if !d.versions.iter().any(|v| v.served) {
        let list: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        errs.push(FieldError::invalid("spec.versions", format!("[{}]", list.join(", ")), "must have at least one served version"));
    }
}

/// `SetDefaults_CustomResourceDefinition`: the singular and list kind from the kind, conversion
/// `None`.
pub fn set_defaults(crd: &mut CustomResourceDefinition) {
    let content = &mut *crd.content;
    let Some(spec) = content.get_mut("spec").and_then(Value::as_object_mut) else { return };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        if !kind.is_empty() {
            names.entry("singular").or_insert_with(|| Value::String(kind.to_ascii_lowercase()));
            names.entry("listKind").or_insert_with(|| Value::String(format!("{kind}List")));
        }
    }
    spec.entry("conversion").or_insert_with(|| json!({"strategy": "None"}));
}

/// The naming controller's verdict for `d` among the group's other definitions: `None` if
/// every name is free, else the condition's reason and message.
pub fn name_conflict(d: &Definition, others: &Definitions) -> Option<(&'static str, String)> {
    for other in others.iter().filter(|o| o.name != d.name && o.group == d.group) {
        if other.kind == d.kind || other.list_kind == d.kind {
            return Some(("KindConflict", format!("{:?} is already in use", d.kind)));
        }
        if other.is_named(&d.singular) && !d.singular.is_empty() {
            return Some(("SingularConflict", format!("{:?} is already in use", d.singular)));
        }
        if let Some(short) = d.short_names.iter().find(|s| other.is_named(s)) {
            return Some(("ShortNamesConflict", format!("{short:?} is already in use")));
        }
    }
    None
}

/// The status the naming and establishing controllers write: accepted names, stored versions
/// and the `NamesAccepted` and `Established` conditions (keeping transition times that did
/// not change).
pub fn accepted_status(crd: &CustomResourceDefinition, d: &Definition, conflict: Option<(&str, String)>, now: Time) -> Value {
    let names = crd.spec().and_then(|s| s.get("names")).cloned().unwrap_or(Value::Null);
    let stored = d.storage_version().map(|v| vec![Value::String(v.name.clone())]).unwrap_or_default();
    let conditions = match &conflict {
        None => vec![
            condition(crd, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now),
            condition(crd, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now),
        ],
        Some((reason, message)) => vec![
            condition(crd, "NamesAccepted", "False", reason, message, now),
            condition(crd, "Established", "False", "NotAccepted", "not all names are accepted", now),
        ],
    };
    let accepted = if conflict.is_none() {
        names
    } else {
        crd.status().and_then(|s| s.get("acceptedNames")).cloned().unwrap_or(json!({"kind": "", "plural": ""}))
    };
    json!({"acceptedNames": accepted, "conditions": conditions, "storedVersions": stored})
}

/// One condition, its transition time kept when its status did not change.
pub fn condition(crd: &CustomResourceDefinition, type_: &str, status: &str, reason: &str, message: &str, now: Time) -> Value {
    let since = crd
        .status()
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(type_)))
        .filter(|c| c.get("status").and_then(Value::as_str) == Some(status))
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| Value::String(now.rfc3339()));
    json!({"type": type_, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
}

/// Sets one condition in a status value, replacing one of the same type.
pub fn set_condition(status: &mut Value, cond: Value) {
    if !status.is_object() {
        *status = json!({});
    }
    let type_ = cond.get("type").cloned();
    let conditions = status.as_object_mut().map(|s| s.entry("conditions").or_insert_with(|| json!([])));
    if let Some(Value::Array(list)) = conditions {
        match list.iter_mut().find(|c| c.get("type") == type_.as_ref()) {
            Some(existing) => *existing = cond,
            None => list.push(cond),
        }
    }
}

/// A printer column's cell for an object, as the server's Table gives it: the value at the
/// column's JSON path (`.spec.replicas`, `.metadata.creationTimestamp`), a `date` as an age,
/// nothing when absent.
pub fn cell(column: &Column, object: &Value, now: Time) -> String {
    let Some(value) = lookup(object, &column.json_path) else { return String::new() };
    match (column.type_.as_str(), value) {
        ("date", Value::String(s)) => {
            Time::parse_rfc3339(s).map(|t| crate::model::human_duration(now.since(t))).unwrap_or_else(|| s.clone())
        }
        (_, Value::String(s)) => s.clone(),
        (_, Value::Null) => String::new(),
        (_, other) => other.to_string(),
    }
}

/// The `scale` subresource's paths of a stored definition for `version`, read from its JSON
/// without reading the whole definition (what a controller holding only the definition's
/// object needs).
pub fn scale_paths_of(crd: &CustomResourceDefinition, version: &str) -> Option<ScalePaths> {
    let versions = crd.spec()?.get("versions")?.as_array()?;
    let v = versions.iter().find(|v| v.get("name").and_then(Value::as_str) == Some(version))?;
    let scale = v.get("subresources")?.get("scale")?;
    let text = |k: &str| scale.get(k).and_then(Value::as_str).map(str::to_string);
    Some(ScalePaths {
        spec_replicas: text("specReplicasPath")?,
        status_replicas: text("statusReplicasPath")?,
        label_selector: text("labelSelectorPath"),
    })
}

/// The stored definition serving `kind` of `api_version` among `crds`.
pub fn definition_for<'a>(
    crds: impl Iterator<Item = &'a CustomResourceDefinition>,
    api_version: &str,
    kind: &str,
) -> Option<&'a CustomResourceDefinition> {
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    crds.into_iter().find(|crd| {
        let text = |path: &str| crd.spec().and_then(|s| s.pointer(path)).and_then(Value::as_str);
        text("/group") == Some(group) && text("/names/kind") == Some(kind)
    })
}

/// A custom object's scale: `(spec replicas, status replicas, label selector)` as the scale
/// subresource reads them (absent replicas read as 0).
pub fn scale_of(o: &CustomObject, paths: &ScalePaths) -> (i64, i64, String) {
    let value = o.to_value();
    let int = |path: &str| lookup(&value, path).and_then(Value::as_i64).unwrap_or(0);
    let selector = paths.label_selector.as_deref().and_then(|p| lookup(&value, p)).and_then(Value::as_str).unwrap_or_default().to_string();
    (int(&paths.spec_replicas), int(&paths.status_replicas), selector)
}

/// The object with `replicas` at the scale subresource's spec path (what a write of its Scale
/// does).
pub fn rescaled(o: &CustomObject, paths: &ScalePaths, replicas: i64) -> CustomObject {
    let mut next = o.clone();
    let parts: Vec<&str> = paths.spec_replicas.trim_start_matches('.').split('.').filter(|p| !p.is_empty()).collect();
    let Some((last, parents)) = parts.split_last() else { return next };
    let mut node = &mut next.body.content;
    for part in parents {
        let entry = node.entry(part.to_string()).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        let Some(map) = entry.as_object_mut() else { return next };
        node = map;
    }
    node.insert(last.to_string(), json!(replicas));
    next
}

/// The value at a simple JSON path (`.spec.replicas`, `.status.conditions[0].type`).
pub fn lookup<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = object;
    for part in path.trim_start_matches('.').split('.').filter(|p| !p.is_empty()) {
        let (field, index) = match part.split_once('[') {
            Some((f, rest)) => (f, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        if !field.is_empty() {
            node = node.get(field)?;
        }
        if let Some(i) = index {
            node = node.get(i)?;
        }
    }
    Some(node)
}

#[cfg(test)]
mod tests;
