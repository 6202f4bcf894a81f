//! `managedFields` and server-side apply: kube-apiserver's field manager, for `kubeloop serve`.
//!
//! The simulation's API server keeps objects; which client set which of their fields only clients
//! that read `metadata.managedFields` care about, so the bookkeeping is here, in the shell that
//! serves them, and costs the page and the benchmarks nothing. The simulation tells a
//! `sim::WriteObserver` of every create and (status) update it serves and who sent it; the
//! `Tracker` keeps each object's entries beside it (matched by UID, so a recreated object starts
//! afresh) and the HTTP layer writes them into every object it sends. Components write as a
//! cluster's do (`kube-controller-manager`, `kube-scheduler`, `kubelet`); a request over HTTP as its
//! `fieldManager`, or the User-Agent's product name (`kubectl/v1.32 …` → `kubectl`).
//!
//! `set.rs` is the field set, `schema.rs` the list and map semantics, `walk.rs` the walks over an
//! object's JSON, `managers.rs` how a write changes the entries.
//!
//! Cost (release build, `scenarios/bench/pods-3000.yaml` paused, then `sim advance 60s`): each
//! write compares two versions' JSON, about 60 µs, so the 3,000 pods converge in about twice the
//! wall time (0.7–2.1 s without tracking, 1.6–4.3 s with, on a 2-core machine at load 4–5); a
//! JSON list carries 1.75× the bytes, as a real cluster's does; the Tables kubectl prints do not.

pub(crate) mod managers;
pub(crate) mod schema;
pub(crate) mod set;
pub(crate) mod walk;

use kubeloop::command::printers;
use kubeloop::model::{Kind, Object, ObjectKey, Time};
use kubeloop::sim::{ComponentId, Write, WriteObserver, WriteVerb};
use managers::{Entry, Operation, Writer};
use serde_json::Value;
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The tracker, shared between the observer inside the simulation and the HTTP layer.
pub(crate) type Fields = Rc<RefCell<Tracker>>;

/// Every object's managed fields, and who the HTTP request being served is.
#[derive(Default)]
pub(crate) struct Tracker {
    objects: BTreeMap<ObjectKey, Tracked>,
    /// The writer of the next write `Sim::submit` serves (the HTTP request's manager).
    request: Option<Writer>,
    /// The entries a server-side apply computed, for the write that carries it.
    applied: Option<Vec<Entry>>,
    /// The entries a client wrote into `metadata.managedFields`, which its write starts from
    /// instead of the stored ones (`read_given`).
    given: Option<Given>,
}

/// `managedFields` a client wrote.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Given {
    /// Entries to start the write from.
    Entries(Vec<Entry>),
    /// `[{}]`: strip them all (an empty list leaves them, so that clients unaware of the field
    /// never lose it).
    Strip,
}

/// How many versions of an object's entries are kept: a watch event carries its version's
/// entries, and a watch hears a change within a tick of the clock, a few writes later at most.
const VERSIONS_KEPT: usize = 4;

/// One object's entries, for its latest versions (oldest first).
struct Tracked {
    uid: String,
    versions: Vec<Version>,
}

/// The entries of one version of an object, and their JSON, written the first time a client
/// reads them (a list of many objects reads them again and again).
struct Version {
    resource_version: u64,
    entries: Vec<Entry>,
    json: OnceCell<Value>,
}

impl Tracked {
    fn latest(&self) -> &[Entry] {
        self.versions.last().map_or(&[], |v| &v.entries[..])
    }
}

/// Starts tracking the managed fields of everything `sim` writes from now on. What it holds
/// already was written before anyone kept track (the scenario's manifests, applied at time zero
/// by the console's kubectl, and what kube-apiserver creates at start): each is adopted as its
/// creator's, as if tracked from the start.
pub(crate) fn track(sim: &mut kubeloop::sim::Sim) -> Fields {
    let fields: Fields = Rc::default();
    {
        let mut tracker = fields.borrow_mut();
        for kind in Kind::ALL {
            for object in sim.objects(kind) {
                tracker.adopt(object);
            }
        }
    }
    sim.observe_writes(Box::new(Observer(fields.clone())));
    fields
}

