//! The field managers of one object (`metadata.managedFields`) and how a write changes them, as
//! structured-merge-diff's `Updater` and kube-apiserver's managed-fields updater do.
//!
//! An update (any write but an apply) takes the fields it added or changed from every other
//! manager and adds them to its own entry, merged with that manager's earlier updates; fields it
//! removed leave every set. An apply owns exactly the fields its configuration sets, removes the
//! fields it set before and no longer does when no one else owns them, and may not change a field
//! another manager owns unless forced (a conflict, 409), in which case the field changes hands.

use super::set::{Display, FieldSet, PathElement};
use super::walk::{self, Comparison};
use kubeloop::model::{Kind, Time};
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who writes: a manager's name, its operation, the group version it wrote in, and the
/// subresource (empty for the main resource).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Writer {
    pub(crate) manager: String,
    pub(crate) operation: Operation,
    pub(crate) api_version: String,
    pub(crate) subresource: String,
}

/// One `ManagedFieldsEntry`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) writer: Writer,
    pub(crate) time: Time,
    pub(crate) fields: FieldSet,
}

impl Entry {
    /// Whether `writer` writes into this entry: entries are one per manager, operation and
    /// subresource, and an update's also per group version (an apply's is not).
    fn is(&self, writer: &Writer) -> bool {
        let w = &self.writer;
        w.manager == writer.manager
            && w.operation == writer.operation
            && w.subresource == writer.subresource
            && (w.operation == Operation::Apply || w.api_version == writer.api_version)
    }

    pub(crate) fn to_json(&self) -> Value {
        let w = &self.writer;
        let mut v = json!({
            "manager": w.manager, "operation": w.operation.as_str(), "apiVersion": w.api_version,
            "time": self.time.rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": self.fields.to_fields_v1(),
        });
        if !w.subresource.is_empty() {
            v["subresource"] = w.subresource.clone().into();
        }
        v
    }

    /// An entry as a client writes one, or why it cannot be read.
    pub(crate) fn from_json(v: &Value, now: Time) -> Result<Entry, String> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let operation = match v.get("operation").and_then(Value::as_str) {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            other => return Err(format!("unknown operation {other:?}")),
        };
        if v.get("fieldsType").and_then(Value::as_str) != Some("FieldsV1") {
            return Err("fieldsType must be FieldsV1".into());
        }
        let fields = FieldSet::from_fields_v1(v.get("fieldsV1").unwrap_or(&Value::Null))?;
        let time = v.get("time").and_then(Value::as_str).and_then(Time::parse_rfc3339).unwrap_or(now);
        let writer = Writer { manager: text("manager"), operation, api_version: text("apiVersion"), subresource: text("subresource") };
        Ok(Entry { writer, time, fields })
    }

    /// How a conflict names this entry's manager (`"kubectl-scale" with subresource "scale"
    /// using apps/v1`).
    fn label(&self) -> String {
        let w = &self.writer;
        let mut text = format!("{:?}", w.manager);
        if !w.subresource.is_empty() {
            text.push_str(&format!(" with subresource {:?}", w.subresource));
        }
        if w.operation == Operation::Update {
            text.push_str(&format!(" using {}", w.api_version));
        }
        text
    }
}

/// Entries in kube-apiserver's order: applies first, then by time, manager, version, subresource.
fn sort(entries: &mut [Entry]) {
    entries.sort_by(|a, b| {
        let key = |e: &Entry| {
            (e.writer.operation, e.time.0 / 1000, e.writer.manager.clone(), e.writer.api_version.clone(), e.writer.subresource.clone())
        };
        key(a).cmp(&key(b))
    });
}

/// The fields no manager owns: the type and the identity kube-apiserver sets
/// (structured-merge-diff's managers never see them).
fn stripped() -> FieldSet {
    let mut s = FieldSet::default();
    let field = |n: &str| PathElement::Field(n.into());
    s.insert(&[field("apiVersion")]);
    s.insert(&[field("kind")]);
    s.insert(&[field("metadata")]);
    for f in ["name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion"]
    {
        s.insert(&[field("metadata"), field(f)]);
    }
    s
}

/// The fields a write to the main resource or to `status` does not own: the other side's
/// (a main resource's `status`, a status write's `spec`), reset by the registry.
fn reset(subresource: &str) -> FieldSet {
    let mut s = FieldSet::default();
    match subresource {
        "" | "scale" => s.insert(&[PathElement::Field("status".into())]),
        "status" => s.insert(&[PathElement::Field("spec".into())]),
        _ => {}
    }
    s
}

