//! kube-apiserver: the only door to etcd, and the sole authority on what the cluster believes.
//!
//! A request arrives as data (`ApiRequest`); the server defaults, admits and validates it,
//! enforces optimistic concurrency, writes etcd, and reports which open watches must hear of the
//! change. It decides nothing about workloads. It is synchronous and knows no latencies: the
//! simulation decides when a request arrives and when each notification is delivered.

pub mod crd;
pub mod cronjob;
pub mod defaults;
pub mod errors;
mod eviction;
pub mod job;
pub mod lease_manager;
pub mod namespaces;
pub mod service;
pub mod storage;
pub mod validation;
pub mod watch;

pub use errors::{ApiError, FieldError, Reason};
pub use eviction::VIOLATES_BUDGET;
pub use watch::{FieldFilter, Narrowing, WatchEvent, WatchId, WatchRegistry};

use crate::model::*;
use crate::rng::Rng;
use crate::runtime::fasthash::FastMap;
use crate::store::{Change, ChangeType, Etcd, StoreError};
use std::rc::Rc;

/// A request to the API server, as a client sends it.
#[derive(Clone, Debug)]
pub enum ApiRequest {
    Create(Object),
    /// Replaces spec and metadata; status is kept. A non-zero `resourceVersion` is a precondition.
    Update(Object),
    /// The status subresource: replaces status only.
    UpdateStatus(Object),
    Delete(DeleteRequest),
    /// The pods/eviction subresource (`kubectl drain`): a graceful deletion the pod's
    /// PodDisruptionBudget may refuse (`eviction`).
    Evict(DeleteRequest),
    /// The pods/binding subresource the scheduler posts.
    Bind {
        pod: ObjectKey,
        node: String,
    },
    /// The namespaces/finalize subresource: replaces a Namespace's `spec.finalizers` only (the
    /// namespace controller's last word on a deleted namespace).
    Finalize(Object),
    /// `deletecollection`: deletes every object of a kind in a namespace, as a delete of each
    /// would; answers with the ones still there (pods in their grace period).
    DeleteCollection {
        kind: Kind,
        namespace: String,
    },
    Get(ObjectKey),
    List(ListRequest),
    Watch(WatchRequest),
    /// `pods.metrics.k8s.io`: the CPU use of the pods a selector picks, as metrics-server reports
    /// it through the aggregation layer. Answered by the simulation (`sim::metrics`), which owns
    /// the machines the pods run on, not by etcd.
    PodMetrics {
        namespace: String,
        selector: LabelSelector,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeleteRequest {
    pub key: ObjectKey,
    pub uid: Option<String>,
    pub grace_period_seconds: Option<i64>,
}

impl DeleteRequest {
    pub fn new(key: ObjectKey) -> Self {
        DeleteRequest { key, uid: None, grace_period_seconds: None }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListRequest {
    pub kind: Option<Kind>,
    /// For `Kind::CustomObject`: one custom resource's objects (its definition's name); empty
    /// for all of them, and for every built-in kind.
    pub resource: Name,
    pub namespace: Option<String>,
    pub field: FieldFilter,
    pub labels: Option<LabelSelector>,
}

impl ListRequest {
    pub fn all(kind: Kind) -> Self {
        ListRequest { kind: Some(kind), ..Default::default() }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct WatchRequest {
    pub kind: Kind,
    /// For `Kind::CustomObject`: the custom resource watched (empty: every one).
    pub resource: Name,
    pub field: FieldFilter,
    /// Deliver every change after this revision (the list's `resourceVersion`).
    pub resource_version: u64,
    /// Only objects whose labels match (`kubectl get -w -l app=web`).
    pub labels: Option<LabelSelector>,
}

impl ApiRequest {
    /// The HTTP-ish verb, for the message trace and the page's flow animation.
    pub fn verb(&self) -> &'static str {
        match self {
            ApiRequest::Create(_) => "create",
            ApiRequest::Update(_) => "update",
            ApiRequest::UpdateStatus(_) => "update-status",
            ApiRequest::Delete(_) => "delete",
            ApiRequest::Evict(_) => "evict",
            ApiRequest::Bind { .. } => "bind",
            ApiRequest::Finalize(_) => "finalize",
            ApiRequest::DeleteCollection { .. } => "deletecollection",
            ApiRequest::Get(_) => "get",
            ApiRequest::List(_) => "list",
            ApiRequest::Watch(_) => "watch",
            ApiRequest::PodMetrics { .. } => "list",
        }
    }
    pub fn is_write(&self) -> bool {
        !matches!(self, ApiRequest::Get(_) | ApiRequest::List(_) | ApiRequest::Watch(_) | ApiRequest::PodMetrics { .. })
    }
    /// What the request is about, as `kind/namespace/name` or a kind's plural for lists.
    pub fn target(&self) -> String {
        Target(self).to_string()
    }
    /// The target for printing, without allocating.
    pub fn target_ref(&self) -> Target<'_> {
        Target(self)
    }
}

/// What a request is about, printed on demand (the trace formats millions of these).
pub struct Target<'a>(&'a ApiRequest);

impl std::fmt::Display for Target<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            ApiRequest::Create(o) | ApiRequest::Update(o) | ApiRequest::UpdateStatus(o) | ApiRequest::Finalize(o) => {
                let m = o.meta();
                if m.name.is_empty() {
                    let generated = format!("{}*", m.generate_name);
                    write!(f, "{}", ObjectKey::new(o.kind(), &m.namespace, &generated))
                } else {
                    write!(f, "{}", o.key_ref())
                }
            }
            ApiRequest::Delete(d) | ApiRequest::Evict(d) => write!(f, "{}", d.key),
            ApiRequest::Bind { pod, .. } => write!(f, "{pod}"),
            ApiRequest::DeleteCollection { kind, namespace } => write!(f, "{}/{namespace}", kind.plural_of("")),
            ApiRequest::Get(k) => write!(f, "{k}"),
            ApiRequest::List(l) => f.write_str(l.kind.map(|k| k.plural_of(&l.resource)).unwrap_or_default()),
            ApiRequest::Watch(w) => f.write_str(w.kind.plural_of(&w.resource)),
            ApiRequest::PodMetrics { namespace, .. } => write!(f, "pods.metrics.k8s.io/{namespace}"),
        }
    }
}

