//! The event recorder (client-go tools/record): turns "this happened" into Event objects.
//!
//! Events go through the API server like any other write. Repeats of the same event (same object,
//! reason, message and type) update one Event's count and lastTimestamp instead of creating a
//! new one, as the recorder's EventCorrelator does. Like client-go's `eventLogger`, it remembers
//! per event only what a repeat cannot rebuild from itself — the count, the first timestamp and
//! the name — not the whole Event: a kubelet or the scheduler remembers thousands of them.
//!
//! kube-apiserver deletes an Event an hour after its last write (`--event-ttl`), while the
//! recorder may remember it longer. So, as client-go's `recordToSink` does, a repeat whose update
//! is answered 404 is created again, with its count: the recorder keeps each repeat it sent
//! until it is answered.

use super::fasthash::FastMap;
use super::{Ctx, RequestId};
use crate::api::{ApiRequest, ApiResult, Reason};
use crate::model::*;
use std::collections::VecDeque;
use std::rc::Rc;

/// How many distinct events the recorder remembers for aggregation (client-go's
/// `maxLruCacheEntries`); older ones are forgotten, and a repeat of one of them starts a new Event.
pub const MAX_REMEMBERED_EVENTS: usize = 4096;

/// What makes two events the same event: the involved object, type, reason and message, in one
/// string (each part length-prefixed, so no two different tuples give the same text).
type EventIdentity = Rc<str>;

/// What the recorder keeps of an Event it wrote (client-go's `eventLog`).
#[derive(Clone, Copy, Debug)]
struct Remembered {
    count: i32,
    first_timestamp: Time,
    /// The suffix of the Event's name (`<object>.<nanos in hex>`).
    nanos: u64,
}

/// One thing worth telling people, before it becomes an Event object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    pub involved: ObjectReference,
    /// `Normal` or `Warning`.
    pub type_: &'static str,
    /// Already the Event's own text, so writing the Event copies neither.
    pub reason: Name,
    pub message: Name,
}

impl EventSpec {
    pub fn normal(involved: ObjectReference, reason: &str, message: impl Into<Name>) -> Self {
        EventSpec { involved, type_: "Normal", reason: reason.into(), message: message.into() }
    }
    pub fn warning(involved: ObjectReference, reason: &str, message: impl Into<Name>) -> Self {
        EventSpec { involved, type_: "Warning", reason: reason.into(), message: message.into() }
    }
    /// A sync's success event once the write is answered: `{name}` in the message becomes the
    /// name the server gave the object (a `generateName` create learns it only then).
    pub fn naming(mut self, name: &str) -> Self {
        if self.message.contains("{name}") {
            self.message = self.message.replace("{name}", name).into();
        }
        self
    }
    /// A sync's failure event once the write is refused: the error appended to the message.
    pub fn failing_with(mut self, error: &str) -> Self {
        self.message = [&*self.message, error].concat().into();
        self
    }
}

/// An `ObjectReference` to an object, as events' `involvedObject` carries it.
pub fn reference_to(object: &Object) -> ObjectReference {
    let m = object.meta();
    ObjectReference {
        kind: object.kind().as_str().into(),
        namespace: m.namespace.clone(),
        name: m.name.clone(),
        uid: m.uid.clone(),
        api_version: object.kind().api_version().into(),
        field_path: Default::default(),
    }
}

#[derive(Debug, Default)]
pub struct EventRecorder {
    component: Name,
    host: Name,
    source: Shared<EventSource>,
    seq: u64,
    /// Events already written, by what makes them the same event. Only looked up, never
    /// iterated (`order` keeps the age), so a hash map.
    seen: FastMap<EventIdentity, Remembered>,
    /// Remembered identities, oldest first, to forget beyond `MAX_REMEMBERED_EVENTS` (shared
    /// with `seen`, so remembering one costs no second copy of its text).
    order: VecDeque<EventIdentity>,
    /// Repeats sent and not yet answered, to create again if the Event has expired meanwhile.
    /// Only looked up, so hashed.
    repeats: FastMap<RequestId, Event>,
}

