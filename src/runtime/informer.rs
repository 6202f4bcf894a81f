//! A reflector and its cache (client-go tools/cache), as an explicit state machine.
//!
//! It LISTs, then WATCHes from the list's resourceVersion, applying each notification to a local
//! cache and turning it into a `Delta` for the component's handlers. When the watch ends or the
//! revision is gone (410), it re-lists after a back-off of 800 ms doubling to 30 s, and the
//! re-list is diffed against the cache so handlers see what changed while it was not watching —
//! which is why a level-triggered controller recovers from missed events.
//!
//! The cache itself is a `store::Writer` the reflector alone writes; readers see it as a
//! `store::Store` (an `Informer` derefs to its store).

use super::store::{Store, Writer, STANDARD_INDEXERS};
use super::{Ctx, RequestId};
use crate::api::{ApiRequest, ApiResponse, ApiResult, FieldFilter, ListRequest, WatchEvent, WatchId, WatchRequest};
use crate::model::{Duration, Kind, Object, Time};
use crate::store::ChangeType;
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
    /// For `Kind::CustomObject`: the one custom resource listed and watched (a
    /// CustomResourceDefinition's name), as an operator's informer of its own resource; empty
    /// for every custom resource, and for the built-in kinds.
    pub resource: crate::model::Name,
    pub field: FieldFilter,
    state: ReflectorState,
    backoff: Duration,
    /// The cache, with the owner and node indexes.
    writer: Writer,
    /// Whether the first list has been applied (`HasSynced`).
    synced: bool,
    /// Whether the cache keeps what was listed and watched (see `keep_cache_from_next_list`).
    keeps: bool,
    keep_next: bool,
}

impl Informer {
    pub fn new(kind: Kind, field: FieldFilter) -> Self {
        Informer {
            kind,
            resource: Default::default(),
            field,
            state: ReflectorState::Stopped,
            backoff: INITIAL_BACKOFF,
            writer: Writer::new(kind, STANDARD_INDEXERS),
            synced: false,
            keeps: true,
            keep_next: true,
        }
    }

    /// An informer of one custom resource's objects (its definition's name).
    pub fn for_resource(resource: &str, field: FieldFilter) -> Self {
        Informer { resource: resource.into(), ..Informer::new(Kind::CustomObject, field) }
    }

    /// An informer whose cache keeps only these indexes (its reader looks up by nothing else).
    pub fn with_indexers(kind: Kind, field: FieldFilter, indexers: &[super::store::Indexer]) -> Self {
        Informer { writer: Writer::new(kind, indexers), ..Informer::new(kind, field) }
    }

    /// Whether the cache from the next list on keeps what it lists and watches. A client that
    /// reads the same objects from a cache shared with others (kube-proxy past teaching scale)
    /// keeps nothing: the reflector still lists, watches and re-lists, and reports having synced,
    /// but after a watch ends it lists again rather than watching on from a revision its empty
    /// cache does not hold.
    pub fn keep_cache_from_next_list(&mut self, keep: bool) {
        self.keep_next = keep;
    }

    pub fn keeps_cache(&self) -> bool {
        self.keeps
    }

    /// Ends the watch, if any, and lists again now (a cache that kept nothing, about to be read).
    pub fn relist_now(&mut self, ctx: &mut Ctx) {
        if let Some(watch) = self.watch_id() {
            ctx.close_watch(watch);
        }
        self.list(ctx);
    }

    /// An informer whose cache already holds `objects`, as if synced (for tests and tools that
    /// drive a controller without a simulation).
    pub fn from_objects(kind: Kind, objects: impl IntoIterator<Item = Object>) -> Self {
        let mut informer = Informer::new(kind, FieldFilter::All);
        for object in objects {
            informer.writer.insert(object.key(), Rc::new(object));
        }
        informer.synced = true;
        informer
    }

    /// Applies a change directly to the cache, as a watch event would (for tests and tools).
    pub fn apply(&mut self, type_: ChangeType, object: Rc<Object>) -> Delta {
        self.writer.apply(type_, object)
    }

    /// The cache, read-only.
    pub fn store(&self) -> &Store {
        self.writer.as_reader()
    }