#[derive(Clone, Debug)]
pub enum ApiResponse {
    Object(Rc<Object>),
    List {
        items: Vec<Rc<Object>>,
        resource_version: u64,
    },
    /// The watch is open; its past events follow as notifications.
    Watching(WatchId),
    /// The answer to `PodMetrics`.
    PodMetrics(Vec<PodMetric>),
}

impl ApiResponse {
    pub fn object(&self) -> Option<&Rc<Object>> {
        match self {
            ApiResponse::Object(o) => Some(o),
            _ => None,
        }
    }
}

pub type ApiResult = Result<ApiResponse, ApiError>;

/// What one request did: the answer, and the notifications its write (if any) fans out.
#[derive(Debug)]
pub struct Handled {
    pub result: ApiResult,
    pub notifications: Vec<(WatchId, WatchEvent)>,
    /// The etcd revision written, if the request wrote.
    pub revision: Option<u64>,
}

#[derive(Debug, Default)]
pub struct ApiServer {
    /// etcd itself. Only the simulation reaches it directly (compaction, snapshots, faults);
    /// everyone else reads through the methods below, as a client reads through kube-apiserver.
    pub(crate) etcd: Etcd,
    /// The open watches. Only the simulation opens, mutes and closes them directly.
    pub(crate) watches: WatchRegistry,
    /// Pods by `spec.nodeName`, for kubelets' filtered lists (the watch cache's index). A node's
    /// keys are in no order (a bind only pushes one); a list, rare next to binds, sorts them.
    pods_by_node: FastMap<String, Vec<ObjectKey>>,
    /// The oldest revision the watch cache can serve from. A freshly started API server fills its
    /// cache with a list at the current revision, so a watch from before it is 410 Gone.
    watch_cache_floor: u64,
    /// The etcd lease Events are being put with (`--event-ttl`).
    event_leases: lease_manager::LeaseManager,
    /// The ClusterIPs and NodePorts the stored Services hold.
    services: service::Allocations,
    /// The stored CustomResourceDefinitions, read (`crd::Definitions`).
    definitions: crd::Definitions,
}

impl ApiServer {
    /// A kube-apiserver that has started on an empty etcd: only the system namespaces exist
    /// (created at time 0, their UIDs drawn from a generator of their own, so every later
    /// name and UID the simulation's seed gives stays the same).
    pub fn new() -> Self {
        let mut api = Self::default();
        api.ensure_system_namespaces(Time(0), &mut Rng::new(namespaces::SYSTEM_UID_SEED));
        api
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.etcd.get(key)
    }