impl EventRecorder {
    pub fn new(component: &str, host: &str) -> Self {
        let source = EventSource { component: component.into(), host: host.into() }.into();
        EventRecorder { component: component.into(), host: host.into(), source, ..Default::default() }
    }

    /// The write that records `spec` at `now`: a create, or an update of a repeated event.
    pub fn record(&mut self, spec: EventSpec, now: Time) -> ApiRequest {
        let key = identity(&spec);
        if let Some(previous) = self.seen.get_mut(key.as_str()) {
            previous.count += 1;
            let previous = *previous;
            return ApiRequest::Update(Object::Event(self.event(spec, previous, now)));
        }
        self.seq += 1;
        // client-go names events `<object>.<unix nanos in hex>`; the sequence keeps two events
        // in the same simulated millisecond apart.
        let nanos = (EPOCH_UNIX_SECS * 1000 + now.0) * 1_000_000 + self.seq % 1_000_000;
        let remembered = Remembered { count: 1, first_timestamp: now, nanos };
        if self.order.len() == MAX_REMEMBERED_EVENTS {
            if let Some(oldest) = self.order.pop_front() {
                self.seen.remove(&oldest);
            }
        }
        let key: EventIdentity = key.into();
        self.order.push_back(key.clone());
        self.seen.insert(key, remembered);
        ApiRequest::Create(Object::Event(self.event(spec, remembered, now)))
    }

    /// Records `spec` and sends the write through `ctx`.
    pub fn send(&mut self, spec: EventSpec, ctx: &mut Ctx) {
        let request = self.record(spec, ctx.now);
        let repeat = match &request {
            ApiRequest::Update(Object::Event(e)) => Some(e.clone()),
            _ => None,
        };
        let id = ctx.send(request);
        if let Some(event) = repeat {
            self.repeats.insert(id, event);
        }
    }

    /// Whether `id` is a repeat this recorder sent and is waiting to hear about.
    pub fn awaits(&self, id: RequestId) -> bool {
        !self.repeats.is_empty() && self.repeats.contains_key(&id)
    }

    /// The answer to a repeat: if its Event is gone (expired by `--event-ttl`), the Event is
    /// created again, count and first timestamp kept, as `recordToSink` does on a 404.
    pub fn answered(&mut self, id: RequestId, result: &ApiResult, ctx: &mut Ctx) {
        let Some(mut event) = self.repeats.remove(&id) else { return };
        if result.as_ref().is_err_and(|e| e.reason == Reason::NotFound) {
            event.metadata.resource_version = 0;
            ctx.send(ApiRequest::Create(Object::Event(event)));
        }
    }

    /// The Event as written at `now`, its count and first timestamp as remembered.
    fn event(&self, spec: EventSpec, remembered: Remembered, now: Time) -> Event {
        Event {
            metadata: ObjectMeta {
                name: event_name(&spec.involved.name, remembered.nanos).into(),
                namespace: spec.involved.namespace.clone(),
                ..Default::default()
            },
            involved_object: spec.involved,
            reason: spec.reason,
            message: spec.message,
            source: self.source.clone(),
            first_timestamp: Some(remembered.first_timestamp),
            last_timestamp: Some(now),
            count: remembered.count,
            type_: spec.type_.into(),
            reporting_component: self.component.clone(),
            reporting_instance: self.host.clone(),
            action: Name::default(),
            event_time: None,
        }
    }

    /// Forgets what it has written (the process restarted).
    pub fn clear(&mut self) {
        self.seen.clear();
        self.order.clear();
        self.repeats.clear();
    }

    /// How many events it remembers.
    pub fn remembered(&self) -> usize {
        self.order.len()
    }
}

