//! The event recorder (client-go tools/record): turns "this happened" into Event objects.
//!
//! Events go through the API server like any other write. Repeats of the same event (same object,
//! reason, message and source) update one Event's count and lastTimestamp instead of creating a
//! new one, as the recorder's EventCorrelator does.

use super::fasthash::FastMap;
use crate::api::ApiRequest;
use crate::model::*;
use std::collections::VecDeque;
use std::rc::Rc;

/// How many distinct events the recorder remembers for aggregation (client-go's
/// `maxLruCacheEntries`); older ones are forgotten, and a repeat of one of them starts a new Event.
pub const MAX_REMEMBERED_EVENTS: usize = 4096;

type EventIdentity = (String, String, String, String);

/// One thing worth telling people, before it becomes an Event object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    pub involved: ObjectReference,
    /// `Normal` or `Warning`.
    pub type_: &'static str,
    pub reason: String,
    pub message: String,
}

impl EventSpec {
    pub fn normal(involved: ObjectReference, reason: &str, message: impl Into<String>) -> Self {
        EventSpec { involved, type_: "Normal", reason: reason.into(), message: message.into() }
    }
    pub fn warning(involved: ObjectReference, reason: &str, message: impl Into<String>) -> Self {
        EventSpec { involved, type_: "Warning", reason: reason.into(), message: message.into() }
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
        field_path: String::new(),
    }
}

#[derive(Debug, Default)]
pub struct EventRecorder {
    component: String,
    host: String,
    seq: u64,
    /// Events already written, by what makes them the same event. Only looked up, never
    /// iterated (`order` keeps the age), so a hash map: cheaper than comparing four strings per
    /// tree level on every event.
    seen: FastMap<Rc<EventIdentity>, Event>,
    /// Remembered identities, oldest first, to forget beyond `MAX_REMEMBERED_EVENTS` (shared
    /// with `seen`, so remembering one costs no copies of its four strings).
    order: VecDeque<Rc<EventIdentity>>,
}

impl EventRecorder {
    pub fn new(component: &str, host: &str) -> Self {
        EventRecorder { component: component.into(), host: host.into(), ..Default::default() }
    }

    /// The write that records `spec` at `now`: a create, or an update of a repeated event.
    pub fn record(&mut self, spec: EventSpec, now: Time) -> ApiRequest {
        let key = (spec.involved.uid.clone() + &spec.involved.name, spec.reason.clone(), spec.message.clone(), spec.type_.to_string());
        if let Some(previous) = self.seen.get_mut(&key) {
            previous.count += 1;
            previous.last_timestamp = Some(now);
            previous.metadata.resource_version = 0;
            return ApiRequest::Update(Object::Event(previous.clone()));
        }
        self.seq += 1;
        // client-go names events `<object>.<unix nanos in hex>`; the sequence keeps two events
        // in the same simulated millisecond apart.
        let nanos = (EPOCH_UNIX_SECS * 1000 + now.0) * 1_000_000 + self.seq % 1_000_000;
        let event = Event {
            metadata: ObjectMeta {
                name: format!("{}.{nanos:x}", spec.involved.name),
                namespace: spec.involved.namespace.clone(),
                ..Default::default()
            },
            involved_object: spec.involved,
            reason: spec.reason,
            message: spec.message,
            source: EventSource { component: self.component.clone(), host: self.host.clone() },
            first_timestamp: Some(now),
            last_timestamp: Some(now),
            count: 1,
            type_: spec.type_.into(),
            reporting_component: self.component.clone(),
            reporting_instance: self.host.clone(),
        };
        if self.order.len() == MAX_REMEMBERED_EVENTS {
            if let Some(oldest) = self.order.pop_front() {
                self.seen.remove(&oldest);
            }
        }
        let key = Rc::new(key);
        self.order.push_back(key.clone());
        self.seen.insert(key, event.clone());
        ApiRequest::Create(Object::Event(event))
    }

    /// Forgets what it has written (the process restarted).
    pub fn clear(&mut self) {
        self.seen.clear();
        self.order.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