    /// The objects of `kind` (in `namespace`, or all), in key order, without copying them: a
    /// list's `items`, for readers that filter as they go.
    pub fn items<'a>(&'a self, kind: Kind, namespace: Option<&'a str>) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.etcd.list(kind, namespace)
    }

    /// How many objects of `kind` are stored.
    pub fn count(&self, kind: Kind) -> usize {
        self.etcd.count(kind)
    }

    /// How many keys etcd holds, of every kind.
    pub fn key_count(&self) -> usize {
        self.etcd.len()
    }

    /// etcd's current revision: a list's `resourceVersion`.
    pub fn revision(&self) -> u64 {
        self.etcd.revision()
    }

    /// The revision etcd has compacted up to: a watch from before it is 410 Gone.
    pub fn compacted_revision(&self) -> u64 {
        self.etcd.compacted_revision()
    }

    /// etcd's changes after `revision`, oldest first (what a watch from that revision would
    /// hear), or `Compacted` when that history is gone.
    pub fn changes_since(&self, revision: u64) -> Result<impl Iterator<Item = &Change>, StoreError> {
        self.etcd.changes_since(revision)
    }

    /// Whether the watch `id` is still open (a component's watch ends when the server or a
    /// fault closes it).
    pub fn is_watch_open(&self, id: WatchId) -> bool {
        self.watches.is_open(id)
    }

    /// The watches still open, for a test harness that plays a client's process ending.
    #[cfg(test)]
    pub(crate) fn open_watch_ids(&self) -> Vec<WatchId> {
        self.watches.open_ids().collect()
    }

    /// A client stops watching: `id` hears nothing more.
    pub fn close_watch(&mut self, id: WatchId) {
        self.watches.close(id);
    }

    /// What kube-apiserver's bootstrap controller does on its first start: the `kubernetes`
    /// Service in `default`, at the range's first address. Its UID comes from a fixed seed of
    /// its own, so the simulation's random draws (pod names, jitter) are the same as before.
    pub fn bootstrap(&mut self) {
        let key = ObjectKey::new(Kind::Service, "default", "kubernetes");
        if self.etcd.get(&key).is_some() {
            return;
        }
        if let Some(class) = storage::default_class(&self.etcd) {
            if let Ok(change) = self.etcd.create(class) {
                self.committed(change);
            }
        }
        let mut svc = service::kubernetes_service();
        svc.metadata.uid = Rng::new(0x6b75_6265_726e_6574).uuid().into();
        svc.metadata.creation_timestamp = Some(Time(0));
        self.services = service::Allocations::rebuild(std::iter::once(&svc));
        if let Ok(change) = self.etcd.create(Object::Service(svc)) {
            self.committed(change);
        }
    }

    /// Serves one request at `now`.
    pub fn handle(&mut self, now: Time, rng: &mut Rng, request: ApiRequest) -> Handled {
        let outcome = match request {
            ApiRequest::Create(Object::CustomObject(o)) => self.create_custom(now, rng, o),
            ApiRequest::Update(Object::CustomObject(o)) => self.update_custom(o, false),
            ApiRequest::UpdateStatus(Object::CustomObject(o)) => self.update_custom(o, true),
            ApiRequest::Create(Object::CustomResourceDefinition(crd)) => self.create_definition(now, rng, crd),
            ApiRequest::Update(Object::CustomResourceDefinition(crd)) => self.update_definition(now, crd, false),
            ApiRequest::UpdateStatus(Object::CustomResourceDefinition(crd)) => self.update_definition(now, crd, true),
            ApiRequest::Delete(d) if d.key.kind == Kind::CustomResourceDefinition => {
                return match self.delete_definition(now, d) {
                    Ok(changes) => self.committed_all(changes),
                    Err(e) => Handled { result: Err(e), notifications: Vec::new(), revision: None },
                };
            }
            ApiRequest::Create(o) => self.create(now, rng, o),
            ApiRequest::Update(o) => self.update(now, rng, o, false),
            ApiRequest::UpdateStatus(o) => self.update(now, rng, o, true),
            ApiRequest::Delete(d) => self.delete(now, d),
            ApiRequest::Evict(d) => return self.evict(now, d),
            ApiRequest::Bind { pod, node } => self.bind(now, &pod, node),
            ApiRequest::Finalize(o) => self.finalize(o),
            ApiRequest::DeleteCollection { kind, namespace } => return self.delete_collection(now, kind, &namespace),
            ApiRequest::Get(key) => {
                let r = self
                    .etcd
                    .get(&key)
                    .cloned()
                    .map(ApiResponse::Object)
                    .ok_or_else(|| ApiError::not_found_named(&key.qualified_plural(), &key.name));
                return Handled { result: r, notifications: Vec::new(), revision: None };
            }
            ApiRequest::List(l) => {
                return Handled { result: Ok(self.list(&l)), notifications: Vec::new(), revision: None };
            }
            ApiRequest::Watch(w) => return self.watch(w),
            // Only the simulation, which owns the machines, can answer this (see `sim::metrics`).
            ApiRequest::PodMetrics { .. } => {
                Err(ApiError::unavailable("the server is currently unable to handle the request (get pods.metrics.k8s.io)"))
            }
        };
        match outcome {
            Ok(Written::Changed(change)) => self.committed(change),
            Ok(Written::Unchanged(current)) => {
                Handled { result: Ok(ApiResponse::Object(current)), notifications: Vec::new(), revision: None }
            }
            Err(e) => Handled { result: Err(e), notifications: Vec::new(), revision: None },
        }
    }

    /// A change etcd committed: indexed, and fanned out to the watches that must hear of it.
    /// The last object of a terminating CustomResourceDefinition gone, the definition goes too.
    fn committed(&mut self, change: Change) -> Handled {
        self.index(&change);
        let mut notifications = self.watches.fan_out(&change);
        let mut revision = change.revision;
        if change.object.kind() == Kind::CustomResourceDefinition {
            self.reread_definitions();
        }
        if let (ChangeType::Deleted, Some(o)) = (change.type_, change.object.as_custom_object()) {
            if let Some(done) = self.finish_definition(Time(0), o.resource()) {
                revision = done.revision;
                self.reread_definitions();
                notifications.extend(self.watches.fan_out(&done));
            }
        }
        Handled { result: Ok(ApiResponse::Object(change.object)), notifications, revision: Some(revision) }
    }

    /// Several changes of one request, in order: the answer is the first one's object (the
    /// object the request was about).
    #[inline(never)]
    fn committed_all(&mut self, changes: Vec<Change>) -> Handled {
        let mut handled: Option<Handled> = None;
        for change in changes {
            let next = self.committed(change);
            match &mut handled {
                None => handled = Some(next),
                Some(h) => {
                    h.notifications.extend(next.notifications);
                    h.revision = next.revision;
                }
            }
        }
        handled.unwrap_or(Handled {
            result: Err(ApiError::new(Reason::InternalError, "nothing was written")),
            notifications: Vec::new(),
            revision: None,
        })
    }

    /// When etcd next expires a lease (an Event's `--event-ttl` running out), if any is live.
    pub fn next_expiry(&self) -> Option<Time> {
        self.etcd.leases().next_expiry()
    }

    /// etcd deletes the keys of the leases that ran out by `now`; kube-apiserver's watch of etcd
    /// sees each deletion and its watchers hear DELETED, as for any other. One `Handled` per
    /// deletion, in etcd's order.
    pub fn expire_leases(&mut self, now: Time) -> Vec<Handled> {
        let deleted = self.etcd.expire_leases(now);
        deleted.into_iter().map(|change| self.committed(change)).collect()
    }

    /// The lease for an Event written at `now`, or none for any other kind.
    fn lease_for(&mut self, now: Time, kind: Kind) -> Option<crate::store::lease::LeaseId> {
        (kind == Kind::Event).then(|| self.event_leases.lease_for(now, lease_manager::EVENT_TTL, &mut self.etcd))
    }

    fn index(&mut self, change: &Change) {
        if change.object.kind() != Kind::Pod {
            return;
        }
        let prev_node = change.prev.as_ref().and_then(|p| p.as_pod()?.node_name());
        let node = change.object.as_pod().and_then(|p| p.node_name());
        if change.type_ != ChangeType::Deleted && prev_node.is_some() && prev_node == node {
            // A status write of a bound pod: it stays where the index has it.
            return;
        }
        let key = change.object.key();
        if let Some(keys) = prev_node.and_then(|node| self.pods_by_node.get_mut(node)) {
            keys.retain(|k| *k != key);
        }
        if change.type_ != ChangeType::Deleted {
            // A key is listed only under its current node, so it is not under this one yet.
            if let Some(node) = change.object.as_pod().and_then(|p| p.node_name()) {
                self.pods_by_node.entry(node.to_string()).or_default().push(key);
            }
        }
    }

    /// Rebuilds indexes after etcd's content changed under us (restore, wipe). The lease being
    /// reused may be gone with the old content, so the next Event write is granted a new one.
    pub fn reindex(&mut self) {
        self.pods_by_node.clear();
        self.reread_definitions();
        self.event_leases = Default::default();
        self.services = service::Allocations::rebuild(self.etcd.list(Kind::Service, None).filter_map(|o| o.as_service()));
        let pods: Vec<(String, ObjectKey)> =
            self.etcd.list(Kind::Pod, None).filter_map(|o| Some((o.as_pod()?.node_name()?.to_string(), o.key()))).collect();
        for (node, key) in pods {
            self.pods_by_node.entry(node).or_default().push(key);
        }
    }

    /// The keys of the pods bound to `node`, in key order.
    fn pods_on_node(&self, node: &str) -> Vec<&ObjectKey> {
        let mut keys: Vec<&ObjectKey> = self.pods_by_node.get(node).into_iter().flatten().collect();
        crate::sort::sort(&mut keys);
        keys
    }

    pub fn list(&self, l: &ListRequest) -> ApiResponse {
        let resource_version = self.etcd.revision();
        let Some(kind) = l.kind else {
            return ApiResponse::List { items: Vec::new(), resource_version };
        };
        let matches = |o: &Rc<Object>| l.labels.as_ref().is_none_or(|s| s.matches(&o.meta().labels)) && l.field.matches(o);
        let items: Vec<Rc<Object>> = match (&l.field, kind) {
            (FieldFilter::NodeName(node), Kind::Pod) => self
                .pods_on_node(node)
                .into_iter()
                .filter_map(|k| self.etcd.get(k))
                .filter(|o| l.namespace.as_deref().is_none_or(|ns| o.meta().namespace == ns))
                .filter(|o| matches(o))
                .cloned()
                .collect(),
            _ => {
                let resource = Some(l.resource.as_str()).filter(|r| !r.is_empty());
                self.etcd.list_in(kind, resource, l.namespace.as_deref()).filter(|o| matches(o)).cloned().collect()
            }
        };
        ApiResponse::List { items, resource_version }
    }

    /// The API server process started afresh: its watch cache begins at etcd's current revision.
    pub fn restart_watch_cache(&mut self) {
        self.watch_cache_floor = self.etcd.revision();
    }

    fn watch(&mut self, w: WatchRequest) -> Handled {
        self.watch_narrowed(w, Narrowing::default())
    }

    /// A watch narrowed by namespace and field selector as well: the simulation opens these for
    /// clients outside it (`Sim::open_external_watch`), with no trace and no latency of their own.
    pub(crate) fn watch_narrowed(&mut self, w: WatchRequest, narrowing: Narrowing) -> Handled {
        if w.resource_version < self.watch_cache_floor {
            let msg = format!("too old resource version: {} ({})", w.resource_version, self.watch_cache_floor);
            return Handled { result: Err(ApiError::gone(msg)), notifications: Vec::new(), revision: None };
        }
        let past: Vec<Change> = match self.etcd.changes_since(w.resource_version) {
            Ok(changes) => changes.filter(|c| c.object.kind() == w.kind && in_resource(&c.object, &w.resource)).cloned().collect(),
            Err(StoreError::Compacted { oldest }) => {
                let msg = format!("too old resource version: {} ({})", w.resource_version, oldest + 1);
                return Handled { result: Err(ApiError::gone(msg)), notifications: Vec::new(), revision: None };
            }
            Err(_) => unreachable!("changes_since fails only with Compacted"),
        };
        let id = if narrowing == Narrowing::default() {
            self.watches.open_with_labels(w.kind, w.field.clone(), w.labels.clone())
        } else {
            self.watches.open_narrowed(w.kind, w.labels.clone(), narrowing)
        };
        if !w.resource.is_empty() {
            self.watches.narrow_to_resource(id, w.resource.clone());
        }
        let notifications = past.iter().flat_map(|c| self.watches.fan_out(c)).filter(|(wid, _)| *wid == id).collect();
        Handled { result: Ok(ApiResponse::Watching(id)), notifications, revision: None }
    }

    fn create(&mut self, now: Time, rng: &mut Rng, mut object: Object) -> Result<Written, ApiError> {
        let kind = object.kind();
        {
            let meta = object.meta_mut();
            if kind.namespaced() && meta.namespace.is_empty() {
                meta.namespace = "default".into();
            }
        }
        self.admit_namespace(&object)?;
        {
            let meta = object.meta_mut();
            if meta.name.is_empty() && !meta.generate_name.is_empty() {
                meta.name = format!("{}{}", meta.generate_name, rng.name_suffix(5)).into();
            }
        }
        // The job strategy generates its selector from the UID before validation, so a Job's
        // UID is drawn first (only a Job's: every other kind keeps its order of draws).
        if let Object::Job(job) = &mut object {
            job.metadata.uid = rng.uuid().into();
        }
        defaults::default_object(&mut object);
        if let Object::PersistentVolumeClaim(pvc) = &mut object {
            storage::admit_default_class(&self.etcd, pvc);
        }
        storage::admit_protection(&mut object);
        prepare_for_create(&mut object);
        let mut errs = validation::validate(&object);
        if let Object::CronJob(cj) = &object {
            errs.extend(cronjob::validate_create(cj));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid(kind, &object.meta().name, errs));
        }
        if let Object::Service(svc) = &mut object {
            self.services.allocate(rng, svc, None).map_err(|errs| ApiError::invalid(kind, &svc.metadata.name, errs))?;
        }
        let meta = object.meta_mut();
        if kind != Kind::Job {
            meta.uid = rng.uuid().into();
        }
        meta.creation_timestamp = Some(now);
        meta.resource_version = 0;
        meta.deletion_timestamp = None;
        meta.deletion_grace_period_seconds = None;
        if kind.info().generation {
            meta.generation = 1;
        }
        let name = meta.name.clone();
        let lease = self.lease_for(now, kind);
        self.etcd.create_leased(object, lease).map(Written::Changed).map_err(|_| ApiError::already_exists(kind, &name))
    }

    fn update(&mut self, now: Time, rng: &mut Rng, mut object: Object, status_only: bool) -> Result<Written, ApiError> {
        let kind = object.kind();
        if kind.namespaced() && object.meta().namespace.is_empty() {
            object.meta_mut().namespace = "default".into();
        }
        let key = object.key();
        let current = self.etcd.get(&key).cloned().ok_or_else(|| ApiError::not_found(kind, &key.name))?;
        let expected = Some(object.meta().resource_version).filter(|rv| *rv != 0);
        if expected.is_some_and(|rv| rv != current.meta().resource_version) {
            return Err(ApiError::conflict(kind, &key.name));
        }
        let mut next = if status_only { with_status_of(&current, object) } else { with_spec_of(&current, object) };
        if let (Object::Service(new), Object::Service(old)) = (&mut next, &*current) {
            service::patch_allocated_values(new, old);
        }
        defaults::default_object(&mut next);
        let mut errs = validation::validate(&next);
        errs.extend(immutable_field_errors(&current, &next));
        if !errs.is_empty() {
            return Err(ApiError::invalid(kind, &key.name, errs));
        }
        if let (Object::Service(new), Object::Service(old)) = (&mut next, &*current) {
            self.services.allocate(rng, new, Some(old)).map_err(|errs| ApiError::invalid(kind, &key.name, errs))?;
        }
        {
            let (old, new) = (current.meta(), next.meta_mut());
            new.uid = old.uid.clone();
            new.creation_timestamp = old.creation_timestamp;
            new.deletion_timestamp = old.deletion_timestamp;
            new.deletion_grace_period_seconds = old.deletion_grace_period_seconds;
            new.generation = old.generation;
        }
        if !status_only && spec_changed(&current, &next) && next.meta().generation > 0 {
            next.meta_mut().generation += 1;
        }
        // Compared with the stored resourceVersion put in place (and then taken back) rather than
        // on a copy: cloning every written object just to compare it showed up in profiles.
        let requested_rv = next.meta().resource_version;
        next.meta_mut().resource_version = current.meta().resource_version;
        if *current == next {
            // A no-op update writes nothing and notifies no one, as the API server skips it.
            return Ok(Written::Unchanged(current));
        }
        next.meta_mut().resource_version = requested_rv;
        if deletes_during_update(&current, &next) {
            // The last finalizer of an object being deleted is gone: the update is the delete.
            let deleted = self.etcd.delete(&key, None).map_err(|_| ApiError::not_found(kind, &key.name))?;
            return Ok(Written::Changed(deleted));
        }
        // Only a write that changes something renews an Event's lease, as the storage layer
        // skips a put of the same bytes.
        let lease = self.lease_for(now, kind);
        self.etcd.update_leased(next, None, lease).map(Written::Changed).map_err(|_| ApiError::conflict(kind, &key.name))
    }

    fn delete(&mut self, now: Time, d: DeleteRequest) -> Result<Written, ApiError> {
        let kind = d.key.kind;
        let current = self.etcd.get(&d.key).cloned().ok_or_else(|| ApiError::not_found_named(&d.key.qualified_plural(), &d.key.name))?;
        if let Some(uid) = d.uid.as_deref().filter(|u| *u != current.meta().uid) {
            return Err(ApiError::new(
                Reason::Conflict,
                format!(
                    "Operation cannot be fulfilled on {} {:?}: Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    kind.qualified_plural(),
                    d.key.name,
                    current.meta().uid
                ),
            ));
        }
        // A namespace held by a finalizer is only marked Terminating; one without is deleted
        // below like any object without a grace period.
        if let Some(ns) = current.as_namespace() {
            if let Some(written) = self.delete_namespace(now, ns)? {
                return Ok(written);
            }
        }
        let grace = match current.as_pod() {
            Some(pod) if pod.node_name().is_some() && !pod.is_terminal() => {
                d.grace_period_seconds.or(pod.spec.termination_grace_period_seconds).unwrap_or(defaults::DEFAULT_TERMINATION_GRACE_SECONDS)
            }
            _ => 0,
        };
        if grace > 0 {
            let meta = current.meta();
            let already = meta.deletion_grace_period_seconds;
            if already.is_some_and(|g| g <= grace) {
                // Already terminating with an equal or shorter grace period: nothing to change.
                return Ok(Written::Unchanged(current));
            }
            let mut next = (*current).clone();
            let m = next.meta_mut();
            m.deletion_timestamp = Some(now + Duration::secs(grace as u64));
            m.deletion_grace_period_seconds = Some(grace);
            if m.generation > 0 {
                m.generation += 1;
            }
            return self.etcd.update(next, None).map(Written::Changed).map_err(|_| ApiError::conflict(kind, &d.key.name));
        }
        if !current.meta().finalizers.is_empty() {
            return self.mark_deleted_for_finalizers(now, &current);
        }
        let deleted = self.etcd.delete(&d.key, None).map_err(|_| ApiError::not_found(kind, &d.key.name))?;
        if let Some(svc) = deleted.object.as_service() {
            self.services.release(svc);
        }
        Ok(Written::Changed(deleted))
    }

    /// A delete of an object that still has finalizers (`updateForGracefulDeletionAndFinalizers`):
    /// it is only marked, with a deletion timestamp and a grace period of 0, and goes when an
    /// update removes its last finalizer. Marked already with 0: nothing to change.
    fn mark_deleted_for_finalizers(&mut self, now: Time, current: &Rc<Object>) -> Result<Written, ApiError> {
        let meta = current.meta();
        if meta.deletion_timestamp.is_some() && meta.deletion_grace_period_seconds.is_none_or(|g| g == 0) {
            return Ok(Written::Unchanged(current.clone()));
        }
        let mut next = (**current).clone();
        let m = next.meta_mut();
        m.deletion_timestamp = Some(m.deletion_timestamp.map_or(now, |t| t.min(now)));
        m.deletion_grace_period_seconds = Some(0);
        if m.generation > 0 {
            m.generation += 1;
        }
        let key = current.key();
        self.etcd.update(next, None).map(Written::Changed).map_err(|_| ApiError::conflict(key.kind, &key.name))
    }

    /// `deletecollection` in one namespace: each object deleted as a single delete would be
    /// (pods gracefully); answers with what is still there. One `Handled` carries every
    /// deletion's notifications.
    fn delete_collection(&mut self, now: Time, kind: Kind, namespace: &str) -> Handled {
        let keys: Vec<ObjectKey> = self.etcd.list(kind, Some(namespace)).map(|o| o.key()).collect();
        let mut notifications = Vec::new();
        let mut revision = None;
        for key in keys {
            if let Ok(Written::Changed(change)) = self.delete(now, DeleteRequest::new(key)) {
                let handled = self.committed(change);
                notifications.extend(handled.notifications);
                revision = handled.revision;
            }
        }
        let items: Vec<Rc<Object>> = self.etcd.list(kind, Some(namespace)).cloned().collect();
        Handled { result: Ok(ApiResponse::List { items, resource_version: self.etcd.revision() }), notifications, revision }
    }

    fn bind(&mut self, now: Time, pod_key: &ObjectKey, node: String) -> Result<Written, ApiError> {
        let current = self.etcd.get(pod_key).cloned().ok_or_else(|| ApiError::not_found(Kind::Pod, &pod_key.name))?;
        let Some(pod) = current.as_pod() else { return Err(ApiError::not_found(Kind::Pod, &pod_key.name)) };
        let binding_conflict = |why: String| {
            ApiError::new(Reason::Conflict, format!("Operation cannot be fulfilled on pods/binding {:?}: {why}", pod_key.name))
        };
        if pod.metadata.is_deleting() {
            return Err(binding_conflict(format!("pod {} is being deleted, cannot be assigned to a host", pod_key.name)));
        }
        if let Some(existing) = pod.node_name() {
            return Err(binding_conflict(format!("pod {} is already assigned to node {existing:?}", pod_key.name)));
        }
        let mut next = pod.clone();
        next.spec.node_name = Some(node);
        set_pod_condition(&mut next.status, "PodScheduled", "True", None, None, now);
        self.etcd.update(Object::Pod(next), None).map(Written::Changed).map_err(|_| ApiError::conflict(Kind::Pod, &pod_key.name))
    }
}