    /// Starts from nothing: an empty cache and a fresh LIST.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.writer.clear();
        self.synced = false;
        self.backoff = INITIAL_BACKOFF;
        self.list(ctx);
    }

    fn list(&mut self, ctx: &mut Ctx) {
        self.keeps = self.keep_next;
        let request =
            ListRequest { kind: Some(self.kind), resource: self.resource.clone(), field: self.field.clone(), ..Default::default() };
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
                let deltas = if self.keeps {
                    self.writer.replace(items)
                } else {
                    self.writer.clear();
                    Vec::new()
                };
                self.synced = true;
                let request = WatchRequest {
                    kind: self.kind,
                    resource: self.resource.clone(),
                    field: self.field.clone(),
                    resource_version,
                    labels: None,
                };
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
        let resume = resume.filter(|_| self.keeps);
        self.state = ReflectorState::BackingOff { until: now + self.backoff, resume };
        self.backoff = Duration((self.backoff.0 * 2).min(MAX_BACKOFF.0));
    }

    /// A notification on this informer's watch.
    pub fn handle_watch_event(&mut self, event: WatchEvent) -> Option<Delta> {
        let ReflectorState::Watching { resource_version, .. } = &mut self.state else { return None };
        *resource_version = (*resource_version).max(event.object.meta().resource_version);
        self.keeps.then(|| self.writer.apply(event.type_, event.object))
    }

    /// The watch ended: after the back-off, watch again from the last revision seen.
    pub fn handle_watch_closed(&mut self, now: Time, watch: WatchId) {
        if let ReflectorState::Watching { watch: w, resource_version } = self.state {
            if w == watch {
                self.back_off(now, Some(resource_version));
            }
        }
    }

    /// The watch ended, and the cache is not to be trusted past its last list because the
    /// watch's notifications were read elsewhere (kube-proxy's shared cache): after the back-off,
    /// list again instead of watching on from the last revision this cache saw.
    pub fn handle_watch_closed_relist(&mut self, now: Time, watch: WatchId) {
        if self.owns_watch(watch) {
            self.back_off(now, None);
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
                let request = WatchRequest {
                    kind: self.kind,
                    resource: self.resource.clone(),
                    field: self.field.clone(),
                    resource_version,
                    labels: None,
                };
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
}

/// Readers see the cache: `informer.get(key)`, `informer.owned_by(uid)`.
impl std::ops::Deref for Informer {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.writer.as_reader()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectMeta, Service};
    use crate::rng::Rng;
    use crate::runtime::Effect;

    fn service(name: &str, resource_version: u64) -> Rc<Object> {
        let metadata = ObjectMeta { name: name.into(), namespace: "default".into(), resource_version, ..Default::default() };
        Rc::new(Object::Service(Service { metadata, ..Default::default() }))
    }

    /// Runs `f` with a fresh context and returns the requests it sent.
    fn call(now: Time, f: impl FnOnce(&mut Ctx)) -> Vec<(RequestId, ApiRequest)> {
        let (mut rng, mut next) = (Rng::new(1), 0);
        let mut ctx = Ctx::new(now, &mut rng, &mut next);
        f(&mut ctx);
        ctx.into_effects()
            .into_iter()
            .filter_map(|e| match e {
                Effect::Request { id, request } => Some((id, *request)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_informer_that_keeps_no_cache_still_syncs_and_lists_again_after_its_watch_ends() {
        let mut informer = Informer::new(Kind::Service, FieldFilter::All);
        informer.keep_cache_from_next_list(false);
        let sent = call(Time(0), |ctx| informer.start(ctx));
        let (list, _) = sent[0];
        let items = vec![service("web", 5)];
        call(Time(2), |ctx| assert!(informer.handle_response(ctx, list, Ok(ApiResponse::List { items, resource_version: 5 })).is_empty()));
        assert!(informer.has_synced() && informer.is_empty() && !informer.keeps_cache());
        let ReflectorState::OpeningWatch { request, .. } = *informer.state() else { panic!("{:?}", informer.state()) };
        call(Time(3), |ctx| {
            informer.handle_response(ctx, request, Ok(ApiResponse::Watching(WatchId(9))));
        });
        let event = WatchEvent { type_: ChangeType::Added, object: service("api", 7) };
        assert!(informer.handle_watch_event(event).is_none(), "nothing kept, nothing to tell");
        assert!(informer.is_empty());

        // The watch ends: it lists again (its empty cache holds no revision to watch on from),
        // keeping what it lists if it is told to by then.
        informer.keep_cache_from_next_list(true);
        informer.handle_watch_closed(Time(10), WatchId(9));
        assert_eq!(informer.state(), &ReflectorState::BackingOff { until: Time(810), resume: None });
        let sent = call(Time(810), |ctx| informer.poll(ctx));
        assert!(matches!(sent[..], [(_, ApiRequest::List(_))]), "{sent:?}");
        let list = sent[0].0;
        call(Time(812), |ctx| {
            informer.handle_response(ctx, list, Ok(ApiResponse::List { items: vec![service("web", 5)], resource_version: 8 }));
        });
        assert!(informer.keeps_cache() && informer.len() == 1);
    }
}