impl Tracker {
    /// The entries of `object` as of its version (an older version, as a watch event carries it,
    /// has that version's entries while they are kept), if any write was tracked for it.
    pub(crate) fn entries(&self, object: &Object) -> &[Entry] {
        self.version(object).map_or(&[], |v| &v.entries[..])
    }

    fn version(&self, object: &Object) -> Option<&Version> {
        let rv = object.meta().resource_version;
        match self.objects.get(&object.key()) {
            Some(t) if t.uid == object.meta().uid.as_ref() => {
                t.versions.iter().rev().find(|v| v.resource_version <= rv).or(t.versions.first())
            }
            _ => None,
        }
    }

    /// `entries` are `object`'s as of its version.
    fn record(&mut self, object: &Object, entries: Vec<Entry>) {
        let (uid, rv): (&str, u64) = (object.meta().uid.as_ref(), object.meta().resource_version);
        let tracked = self.objects.entry(object.key()).or_insert_with(|| Tracked { uid: uid.to_string(), versions: Vec::new() });
        if tracked.uid != uid {
            *tracked = Tracked { uid: uid.to_string(), versions: Vec::new() };
        }
        tracked.versions.retain(|v| v.resource_version < rv);
        tracked.versions.push(Version { resource_version: rv, entries, json: OnceCell::new() });
        if tracked.versions.len() > VERSIONS_KEPT {
            tracked.versions.remove(0);
        }
    }