/// The outcome of a write: a committed change, or nothing to change.
pub(crate) enum Written {
    Changed(Change),
    Unchanged(Rc<Object>),
}

/// `ShouldDeleteDuringUpdate`: an update that takes the last finalizer off an object being
/// deleted removes it; a pod only once its grace period is over (its kubelet has asked for the
/// final delete, with grace 0).
pub(crate) fn deletes_during_update(current: &Object, next: &Object) -> bool {
    let meta = next.meta();
    let grace_over = next.kind() != Kind::Pod || meta.deletion_grace_period_seconds == Some(0);
    !current.meta().finalizers.is_empty() && meta.finalizers.is_empty() && meta.deletion_timestamp.is_some() && grace_over
}

/// What the API server resets on create (the registry strategies' PrepareForCreate).
fn prepare_for_create(object: &mut Object) {
    match object {
        Object::Namespace(ns) => {
            ns.status = NamespaceStatus { phase: Some("Active".into()), conditions: Vec::new() };
            ns.spec.finalizers = vec![NAMESPACE_FINALIZER.into()];
        }
        Object::Pod(p) => {
            p.status = PodStatus { phase: Some(PodPhase::Pending), ..Default::default() };
        }
        Object::ReplicaSet(rs) => rs.status = Default::default(),
        Object::Deployment(d) => d.status = Default::default(),
        Object::Job(job) => job::prepare_for_create(job),
        Object::DaemonSet(ds) => {
            ds.status = Default::default();
            // The v1 face of the internal `spec.templateGeneration`, which starts at 1.
            ds.metadata.annotations.insert(TEMPLATE_GENERATION_ANNOTATION.into(), "1".into());
        }
        Object::PodDisruptionBudget(pdb) => pdb.status = Default::default(),
        Object::StatefulSet(sts) => sts.status = Default::default(),
        Object::PersistentVolumeClaim(pvc) => {
            pvc.status = PersistentVolumeClaimStatus { phase: Some("Pending".into()), ..Default::default() }
        }
        Object::PersistentVolume(pv) => pv.status = PersistentVolumeStatus { phase: Some("Pending".into()) },
        Object::ReplicationController(rc) => rc.status = Default::default(),
        Object::HorizontalPodAutoscaler(hpa) => hpa.status = Default::default(),
        Object::CronJob(cj) => cj.status = Default::default(),
        // Kinds whose strategy resets nothing.
        _ => {}
    }
}