fn owned(set: &FieldSet, subresource: &str) -> FieldSet {
    set.difference(&stripped()).recursive_difference(&reset(subresource))
}

/// What an object looked like before it was created, as kube-apiserver compares a create: the
/// Go zero value, in which the structs that are not pointers (metadata, spec, status, a pod
/// template, a strategy, a container's resources) and a pod's container list already exist. So a
/// create owns `.metadata.labels` as a member but not `.spec`, as on a real cluster.
pub(crate) fn zero_value(new: &Value) -> Value {
    const STRUCTS: [&str; 7] = ["metadata", "spec", "status", "template", "strategy", "updateStrategy", "resources"];
    let Value::Object(map) = new else { return json!({}) };
    let mut out = serde_json::Map::new();
    for (k, v) in map {
        if STRUCTS.contains(&k.as_str()) && v.is_object() {
            out.insert(k.clone(), zero_value(v));
        } else if k == "containers" && v.is_array() {
            out.insert(k.clone(), json!([]));
        }
    }
    Value::Object(out)
}

/// The entries after an update by `writer` from `old` to `new` at `now`.
pub(crate) fn update(kind: Kind, entries: &[Entry], old: &Value, new: &Value, writer: &Writer, now: Time) -> Vec<Entry> {
    let Comparison { added, modified, removed } = walk::compare(kind, old, new);
    let changed = modified.union(&added);
    let mut out: Vec<Entry> =
        entries.iter().map(|e| Entry { fields: e.fields.difference(&changed).difference(&removed), ..e.clone() }).collect();
    let mine = owned(&changed, &writer.subresource);
    if !mine.is_empty() {
        match out.iter_mut().find(|e| e.is(writer)) {
            Some(e) => {
                e.fields = e.fields.union(&mine);
                e.time = now;
            }
            None => out.push(Entry { writer: writer.clone(), time: now, fields: mine }),
        }
    }
    out.retain(|e| !e.fields.is_empty());
    cap_updates(&mut out);
    sort(&mut out);
    out
}

/// At most this many update entries; the oldest beyond it are folded together.
const MAX_UPDATE_MANAGERS: usize = 10;

/// Keeps an object's update entries to `MAX_UPDATE_MANAGERS`, as kube-apiserver's
/// `capManagersManager` does: oldest first, each beyond the cap is folded into an
/// `ancient-changes` entry of its group version (the first of that version seen becomes it).
fn cap_updates(entries: &mut Vec<Entry>) {
    let mut updates: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].writer.operation == Operation::Update).collect();
    if updates.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updates.sort_by_key(|&i| entries[i].time);
    let mut left = updates.len();
    let mut first_of_version: Vec<(String, usize)> = Vec::new();
    let mut folded = vec![false; entries.len()];
    for &i in &updates {
        if left <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].writer.api_version.clone();
        match first_of_version.iter().find(|(v, _)| *v == version).map(|(_, b)| *b) {
            Some(bucket) => {
                let (fields, time) = (entries[i].fields.clone(), entries[i].time);
                let b = &mut entries[bucket];
                b.writer.manager = "ancient-changes".into();
                b.writer.subresource.clear();
                b.fields = b.fields.union(&fields);
                b.time = time;
                folded[i] = true;
                left -= 1;
            }
            None => first_of_version.push((version, i)),
        }
    }
    let mut index = 0;
    entries.retain(|_| {
        index += 1;
        !folded[index - 1]
    });
}

/// A field an apply would take from another manager.
#[derive(Debug, PartialEq)]
pub(crate) struct Conflict {
    /// The owner as a conflict names it, and the order managers are listed in.
    owner: String,
    order: (String, Operation, String, String),
    path: String,
}

/// kube-apiserver's message for an apply's conflicts, and each one as a `StatusCause`.
pub(crate) fn conflict_status(conflicts: &[Conflict]) -> (String, Value) {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| json!({"type": "FieldManagerConflict", "message": format!("conflict with {}", c.owner), "field": c.path}))
        .collect();
    if let [only] = conflicts {
        return (format!("Apply failed with 1 conflict: conflict with {}: {}", only.owner, only.path), causes.into());
    }
    let mut sorted: Vec<&Conflict> = conflicts.iter().collect();
    sorted.sort_by(|a, b| a.order.cmp(&b.order));
    let mut lines: Vec<String> = Vec::new();
    let mut last: Option<&str> = None;
    for c in sorted {
        if last != Some(c.owner.as_str()) {
            lines.push(format!("conflicts with {}:", c.owner));
            last = Some(&c.owner);
        }
        lines.push(format!("- {}", c.path));
    }
    (format!("Apply failed with {} conflicts: {}", conflicts.len(), lines.join("\n")), causes.into())
}