    /// `metadata.managedFields` of `object`, written into its JSON.
    pub(crate) fn annotate(&self, object: &Object, value: &mut Value) {
        let Some(version) = self.version(object).filter(|v| !v.entries.is_empty()) else { return };
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            let json = version.json.get_or_init(|| version.entries.iter().map(Entry::to_json).collect());
            meta.insert("managedFields".into(), json.clone());
        }
    }

    /// An object written before tracking began, as its creator's update: kubectl's client-side
    /// apply where it left its annotation, kube-apiserver's own otherwise.
    fn adopt(&mut self, object: &Object) {
        let meta = object.meta();
        let applied = meta.annotations.contains_key("kubectl.kubernetes.io/last-applied-configuration");
        let client = if applied { ComponentId::User } else { ComponentId::ApiServer };
        let mut writer = component_writer(&client, object.kind(), WriteVerb::Create);
        if applied {
            writer.manager = "kubectl-client-side-apply".into();
        }
        let new = printers::object_json(object);
        let created = meta.creation_timestamp.unwrap_or_default();
        let entries = managers::update(object.kind(), &[], &managers::zero_value(&new), &new, &writer, created);
        self.record(object, entries);
    }

    /// Forgets the objects that are gone: deletions (and Events expiring) are not told to an
    /// observer, so the tracker looks for them now and then (`Cluster::tick`).
    pub(crate) fn sweep(&mut self, sim: &kubeloop::sim::Sim) {
        self.objects.retain(|key, t| sim.api().get(key).is_some_and(|o| o.meta().uid.as_ref() == t.uid));
    }

    /// The next write through `Sim::submit` is `writer`'s.
    pub(crate) fn begin(&mut self, writer: Writer) {
        self.request = Some(writer);
        self.applied = None;
    }

    /// The next write is a server-side apply whose entries are these.
    pub(crate) fn begin_apply(&mut self, writer: Writer, entries: Vec<Entry>) {
        self.request = Some(writer);
        self.applied = Some(entries);
    }

    /// After an apply's write: an apply that changed no field wrote nothing (and was not told
    /// here), yet the fields it owns may have changed hands; those entries are kept, each with
    /// its old time where its fields are the same.
    pub(crate) fn settle_apply(&mut self, object: &Object) {
        let Some(mut entries) = self.applied.take() else { return };
        let old = self.entries(object).to_vec();
        for e in &mut entries {
            if let Some(same) = old.iter().find(|o| o.writer == e.writer && o.fields == e.fields) {
                e.time = same.time;
            }
        }
        self.record(object, entries);
    }

    /// The HTTP request is answered: writes from here on are components' again.
    pub(crate) fn end(&mut self) {
        self.request = None;
        self.applied = None;
        self.given = None;
    }

    /// What a main resource's update or patch says about `managedFields` (kube-apiserver's
    /// `decodeLiveOrNew`): entries that differ from `object`'s are the client's to set; absent,
    /// empty, the same or unreadable, they are the stored ones.
    pub(crate) fn read_given(&self, object: &Object, written: &Value, now: Time) -> Option<Given> {
        let given = written.pointer("/metadata/managedFields")?.as_array()?;
        if given.is_empty() {
            return None;
        }
        if let [only] = given.as_slice() {
            if only.as_object().is_some_and(|m| m.is_empty()) {
                return Some(Given::Strip);
            }
        }
        let entries: Vec<Entry> = given.iter().map(|e| Entry::from_json(e, now)).collect::<Result<_, _>>().ok()?;
        let stored = self.entries(object);
        let same = entries.len() == stored.len() && entries.iter().zip(stored).all(|(a, b)| a.writer == b.writer && a.fields == b.fields);
        (!same).then_some(Given::Entries(entries))
    }

    /// The next write starts from the managed fields its client wrote.
    pub(crate) fn begin_given(&mut self, given: Given) {
        self.given = Some(given);
    }

    /// After a write that started from given entries: one that changed no field wrote nothing
    /// (and was not told here), yet its managed fields are the client's.
    pub(crate) fn settle_given(&mut self, object: &Object) {
        match self.given.take() {
            Some(Given::Entries(entries)) => self.record(object, entries),
            Some(Given::Strip) => self.record(object, Vec::new()),
            None => {}
        }
    }

    fn written(&mut self, now: Time, write: &Write<'_>) {
        let Some(after) = write.after else {
            if let Some(before) = write.before {
                self.objects.remove(&before.key());
            }
            return;
        };
        let key = after.key();
        let uid: &str = after.meta().uid.as_ref();
        if let (ComponentId::User, Some(entries)) = (write.client, self.applied.take()) {
            self.record(after, entries);
            return;
        }
        let writer = match (write.client, &self.request, write.console) {
            (ComponentId::User, Some(w), _) => w.clone(),
            // The console's kubectl (a scenario's timeline), as the real kubectl names itself.
            (ComponentId::User, None, Some((manager, subresource))) => Writer {
                manager: manager.into(),
                operation: Operation::Update,
                api_version: after.kind().info().api_version.into(),
                subresource: if write.verb == WriteVerb::UpdateStatus { "status".into() } else { subresource.into() },
            },
            (client, _, _) => component_writer(client, after.kind(), write.verb),
        };
        let given = if *write.client == ComponentId::User { self.given.take() } else { None };
        let given = match given {
            Some(Given::Strip) => return self.record(after, Vec::new()),
            Some(Given::Entries(entries)) => Some(entries),
            None => None,
        };
        let new = printers::object_json(after);
        let (old, stored) = match (write.verb, write.before, self.objects.get(&key)) {
            (WriteVerb::Create, _, _) | (_, None, _) => (managers::zero_value(&new), &[][..]),
            (_, Some(before), Some(t)) if t.uid == uid => (printers::object_json(before), t.latest()),
            (_, Some(before), _) => (printers::object_json(before), &[][..]),
        };
        let entries = managers::update(after.kind(), given.as_deref().unwrap_or(stored), &old, &new, &writer, now);
        self.record(after, entries);
    }
}

/// How a component of the simulation writes, as the same component of a cluster: its client's
/// User-Agent names the binary (`kube-controller-manager/v1.32.0 (linux/amd64) …/deployment-controller`),
/// and a status write is the status subresource.
fn component_writer(client: &ComponentId, kind: Kind, verb: WriteVerb) -> Writer {
    let manager = match client {
        ComponentId::ControllerManager => "kube-controller-manager",
        ComponentId::Scheduler => "kube-scheduler",
        ComponentId::Kubelet(_) => "kubelet",
        ComponentId::KubeProxy(_) => "kube-proxy",
        ComponentId::ApiServer | ComponentId::Etcd => "kube-apiserver",
        ComponentId::User => "kubectl",
        // kopf's own writes (its User-Agent is `kopf/VERSION`); a handler's requests through the
        // official client would name `OpenAPI-Generator`, which this one name does not tell apart.
        ComponentId::Operator(_) => "kopf",
    };
    let subresource = if verb == WriteVerb::UpdateStatus { "status" } else { "" };
    Writer {
        manager: manager.into(),
        operation: Operation::Update,
        api_version: kind.info().api_version.into(),
        subresource: subresource.into(),
    }
}

