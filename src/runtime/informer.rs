//! A reflector and its cache (client-go tools/cache), as an explicit state machine.
//!
//! It LISTs, then WATCHes from the list's resourceVersion, applying each notification to a local
//! cache and turning it into a `Delta` for the component's handlers. When the watch ends or the
//! revision is gone (410), it re-lists after a back-off of 800 ms doubling to 30 s, and the
//! re-list is diffed against the cache so handlers see what changed while it was not watching —
//! which is why a level-triggered controller recovers from missed events.

use super::fasthash::FastMap;
use super::table::ObjectTable;
use super::{Ctx, RequestId};
use crate::api::{ApiRequest, ApiResponse, ApiResult, FieldFilter, ListRequest, WatchEvent, WatchId, WatchRequest};
use crate::model::{Duration, Kind, Object, ObjectKey, Time};
use crate::store::ChangeType;
use std::collections::BTreeSet;
use std::rc::Rc;

const INITIAL_BACKOFF: Duration = Duration::millis(800);
const MAX_BACKOFF: Duration = Duration::secs(30);

/// What a handler hears (DeltaFIFO's Added / Updated / Deleted; a re-list yields the same).
#[derive(Clone, Debug)]
pub enum Delta {
    Added(Rc<Object>),
    Updated { old: Rc<Object>, new: Rc<Object> },
    Deleted(Rc<Object>),
}