/// A server-side apply of `config` by `writer` (an `Apply`) onto `live` (none: the object does
/// not exist yet): the object to write and its entries, or the conflicts that refuse it.
pub(crate) fn apply(
    kind: Kind,
    entries: &[Entry],
    live: Option<&Value>,
    config: &Value,
    writer: &Writer,
    force: bool,
    now: Time,
) -> Result<(Value, Vec<Entry>), Vec<Conflict>> {
    let applied = owned(&walk::field_set(kind, config), &writer.subresource);
    let empty = json!({});
    let mut merged = walk::merge(kind, live.unwrap_or(&empty), config);
    // Fields this manager applied last time and no longer does go, unless another owns them.
    let last = entries.iter().find(|e| e.is(writer)).map(|e| e.fields.clone()).unwrap_or_default();
    let still_owned = entries.iter().filter(|e| !e.is(writer)).fold(applied.clone(), |acc, e| acc.union(&e.fields));
    for path in last.difference(&applied).members() {
        if !still_owned.has_at_or_under(&path) {
            walk::remove(kind, &mut merged, &path);
        }
    }
    let before = match live {
        Some(l) => l.clone(),
        None => zero_value(&merged),
    };
    let Comparison { added, modified, removed } = walk::compare(kind, &before, &merged);
    let changed = modified.union(&added);
    let mut conflicts = Vec::new();
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| !e.is(writer)) {
        let taken = e.fields.intersection(&changed);
        for path in taken.members() {
            let w = &e.writer;
            let order = (w.manager.clone(), w.operation, w.api_version.clone(), w.subresource.clone());
            conflicts.push(Conflict { owner: e.label(), order, path: Display(&path).to_string() });
        }
        out.push(Entry { fields: e.fields.difference(&taken).difference(&removed), ..e.clone() });
    }
    if !force && !conflicts.is_empty() {
        return Err(conflicts);
    }
    out.push(Entry { writer: writer.clone(), time: now, fields: applied });
    out.retain(|e| !e.fields.is_empty());
    sort(&mut out);
    Ok((merged, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(manager: &str, operation: Operation) -> Writer {
        Writer { manager: manager.into(), operation, api_version: "apps/v1".into(), subresource: String::new() }
    }

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "web", "image": image}]}}}})
    }

    fn paths(e: &Entry) -> Vec<String> {
        e.fields.members().iter().map(|p| Display(p).to_string()).collect()
    }

    #[test]
    fn an_update_takes_the_fields_it_changes_from_their_owner() {
        let created = deployment(1, "nginx:1");
        let create = update(Kind::Deployment, &[], &zero_value(&created), &created, &writer("kubectl-create", Operation::Update), Time(0));
        assert_eq!(create.len(), 1);
        assert!(paths(&create[0]).contains(&".spec.replicas".to_string()));
        assert!(!paths(&create[0]).contains(&".spec".to_string()), "the zero value has a spec already");
        let scaled = deployment(3, "nginx:1");
        let mut scaler = writer("kubectl-scale", Operation::Update);
        scaler.subresource = "scale".into();
        let after = update(Kind::Deployment, &create, &created, &scaled, &scaler, Time(5000));
        let owner =
            |p: &str| after.iter().filter(|e| paths(e).contains(&p.to_string())).map(|e| e.writer.manager.clone()).collect::<Vec<_>>();
        assert_eq!(owner(".spec.replicas"), ["kubectl-scale"]);
        assert_eq!(owner(r#".spec.template.spec.containers[name="web"].image"#), ["kubectl-create"]);
        // An update that changes nothing leaves the entries as they were.
        assert_eq!(update(Kind::Deployment, &after, &scaled, &scaled, &scaler, Time(9000)), after);
    }

    #[test]
    fn an_apply_conflicts_with_another_owner_unless_forced() {
        let created = deployment(1, "nginx:1");
        let entries = update(
            Kind::Deployment,
            &[],
            &zero_value(&created),
            &created,
            &writer("kubectl-client-side-apply", Operation::Update),
            Time(0),
        );
        let config = deployment(2, "nginx:1");
        let me = writer("kubectl", Operation::Apply);
        let err = apply(Kind::Deployment, &entries, Some(&created), &config, &me, false, Time(1000)).unwrap_err();
        let (message, causes) = conflict_status(&err);
        assert_eq!(message, r#"Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas"#);
        assert_eq!(causes[0]["field"], ".spec.replicas");
        let (merged, after) = apply(Kind::Deployment, &entries, Some(&created), &config, &me, true, Time(1000)).unwrap();
        assert_eq!(merged["spec"]["replicas"], 2);
        assert_eq!(after[0].writer.operation, Operation::Apply);
        assert!(paths(&after[0]).contains(&".spec.replicas".to_string()));
        assert!(!paths(&after[1]).contains(&".spec.replicas".to_string()));
        // Applying the same value is no conflict: the field is shared.
        let same = apply(Kind::Deployment, &entries, Some(&created), &created, &me, false, Time(1000)).unwrap().1;
        assert!(same.iter().all(|e| paths(e).contains(&".spec.replicas".to_string())));
    }

    #[test]
    fn an_apply_removes_what_it_stopped_applying_unless_another_owns_it() {
        let me = writer("kubectl", Operation::Apply);
        let mut config = deployment(1, "nginx:1");
        config["metadata"]["labels"] = json!({"a": "1", "b": "2"});
        let (live, entries) = apply(Kind::Deployment, &[], None, &config, &me, false, Time(0)).unwrap();
        assert_eq!(entries.len(), 1);
        let mut next = config.clone();
        next["metadata"]["labels"] = json!({"a": "1"});
        let (pruned, _) = apply(Kind::Deployment, &entries, Some(&live), &next, &me, false, Time(1000)).unwrap();
        assert_eq!(pruned["metadata"]["labels"], json!({"a": "1"}));
        // The same label also owned by a labeller stays.
        let mut labelled = live.clone();
        labelled["metadata"]["labels"]["b"] = "3".into();
        let shared = update(Kind::Deployment, &entries, &live, &labelled, &writer("kubectl-label", Operation::Update), Time(500));
        let (kept, _) = apply(Kind::Deployment, &shared, Some(&labelled), &next, &me, false, Time(1000)).unwrap();
        assert_eq!(kept["metadata"]["labels"], json!({"a": "1", "b": "3"}));
    }

    #[test]
    fn past_ten_update_managers_the_oldest_are_folded_into_ancient_changes() {
        let mut entries = Vec::new();
        let mut object = deployment(1, "nginx:1");
        for n in 0..12 {
            let mut next = object.clone();
            next["metadata"]["labels"] = json!({format!("l{n}"): "x"});
            next["metadata"]["labels"]
                .as_object_mut()
                .unwrap()
                .extend(object["metadata"]["labels"].as_object().cloned().unwrap_or_default());
            entries = update(Kind::Deployment, &entries, &object, &next, &writer(&format!("m{n:02}"), Operation::Update), Time(n * 1000));
            object = next;
        }
        let names: Vec<&str> = entries.iter().map(|e| e.writer.manager.as_str()).collect();
        assert_eq!(names.len(), 10);
        assert_eq!(names[0], "ancient-changes");
        assert_eq!(names[1..], ["m03", "m04", "m05", "m06", "m07", "m08", "m09", "m10", "m11"]);
        assert_eq!(paths(&entries[0]), [".metadata.labels", ".metadata.labels.l0", ".metadata.labels.l1", ".metadata.labels.l2"]);
    }

    #[test]
    fn conflicts_with_several_managers_are_listed_by_manager() {
        let c = |owner: &str, path: &str| Conflict {
            owner: format!("{owner:?} using apps/v1"),
            order: (owner.into(), Operation::Update, "apps/v1".into(), String::new()),
            path: path.into(),
        };
        let (message, _) = conflict_status(&[c("b", ".spec.x"), c("a", ".spec.y"), c("b", ".spec.z")]);
        assert_eq!(message, "Apply failed with 3 conflicts: conflicts with \"a\" using apps/v1:\n- .spec.y\nconflicts with \"b\" using apps/v1:\n- .spec.x\n- .spec.z");
    }
}