/// The manager of a request: its `fieldManager`, else its User-Agent's product name, as
/// kube-apiserver's `managerOrUserAgent` picks.
pub(crate) fn manager_of(field_manager: Option<&str>, user_agent: &str) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_string();
    }
    let product = user_agent.split('/').next().unwrap_or_default().trim();
    if product.is_empty() {
        "unknown".into()
    } else {
        product.chars().take(128).collect()
    }
}

struct Observer(Fields);

impl WriteObserver for Observer {
    fn written(&mut self, now: Time, write: &Write<'_>) {
        self.0.borrow_mut().written(now, write);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config_map(rv: u64, uid: &str) -> Object {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "uid": uid, "resourceVersion": rv.to_string()}});
        Object::from_json(v).expect("a ConfigMap")
    }

    fn entry(manager: &str) -> Entry {
        let writer = Writer { manager: manager.into(), operation: Operation::Update, api_version: "v1".into(), subresource: String::new() };
        Entry { writer, time: Time(0), fields: Default::default() }
    }

    #[test]
    fn a_write_sets_managed_fields_only_when_it_writes_other_ones() {
        let mut t = Tracker::default();
        let cm = config_map(5, "a");
        t.record(&cm, vec![entry("first")]);
        let written = |fields: Value| json!({"metadata": {"managedFields": fields}});
        let stored: Value = t.entries(&cm).iter().map(Entry::to_json).collect();
        assert_eq!(t.read_given(&cm, &written(stored), Time(0)), None, "what was read, written back");
        assert_eq!(t.read_given(&cm, &written(json!([])), Time(0)), None);
        assert_eq!(t.read_given(&cm, &json!({"metadata": {}}), Time(0)), None);
        assert_eq!(t.read_given(&cm, &written(json!([{}])), Time(0)), Some(Given::Strip));
        assert_eq!(t.read_given(&cm, &written(json!([{"manager": "x", "operation": "Sideways"}])), Time(0)), None, "unreadable");
        let other = json!([{"manager": "other", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}}, "time": "2026-01-01T00:01:00Z"}]);
        let Some(Given::Entries(entries)) = t.read_given(&cm, &written(other), Time(0)) else { panic!("entries") };
        assert_eq!((entries[0].writer.manager.as_str(), entries[0].time), ("other", Time(60_000)));
    }

    #[test]
    fn a_sweep_forgets_what_is_gone() {
        let sim = kubeloop::sim::Sim::new(1);
        let mut t = Tracker::default();
        let ns = sim.api().get(&ObjectKey::new(Kind::Namespace, "", "default")).cloned().expect("the default namespace");
        t.adopt(&ns);
        t.record(&config_map(3, "gone"), vec![entry("x")]);
        t.sweep(&sim);
        assert_eq!(t.entries(&ns).len(), 1);
        assert!(t.entries(&config_map(3, "gone")).is_empty());
    }

    #[test]
    fn an_older_version_has_its_own_entries_and_a_new_uid_starts_afresh() {
        let mut t = Tracker::default();
        t.record(&config_map(5, "a"), vec![entry("first")]);
        t.record(&config_map(9, "a"), vec![entry("second")]);
        let manager = |t: &Tracker, o: &Object| t.entries(o).first().map(|e| e.writer.manager.clone());
        assert_eq!(manager(&t, &config_map(5, "a")).as_deref(), Some("first"));
        assert_eq!(manager(&t, &config_map(7, "a")).as_deref(), Some("first"));
        assert_eq!(manager(&t, &config_map(9, "a")).as_deref(), Some("second"));
        assert_eq!(manager(&t, &config_map(9, "b")), None);
        t.record(&config_map(12, "b"), vec![entry("third")]);
        assert_eq!(manager(&t, &config_map(9, "a")), None);
        assert_eq!(manager(&t, &config_map(12, "b")).as_deref(), Some("third"));
    }

    #[test]
    fn a_request_without_a_field_manager_is_its_user_agents_product() {
        assert_eq!(manager_of(None, "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"), "kubectl");
        assert_eq!(manager_of(Some("kopf"), "Python/3"), "kopf");
        assert_eq!(manager_of(Some(""), "OpenAPI-Generator/31.0.0/python"), "OpenAPI-Generator");
        assert_eq!(manager_of(None, ""), "unknown");
    }
}