/// Where apps/v1 keeps a DaemonSet's template generation (the internal
/// `spec.templateGeneration`): the daemon controller labels each pod with it
/// (`pod-template-generation`) and counts a pod carrying the current one as up to date.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// The DaemonSet strategy's `PrepareForUpdate`: the template generation is the server's; it
/// moves by one when the template changes and is otherwise kept, whatever the request carried.
fn bump_template_generation(current: &DaemonSet, next: &mut DaemonSet) {
    let old: i64 = current.metadata.annotations.get(TEMPLATE_GENERATION_ANNOTATION).and_then(|v| v.parse().ok()).unwrap_or(1);
    let generation = if current.spec.template != next.spec.template { old + 1 } else { old };
    next.metadata.annotations.insert(TEMPLATE_GENERATION_ANNOTATION.into(), generation.to_string());
}

/// For a spec update: the request's spec and metadata, the stored status.
fn with_spec_of(current: &Object, mut incoming: Object) -> Object {
    match (&mut incoming, current) {
        (Object::Pod(n), Object::Pod(c)) => n.status = c.status.clone(),
        (Object::Node(n), Object::Node(c)) => n.status = c.status.clone(),
        (Object::ReplicaSet(n), Object::ReplicaSet(c)) => n.status = c.status.clone(),
        (Object::Deployment(n), Object::Deployment(c)) => n.status = c.status.clone(),
        (Object::Job(n), Object::Job(c)) => n.status = c.status.clone(),
        (Object::DaemonSet(n), Object::DaemonSet(c)) => {
            n.status = c.status.clone();
            bump_template_generation(c, n);
        }
        // Only namespaces/finalize changes a namespace's finalizers.
        (Object::Namespace(n), Object::Namespace(c)) => {
            n.status = c.status.clone();
            n.spec.finalizers = c.spec.finalizers.clone();
        }
        (Object::Service(n), Object::Service(c)) => n.status = c.status.clone(),
        (Object::PodDisruptionBudget(n), Object::PodDisruptionBudget(c)) => n.status = c.status.clone(),
        (Object::ReplicationController(n), Object::ReplicationController(c)) => n.status = c.status.clone(),
        (Object::HorizontalPodAutoscaler(n), Object::HorizontalPodAutoscaler(c)) => n.status = c.status.clone(),
        (Object::CronJob(n), Object::CronJob(c)) => n.status = c.status.clone(),
        (Object::StatefulSet(n), Object::StatefulSet(c)) => n.status = c.status.clone(),
        (Object::PersistentVolumeClaim(n), Object::PersistentVolumeClaim(c)) => n.status = c.status.clone(),
        (Object::PersistentVolume(n), Object::PersistentVolume(c)) => n.status = c.status.clone(),
        _ => {}
    }
    incoming
}