impl Delta {
    pub fn object(&self) -> &Rc<Object> {
        match self {
            Delta::Added(o) | Delta::Deleted(o) => o,
            Delta::Updated { new, .. } => new,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ReflectorState {
    /// Not started.
    Stopped,
    Listing(RequestId),
    OpeningWatch {
        request: RequestId,
        resource_version: u64,
    },
    Watching {
        watch: WatchId,
        resource_version: u64,
    },
    /// Waiting before trying again: re-watching from `resume` if set (the watch merely ended),
    /// else re-listing (the list failed, or the revision was gone).
    BackingOff {
        until: Time,
        resume: Option<u64>,
    },
}

#[derive(Debug)]
pub struct Informer {
    pub kind: Kind,
    pub field: FieldFilter,
    state: ReflectorState,
    backoff: Duration,
    /// Ordered for lists, hashed for the lookup every watch notification makes.
    cache: ObjectTable,
    /// Objects by their controller owner's UID (ReplicaSets' pods, Deployments' ReplicaSets), as
    /// the cache's places in key order: a status write replaces the object at its place and
    /// leaves the indexes alone; only a new key, a removal or a change of owner or node
    /// touches them.
    by_owner: FastMap<String, Vec<usize>>,
    /// Pods by node name, the same way.
    by_node: FastMap<String, Vec<usize>>,
    /// Whether the first list has been applied (`HasSynced`).
    synced: bool,
}

impl Informer {
    pub fn new(kind: Kind, field: FieldFilter) -> Self {
        Informer {
            kind,
            field,
            state: ReflectorState::Stopped,
            backoff: INITIAL_BACKOFF,
            cache: ObjectTable::default(),
            by_owner: FastMap::default(),
            by_node: FastMap::default(),
            synced: false,
        }
    }

    /// An informer whose cache already holds `objects`, as if synced (for tests and tools that
    /// drive a controller without a simulation).
    pub fn from_objects(kind: Kind, objects: impl IntoIterator<Item = Object>) -> Self {
        let mut informer = Informer::new(kind, FieldFilter::All);
        for object in objects {
            informer.insert(object.key(), Rc::new(object));
        }
        informer.synced = true;
        informer
    }

    /// Applies a change directly to the cache, as a watch event would (for tests and tools).
    pub fn apply(&mut self, type_: ChangeType, object: Rc<Object>) -> Delta {
        let key = object.key();
        match type_ {
            ChangeType::Deleted => {
                self.remove(&key);
                Delta::Deleted(object)
            }
            _ => match self.insert(key, object.clone()) {
                Some(old) => Delta::Updated { old, new: object },
                None => Delta::Added(object),
            },
        }
    }

    /// Starts from nothing: an empty cache and a fresh LIST.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.cache.clear();
        self.by_owner.clear();
        self.by_node.clear();
        self.synced = false;
        self.backoff = INITIAL_BACKOFF;
        self.list(ctx);
    }

    fn list(&mut self, ctx: &mut Ctx) {
        let request = ListRequest { kind: Some(self.kind), field: self.field.clone(), ..Default::default() };
        self.state = ReflectorState::Listing(ctx.send(ApiRequest::List(request)));
    }

    pub fn state(&self) -> &ReflectorState {
        &self.state
    }
    /// Whether it is connected and streaming; anything else is work still to do.
    pub fn is_watching(&self) -> bool {
        matches!(self.state, ReflectorState::Watching { .. })
    }
    pub fn has_synced(&self) -> bool {
        self.synced
    }
    pub fn watch_id(&self) -> Option<WatchId> {
        match self.state {
            ReflectorState::Watching { watch, .. } => Some(watch),
            _ => None,
        }
    }
    pub fn owns_request(&self, id: RequestId) -> bool {
        matches!(self.state, ReflectorState::Listing(r) | ReflectorState::OpeningWatch { request: r, .. } if r == id)
    }
    pub fn owns_watch(&self, id: WatchId) -> bool {
        self.watch_id() == Some(id)
    }

    /// The answer to this informer's LIST or WATCH request.
    pub fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) -> Vec<Delta> {
        match (&self.state, result) {
            (ReflectorState::Listing(r), Ok(ApiResponse::List { items, resource_version })) if *r == id => {
                let deltas = self.replace(items);
                self.synced = true;
                let request = WatchRequest { kind: self.kind, field: self.field.clone(), resource_version, labels: None };
                self.state = ReflectorState::OpeningWatch { request: ctx.send(ApiRequest::Watch(request)), resource_version };
                deltas
            }
            (ReflectorState::OpeningWatch { request, resource_version }, Ok(ApiResponse::Watching(watch))) if *request == id => {
                self.state = ReflectorState::Watching { watch, resource_version: *resource_version };
                self.backoff = INITIAL_BACKOFF;
                Vec::new()
            }
            // 410 Gone: the revision was compacted away; only a fresh list can resume.
            (ReflectorState::OpeningWatch { request, .. }, Err(e)) if *request == id && e.reason == crate::api::Reason::Gone => {
                self.list(ctx);
                Vec::new()
            }
            (ReflectorState::Listing(r) | ReflectorState::OpeningWatch { request: r, .. }, _) if *r == id => {
                let resume = match &self.state {
                    ReflectorState::OpeningWatch { resource_version, .. } => Some(*resource_version),
                    _ => None,
                };
                self.back_off(ctx.now, resume);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn back_off(&mut self, now: Time, resume: Option<u64>) {
        self.state = ReflectorState::BackingOff { until: now + self.backoff, resume };
        self.backoff = Duration((self.backoff.0 * 2).min(MAX_BACKOFF.0));
    }

    /// A notification on this informer's watch.
    pub fn handle_watch_event(&mut self, event: WatchEvent) -> Option<Delta> {
        let ReflectorState::Watching { resource_version, .. } = &mut self.state else { return None };
        *resource_version = (*resource_version).max(event.object.meta().resource_version);
        let key = event.object.key();
        match event.type_ {
            ChangeType::Added | ChangeType::Modified => Some(match self.insert(key, event.object.clone()) {
                Some(old) => Delta::Updated { old, new: event.object },
                None => Delta::Added(event.object),
            }),
            ChangeType::Deleted => {
                self.remove(&key);
                Some(Delta::Deleted(event.object))
            }
        }
    }

    /// The watch ended: after the back-off, watch again from the last revision seen.
    pub fn handle_watch_closed(&mut self, now: Time, watch: WatchId) {
        if let ReflectorState::Watching { watch: w, resource_version } = self.state {
            if w == watch {
                self.back_off(now, Some(resource_version));
            }
        }
    }

    /// Retries once a back-off has passed.
    pub fn poll(&mut self, ctx: &mut Ctx) {
        let ReflectorState::BackingOff { until, resume } = self.state else { return };
        if until > ctx.now {
            return;
        }
        match resume {
            Some(resource_version) => {
                let request = WatchRequest { kind: self.kind, field: self.field.clone(), resource_version, labels: None };
                self.state = ReflectorState::OpeningWatch { request: ctx.send(ApiRequest::Watch(request)), resource_version };
            }
            None => self.list(ctx),
        }
    }

    pub fn next_wakeup(&self) -> Option<Time> {
        match self.state {
            ReflectorState::BackingOff { until, .. } => Some(until),
            _ => None,
        }
    }

    /// Applies a LIST: what is new is Added, what changed Updated, what vanished Deleted.
    fn replace(&mut self, items: Vec<Rc<Object>>) -> Vec<Delta> {
        let mut deltas = Vec::new();
        let mut fresh: BTreeSet<ObjectKey> = BTreeSet::new();
        for item in items {
            let key = item.key();
            fresh.insert(key.clone());
            match self.insert(key, item.clone()) {
                Some(old) if old.meta().resource_version == item.meta().resource_version => {}
                Some(old) => deltas.push(Delta::Updated { old, new: item }),
                None => deltas.push(Delta::Added(item)),
            }
        }
        let gone: Vec<ObjectKey> = self.cache.keys().filter(|k| !fresh.contains(*k)).cloned().collect();
        for key in gone {
            if let Some(old) = self.remove(&key) {
                deltas.push(Delta::Deleted(old));
            }
        }
        deltas
    }

    fn insert(&mut self, key: ObjectKey, object: Rc<Object>) -> Option<Rc<Object>> {
        let (place, old) = self.cache.upsert_at(&key, object.clone());
        let owner = owner_of(&object);
        let node = node_of(&object);
        if let Some(old) = &old {
            // Most updates (status writes) keep the owner and the node: the indexes hold the
            // cache's place, which now holds the new object, so they need no change at all.
            if owner_of(old) == owner && node_of(old) == node {
                return Some(old.clone());
            }
            self.unindex(place, &key, old);
        }
        let cache = &self.cache;
        match self.by_owner.get_mut(owner) {
            Some(places) => add_place(cache, places, place, &key),
            None => add_place(cache, self.by_owner.entry(owner.to_string()).or_default(), place, &key),
        }
        if let Some(node) = node {
            match self.by_node.get_mut(node) {
                Some(places) => add_place(cache, places, place, &key),
                None => add_place(cache, self.by_node.entry(node.to_string()).or_default(), place, &key),
            }
        }
        old
    }

    fn remove(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        let place = self.cache.place(key)?;
        let old = self.cache.get(key)?.clone();
        self.unindex(place, key, &old);
        self.cache.remove(key)
    }

    /// Takes `place` (holding `key`, last indexed as `old`) out of the owner and node indexes.
    fn unindex(&mut self, place: usize, key: &ObjectKey, old: &Object) {
        let cache = &self.cache;
        if let Some(places) = self.by_owner.get_mut(owner_of(old)) {
            remove_place(cache, places, place, key);
        }
        if let Some(places) = node_of(old).and_then(|node| self.by_node.get_mut(node)) {
            remove_place(cache, places, place, key);
        }
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.cache.get(key)
    }
    pub fn len(&self) -> usize {
        self.cache.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }
    /// Every cached object, in key order.
    pub fn iter(&self) -> impl Iterator<Item = &Rc<Object>> {
        self.cache.values()
    }
    /// Cached objects in one namespace, in key order.
    pub fn in_namespace<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        let start = ObjectKey { kind: self.kind, namespace: namespace.into(), name: Default::default() };
        self.cache.range_from(&start).take_while(move |(k, _)| k.namespace == namespace).map(|(_, v)| v)
    }
    /// Objects whose controller owner has this UID, in key order; `""` gives the orphans.
    pub fn owned_by<'a>(&'a self, owner_uid: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.indexed(self.by_owner.get(owner_uid))
    }
    /// Pods bound to this node, in key order.
    pub fn on_node<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.indexed(self.by_node.get(node))
    }
    fn indexed<'a>(&'a self, places: Option<&'a Vec<usize>>) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        places.into_iter().flatten().filter_map(|&p| self.cache.at(p)).map(|(_, o)| o)
    }
}

/// The controller owner's UID (`""` for none), the key of the owner index.
fn owner_of(object: &Object) -> &str {
    object.meta().controller_ref().map(|r| r.uid.as_str()).unwrap_or_default()
}

fn node_of(object: &Object) -> Option<&str> {
    object.as_pod().and_then(|p| p.node_name())
}

/// Where `key` is or belongs in an index's places, which are kept in key order.
fn position(cache: &ObjectTable, places: &[usize], key: &ObjectKey) -> Result<usize, usize> {
    places.binary_search_by(|&p| cache.at(p).map_or(std::cmp::Ordering::Less, |(k, _)| k.cmp(key)))
}

fn add_place(cache: &ObjectTable, places: &mut Vec<usize>, place: usize, key: &ObjectKey) {
    if let Err(at) = position(cache, places, key) {
        places.insert(at, place);
    }
}

fn remove_place(cache: &ObjectTable, places: &mut Vec<usize>, place: usize, key: &ObjectKey) {
    if let Ok(at) = position(cache, places, key) {
        if places[at] == place {
            places.remove(at);
        }
    }
}