/// The identity of an event as one string: every field of the involved object (client-go's
/// `getEventKey` keys on them all), then type, reason and message, each after its length.
fn identity(spec: &EventSpec) -> String {
    let o = &spec.involved;
    let parts = [&*o.kind, &o.namespace, &o.name, &o.uid, &o.api_version, &o.field_path, spec.type_, &spec.reason, &spec.message];
    let mut key = String::with_capacity(parts.iter().map(|p| p.len() + 4).sum());
    let mut digits = [0u8; 20];
    for part in parts {
        // The length in decimal, as `write!` would put it, without the formatting machinery.
        key.extend(crate::sim::trace::decimal_digits(part.len() as u64, &mut digits).iter().map(|&d| char::from(d)));
        key.push(':');
        key.push_str(part);
    }
    key
}

/// `<object>.<nanos in lowercase hex>`, as `format!("{object}.{nanos:x}")` writes it: one per
/// Event a large run creates, so built by hand.
fn event_name(object: &str, mut nanos: u64) -> String {
    let mut hex = [0u8; 16];
    let mut start = hex.len();
    loop {
        start -= 1;
        hex[start] = b"0123456789abcdef"[(nanos & 0xf) as usize];
        nanos >>= 4;
        if nanos == 0 {
            break;
        }
    }
    let mut name = String::with_capacity(object.len() + 1 + hex.len() - start);
    name.push_str(object);
    name.push('.');
    name.extend(hex[start..].iter().map(|&d| char::from(d)));
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_identities_are_what_format_writes() {
        for nanos in [0u64, 9, 0xa, 0x1d2c3b4a5f6e7d8, u64::MAX] {
            assert_eq!(event_name("web-1", nanos), format!("web-1.{nanos:x}"));
        }
        let involved = ObjectReference { kind: "Pod".into(), name: "web-1".into(), ..Default::default() };
        let spec = EventSpec::normal(involved, "Started", "Started container nginx");
        assert_eq!(identity(&spec), "3:Pod0:5:web-10:0:0:6:Normal7:Started23:Started container nginx");
    }

    #[test]
    fn a_repeated_event_bumps_its_count_instead_of_creating_another() {
        let mut rec = EventRecorder::new("kubelet", "node-1");
        let pod = ObjectReference {
            kind: "Pod".into(),
            namespace: "default".into(),
            name: "web-abc".into(),
            uid: "u".into(),
            ..Default::default()
        };
        let first = rec.record(EventSpec::warning(pod.clone(), "BackOff", "Back-off restarting failed container"), Time(1000));
        let ApiRequest::Create(Object::Event(e)) = first else { panic!("first record must create") };
        assert_eq!((e.count, e.source.component.as_str(), e.type_.as_str()), (1, "kubelet", "Warning"));
        assert!(e.metadata.name.starts_with("web-abc."));
        let again = rec.record(EventSpec::warning(pod, "BackOff", "Back-off restarting failed container"), Time(5000));
        let ApiRequest::Update(Object::Event(e2)) = again else { panic!("a repeat must update") };
        assert_eq!(e2.count, 2);
        assert_eq!(e2.metadata.name, e.metadata.name);
        assert_eq!(e2.last_timestamp, Some(Time(5000)));
    }

    fn pod_ref(name: &str, field_path: &str) -> ObjectReference {
        ObjectReference {
            kind: "Pod".into(),
            namespace: "default".into(),
            name: name.into(),
            uid: format!("uid-{name}").into(),
            api_version: "v1".into(),
            field_path: field_path.into(),
        }
    }

    #[test]
    fn a_repeat_is_the_first_event_with_its_count_and_last_timestamp_moved_on() {
        let mut rec = EventRecorder::new("kubelet", "node-1");
        let spec = || EventSpec::normal(pod_ref("web-1", "spec.containers{nginx}"), "Pulled", "Container image already present");
        let ApiRequest::Create(Object::Event(first)) = rec.record(spec(), Time(1000)) else { panic!("first record must create") };
        rec.record(spec(), Time(2000));
        let ApiRequest::Update(Object::Event(third)) = rec.record(spec(), Time(7000)) else { panic!("a repeat must update") };
        let expected = Event { count: 3, last_timestamp: Some(Time(7000)), ..first.clone() };
        assert_eq!(third, expected);
        assert_eq!(third.first_timestamp, Some(Time(1000)));
        assert_eq!(rec.remembered(), 1);
    }

    #[test]
    fn events_on_different_containers_of_one_pod_are_different_events() {
        let mut rec = EventRecorder::new("kubelet", "node-1");
        let on = |path: &str| EventSpec::warning(pod_ref("web-1", path), "BackOff", "Back-off pulling image");
        assert!(matches!(rec.record(on("spec.containers{a}"), Time(0)), ApiRequest::Create(_)));
        assert!(matches!(rec.record(on("spec.containers{b}"), Time(0)), ApiRequest::Create(_)));
        assert!(matches!(rec.record(on("spec.containers{a}"), Time(0)), ApiRequest::Update(_)));
        assert_eq!(rec.remembered(), 2);
    }

    #[test]
    fn the_oldest_event_is_forgotten_beyond_the_limit_and_its_repeat_starts_a_new_event() {
        let mut rec = EventRecorder::new("default-scheduler", "");
        let scheduled = |i: usize| EventSpec::normal(pod_ref(&format!("p-{i}"), ""), "Scheduled", format!("assigned p-{i}"));
        for i in 0..=MAX_REMEMBERED_EVENTS {
            rec.record(scheduled(i), Time(i as u64));
        }
        assert_eq!(rec.remembered(), MAX_REMEMBERED_EVENTS);
        let ApiRequest::Create(Object::Event(again)) = rec.record(scheduled(0), Time(9000)) else { panic!("forgotten: must create") };
        assert_eq!((again.count, again.first_timestamp), (1, Some(Time(9000))));
        assert!(matches!(rec.record(scheduled(MAX_REMEMBERED_EVENTS), Time(9001)), ApiRequest::Update(_)));
    }

    #[test]
    fn a_repeat_answered_404_is_created_again_and_one_answered_200_is_forgotten() {
        let mut rec = EventRecorder::new("kubelet", "node-1");
        let (mut rng, mut next) = (crate::rng::Rng::new(1), 0);
        let spec = || EventSpec::warning(pod_ref("web-1", ""), "BackOff", "Back-off restarting failed container");
        let mut sent = Vec::new();
        for at in [0, 1000, 2000] {
            let mut ctx = Ctx::new(Time(at), &mut rng, &mut next);
            rec.send(spec(), &mut ctx);
            sent.extend(ctx.into_effects());
        }
        let ids: Vec<RequestId> =
            sent.iter().filter_map(|e| if let crate::runtime::Effect::Request { id, .. } = e { Some(*id) } else { None }).collect();
        assert!(!rec.awaits(ids[0]) && rec.awaits(ids[1]) && rec.awaits(ids[2]), "only repeats are awaited");
        let mut ctx = Ctx::new(Time(3000), &mut rng, &mut next);
        rec.answered(ids[1], &Ok(crate::api::ApiResponse::List { items: Vec::new(), resource_version: 1 }), &mut ctx);
        rec.answered(ids[2], &Err(crate::api::ApiError::not_found(Kind::Event, "web-1.x")), &mut ctx);
        let effects = ctx.into_effects();
        let [crate::runtime::Effect::Request { request, .. }] = effects.as_slice() else { panic!("one create: {effects:?}") };
        let ApiRequest::Create(Object::Event(e)) = request.as_ref() else { panic!("a create: {request:?}") };
        assert_eq!((e.count, e.first_timestamp, e.last_timestamp), (3, Some(Time(0)), Some(Time(2000))));
        assert!(!rec.awaits(ids[1]) && !rec.awaits(ids[2]));
    }

    #[test]
    fn identities_do_not_run_into_each_other() {
        let mut a = EventSpec::normal(pod_ref("x", ""), "R", "c");
        a.involved.uid = "u1".into();
        let mut b = EventSpec::normal(pod_ref("1x", ""), "R", "c");
        b.involved.uid = "u".into();
        assert_ne!(identity(&a), identity(&b));
        assert_eq!(identity(&a), "3:Pod7:default1:x2:u12:v10:6:Normal1:R1:c");
    }
}