/// For a status update: the stored object with the request's status. Built from the stored
/// metadata and spec and the incoming status, so the stored status is never copied only to be
/// replaced (struct literals without `..`: a new top-level field cannot be missed).
fn with_status_of(current: &Object, incoming: Object) -> Object {
    let rv = incoming.meta().resource_version;
    let mut next = match (current, incoming) {
        (Object::Pod(c), Object::Pod(i)) => Object::Pod(Pod { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status }),
        (Object::Node(c), Object::Node(i)) => Object::Node(Node { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status }),
        (Object::Service(c), Object::Service(i)) => {
            Object::Service(Service { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::ReplicaSet(c), Object::ReplicaSet(i)) => {
            Object::ReplicaSet(ReplicaSet { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::Deployment(c), Object::Deployment(i)) => {
            let mut metadata = c.metadata.clone();
            // deploymentStatusStrategy resets only spec and labels: the deployment controller
            // records the revision annotation through the status subresource.
            metadata.annotations = i.metadata.annotations;
            Object::Deployment(Deployment { metadata, spec: c.spec.clone(), status: i.status })
        }
        (Object::Namespace(c), Object::Namespace(i)) => {
            Object::Namespace(Namespace { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::Job(c), Object::Job(i)) => Object::Job(Job { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status }),
        (Object::DaemonSet(c), Object::DaemonSet(i)) => {
            Object::DaemonSet(DaemonSet { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::PodDisruptionBudget(c), Object::PodDisruptionBudget(i)) => {
            Object::PodDisruptionBudget(PodDisruptionBudget { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::ReplicationController(c), Object::ReplicationController(i)) => {
            Object::ReplicationController(ReplicationController { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::HorizontalPodAutoscaler(c), Object::HorizontalPodAutoscaler(i)) => {
            Object::HorizontalPodAutoscaler(HorizontalPodAutoscaler {
                metadata: c.metadata.clone(),
                spec: c.spec.clone(),
                status: i.status,
            })
        }
        (Object::CronJob(c), Object::CronJob(i)) => {
            Object::CronJob(CronJob { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::StatefulSet(c), Object::StatefulSet(i)) => {
            Object::StatefulSet(StatefulSet { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::PersistentVolumeClaim(c), Object::PersistentVolumeClaim(i)) => {
            Object::PersistentVolumeClaim(PersistentVolumeClaim { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (Object::PersistentVolume(c), Object::PersistentVolume(i)) => {
            Object::PersistentVolume(PersistentVolume { metadata: c.metadata.clone(), spec: c.spec.clone(), status: i.status })
        }
        (_, i) => i,
    };
    next.meta_mut().resource_version = rv;
    next
}

/// `ValidateConfigMapUpdate` / `ValidateSecretUpdate`: an immutable object keeps its data (and
/// stays immutable); a Secret never changes type. `None` for other kinds.
fn immutable_data_errors(old: &Object, new: &Object) -> Option<Vec<FieldError>> {
    const WHY: &str = "field is immutable when `immutable` is set";
    let mut errs = Vec::new();
    let (was_immutable, still, same_data) = match (old, new) {
        (Object::ConfigMap(a), Object::ConfigMap(b)) => {
            (a.immutable == Some(true), b.immutable == Some(true), a.data == b.data && a.binary_data == b.binary_data)
        }
        (Object::Secret(a), Object::Secret(b)) => {
            if a.type_ != b.type_ {
                errs.push(FieldError::invalid("type", format!("{:?}", b.type_), "field is immutable"));
            }
            (a.immutable == Some(true), b.immutable == Some(true), a.data == b.data)
        }
        _ => return None,
    };
    if was_immutable && !still {
        errs.push(FieldError::forbidden("immutable", WHY));
    }
    if was_immutable && !same_data {
        errs.push(FieldError::forbidden("data", WHY));
    }
    Some(errs)
}

fn spec_changed(old: &Object, new: &Object) -> bool {
    match (old, new) {
        (Object::Deployment(a), Object::Deployment(b)) => a.spec != b.spec,
        (Object::ReplicaSet(a), Object::ReplicaSet(b)) => a.spec != b.spec,
        (Object::Job(a), Object::Job(b)) => a.spec != b.spec,
        (Object::DaemonSet(a), Object::DaemonSet(b)) => a.spec != b.spec,
        (Object::StatefulSet(a), Object::StatefulSet(b)) => a.spec != b.spec,
        (Object::Pod(a), Object::Pod(b)) => a.spec != b.spec,
        (Object::PodDisruptionBudget(a), Object::PodDisruptionBudget(b)) => a.spec != b.spec,
        (Object::ReplicationController(a), Object::ReplicationController(b)) => a.spec != b.spec,
        (Object::HorizontalPodAutoscaler(a), Object::HorizontalPodAutoscaler(b)) => a.spec != b.spec,
        (Object::CronJob(a), Object::CronJob(b)) => a.spec != b.spec,
        (Object::EndpointSlice(a), Object::EndpointSlice(b)) => {
            (&a.address_type, &a.endpoints, &a.ports) != (&b.address_type, &b.endpoints, &b.ports)
        }
        _ => false,
    }
}

fn immutable_field_errors(old: &Object, new: &Object) -> Vec<FieldError> {
    if let Some(errs) = immutable_data_errors(old, new) {
        return errs;
    }
    let selector_changed = match (old, new) {
        (Object::Deployment(a), Object::Deployment(b)) => a.spec.selector != b.spec.selector,
        (Object::ReplicaSet(a), Object::ReplicaSet(b)) => a.spec.selector != b.spec.selector,
        (Object::DaemonSet(a), Object::DaemonSet(b)) => a.spec.selector != b.spec.selector,
        _ => false,
    };
    if let (Object::Job(a), Object::Job(b)) = (old, new) {
        return job::immutable_errors(a, b);
    }
    if let (Object::StatefulSet(a), Object::StatefulSet(b)) = (old, new) {
        return stateful_set_update_errors(a, b);
    }
    if let (Object::PersistentVolumeClaim(a), Object::PersistentVolumeClaim(b)) = (old, new) {
        return storage::claim_update_errors(a, b);
    }
    let mut errs = Vec::new();
    if let (Object::Service(a), Object::Service(b)) = (old, new) {
        let had = a.spec.cluster_ip.as_deref().filter(|ip| !ip.is_empty());
        if a.type_() != "ExternalName" && b.type_() != "ExternalName" && had.is_some() && b.spec.cluster_ip.as_deref() != had {
            let ip = b.spec.cluster_ip.clone().unwrap_or_default();
            errs.push(FieldError::invalid("spec.clusterIP", format!("{ip:?}"), "field is immutable"));
        }
    }
    if selector_changed {
        let sel = match new {
            Object::Deployment(d) => d.spec.selector.to_query(),
            Object::ReplicaSet(r) => r.spec.selector.to_query(),
            Object::DaemonSet(ds) => ds.spec.selector.to_query(),
            _ => String::new(),
        };
        errs.push(FieldError::invalid("spec.selector", format!("{{{sel}}}"), "field is immutable"));
    }
    // An unchanged spec (every status write) needs no copy to know nothing forbidden changed.
    if let (Object::Pod(a), Object::Pod(b)) = (old, new) {
        if a.spec == b.spec {
            return errs;
        }
        let mut a_spec = a.spec.clone();
        a_spec.containers.iter_mut().zip(b.spec.containers.iter()).for_each(|(x, y)| x.image = y.image.clone());
        a_spec.tolerations = b.spec.tolerations.clone();
        if a_spec != b.spec {
            errs.push(FieldError::forbidden("spec", "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"));
        }
    }
    errs
}

/// `ValidateStatefulSetUpdate`: a StatefulSet's identity (selector, service name, pod
/// management policy) is fixed at create; only the fields named in the message may change.
fn stateful_set_update_errors(old: &StatefulSet, new: &StatefulSet) -> Vec<FieldError> {
    let (a, b) = (&old.spec, &new.spec);
    let identity = |s: &StatefulSetSpec| {
        (s.selector.clone(), s.service_name.clone(), s.pod_management_policy.clone(), s.volume_claim_templates.clone())
    };
    if identity(a) == identity(b) {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    )]
}

/// `podutil.UpdatePodCondition`: sets a condition, moving its transition time only on a change.
pub fn set_pod_condition(status: &mut PodStatus, type_: &str, value: &str, reason: Option<&str>, message: Option<&str>, now: Time) -> bool {
    let fresh = PodCondition {
        type_: type_.into(),
        status: value.into(),
        last_transition_time: Some(now),
        reason: reason.map(Name::from),
        message: message.map(Name::from),
        last_probe_time: None,
    };
    match status.conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(existing) if existing.status == value => {
            let changed = existing.reason != fresh.reason || existing.message != fresh.message;
            existing.reason = fresh.reason;
            existing.message = fresh.message;
            changed
        }
        Some(existing) => {
            *existing = fresh;
            true
        }
        None => {
            // Exactly one more: a just-bound pod's only condition would otherwise take room for four.
            status.conditions.reserve_exact(1);
            status.conditions.push(fresh);
            true
        }
    }
}

/// Whether a watched change belongs to the custom resource a watch asked for (any, if none).
fn in_resource(object: &Object, resource: &str) -> bool {
    resource.is_empty() || object.as_custom_object().is_some_and(|o| o.resource() == resource)
}
