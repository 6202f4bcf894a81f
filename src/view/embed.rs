//! The messages a host page and an embedded widget exchange (`window.postMessage` for an iframe,
//! the element's `send()` and `kubeloop` events for `<kubeloop-sim>`), as plain data.
//!
//! It lives in the library so the schema — what is accepted, what is refused and with which
//! words — is decided and tested natively; the page only moves JSON text in and out. Every
//! message out carries `"source": "kubeloop"` so a host can tell ours from other frames'.
//! The schema is documented in `docs/embedding.md`.

use super::Cursor;
use crate::model::{Kind, Time};
use crate::sim::Sim;
use serde::Serialize;
use serde_json::Value;

/// What a host can ask of a widget.
#[derive(Clone, Debug, PartialEq)]
pub enum InMessage {
    /// Run a command line (`kubectl ...` or `sim ...`), as typed in the console.
    Command(String),
    /// Load a scenario: a built-in name or the URL of a YAML file on the page's origin.
    Scenario(String),
    /// Set the speed (simulated time per wall time); the nearest offered speed is used.
    Speed(f64),
    Play,
    Pause,
    /// Restart the scenario with the current seed.
    Reset,
    /// Pause and run to the next delivery that sends a message (the toolbar's Step).
    Step,
    /// Run until every loop is idle, then pause (the toolbar's Fast-forward).
    FastForward,
    /// Select a pod, as a click on it does (the engine refuses a pod that does not exist).
    SelectPod {
        namespace: String,
        name: String,
    },
}

/// The message types a host can send.
pub const IN_TYPES: [&str; 9] = ["command", "scenario", "speed", "play", "pause", "reset", "step", "fast-forward", "select-pod"];

/// Reads one message from its JSON text. The error says why it was ignored.
pub fn parse_message(json: &str) -> Result<InMessage, String> {
    let value: Value = serde_json::from_str(json).map_err(|_| not_ours())?;
    let Some(kind) = value.get("type").and_then(Value::as_str) else { return Err(not_ours()) };
    let text = |field: &str| {
        value
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| format!("error: ignored message {kind:?}: it needs a non-empty string field {field:?}"))
    };
    match kind {
        "command" => text("command").map(InMessage::Command),
        "scenario" => text("scenario").map(InMessage::Scenario),
        "speed" => value
            .get("speed")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(InMessage::Speed)
            .ok_or_else(|| "error: ignored message \"speed\": field \"speed\" must be a number above 0".to_string()),
        "play" => Ok(InMessage::Play),
        "pause" => Ok(InMessage::Pause),
        "reset" => Ok(InMessage::Reset),
        "step" => Ok(InMessage::Step),
        "fast-forward" => Ok(InMessage::FastForward),
        "select-pod" => {
            // Like kubectl without -n: the default namespace unless one is given.
            let namespace = match value.get("namespace") {
                None => "default".to_string(),
                Some(_) => text("namespace")?,
            };
            Ok(InMessage::SelectPod { namespace, name: text("name")? })
        }
        other => Err(format!("error: ignored message of unknown type {other:?}; known types: {}", IN_TYPES.join(", "))),
    }
}

fn not_ours() -> String {
    "error: ignored a message that is not a kubeloop message (expected a JSON object with a string \"type\")".to_string()
}

/// The object an event is about, as the Event's `involvedObject` has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InvolvedObject {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// What a widget tells its host.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum OutMessage {
    /// The first render is on screen.
    #[serde(rename_all = "camelCase")]
    Ready { version: String, scenario: String, seed: u64, time_ms: u64 },
    /// The widget's content height in CSS pixels, to size an iframe.
    Resize { height: u32 },
    /// An Event object as it was written (created, or its count bumped).
    #[serde(rename_all = "camelCase")]
    Event {
        reason: String,
        message: String,
        event_type: String,
        involved_object: InvolvedObject,
        count: i32,
        /// RFC 3339, the Event's lastTimestamp.
        time: String,
        time_ms: u64,
    },
    /// A command ran (from the host, the console or a control).
    #[serde(rename_all = "camelCase")]
    Command { command: String, ok: bool, output: String, time_ms: u64 },
    /// A lesson step was completed (sent by the lesson engine).
    #[serde(rename_all = "camelCase")]
    StepCompleted { lesson: String, step: usize, title: String, time_ms: u64 },
    /// A message or parameter was refused; the widget shows the same text.
    Error { message: String },
}

#[derive(Serialize)]
struct Envelope<'a> {
    source: &'static str,
    #[serde(flatten)]
    message: &'a OutMessage,
}

impl OutMessage {
    /// The JSON text posted to the host: the message with `"source": "kubeloop"`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&Envelope { source: "kubeloop", message: self }).unwrap_or_default()
    }
}

/// Follows etcd's change log and turns every Event write into an [`OutMessage::Event`].
#[derive(Debug, Default)]
pub struct EventFeed {
    cursor: Cursor,
}

impl EventFeed {
    pub fn new() -> Self {
        Self::default()
    }

    /// The Event writes since the last call. A new run (after `sim seed`, or a new scenario)
    /// starts over with the Events that exist.
    pub fn poll(&mut self, sim: &Sim) -> Vec<OutMessage> {
        let api = sim.api();
        let mut out = Vec::new();
        if !self.cursor.continues(sim) {
            out.extend(sim.objects(Kind::Event).filter_map(|o| event_message(o.as_event()?)));
        } else if api.revision() != self.cursor.revision {
            // When compacted past us, what was written meanwhile is gone: carry on from here.
            if let Ok(changes) = api.changes_since(self.cursor.revision) {
                out.extend(
                    changes
                        .filter(|c| c.object.kind() == Kind::Event && c.type_ != crate::store::ChangeType::Deleted)
                        .filter_map(|c| event_message(c.object.as_event()?)),
                );
            }
        }
        self.cursor = Cursor::at(sim);
        out
    }

    /// Moves on to `sim`'s present without reporting what was written meanwhile (no one is
    /// listening); the next [`poll`](Self::poll) reports only what comes after.
    pub fn skip(&mut self, sim: &Sim) {
        self.cursor = Cursor::at(sim);
    }
}

fn event_message(e: &crate::model::Event) -> Option<OutMessage> {
    let time = e.last_timestamp.or(e.first_timestamp).unwrap_or(Time(0));
    Some(OutMessage::Event {
        reason: e.reason.to_string(),
        message: e.message.trim().to_string(),
        event_type: e.type_.to_string(),
        involved_object: InvolvedObject {
            kind: e.involved_object.kind.to_string(),
            namespace: e.involved_object.namespace.to_string(),
            name: e.involved_object.name.to_string(),
        },
        count: e.count.max(1),
        time: time.rfc3339(),
        time_ms: time.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Session;
    use crate::model::Duration;
    use crate::view::page::scenario;

    #[test]
    fn host_messages_parse_and_bad_ones_say_why() {
        assert_eq!(parse_message(r#"{"type":"command","command":"kubectl get pods"}"#), Ok(InMessage::Command("kubectl get pods".into())));
        assert_eq!(parse_message(r#"{"type":"speed","speed":10}"#), Ok(InMessage::Speed(10.0)));
        assert_eq!(parse_message(r#"{"type":"scenario","scenario":"scale-up"}"#), Ok(InMessage::Scenario("scale-up".into())));
        assert_eq!(parse_message(r#"{"type":"pause","extra":1}"#), Ok(InMessage::Pause));
        assert_eq!(parse_message(r#"{"type":"play"}"#), Ok(InMessage::Play));
        assert_eq!(parse_message(r#"{"type":"reset"}"#), Ok(InMessage::Reset));
        assert_eq!(parse_message(r#"{"type":"step"}"#), Ok(InMessage::Step));
        assert_eq!(parse_message(r#"{"type":"fast-forward"}"#), Ok(InMessage::FastForward));
        let not_ours = "error: ignored a message that is not a kubeloop message (expected a JSON object with a string \"type\")";
        for bad in ["", "42", "\"play\"", "[1]", "{\"kind\":\"play\"}", "{\"type\":7}", "{not json"] {
            assert_eq!(parse_message(bad), Err(not_ours.to_string()), "{bad}");
        }
        assert_eq!(
            parse_message(r#"{"type":"explode"}"#),
            Err("error: ignored message of unknown type \"explode\"; known types: command, scenario, speed, play, pause, reset, step, fast-forward, select-pod".into())
        );
        assert_eq!(
            parse_message(r#"{"type":"command","command":"  "}"#),
            Err("error: ignored message \"command\": it needs a non-empty string field \"command\"".into())
        );
        assert_eq!(
            parse_message(r#"{"type":"speed","speed":"fast"}"#),
            Err("error: ignored message \"speed\": field \"speed\" must be a number above 0".into())
        );
        assert!(parse_message(r#"{"type":"speed","speed":-1}"#).is_err());
    }

    #[test]
    fn select_pod_names_a_pod_in_the_default_namespace_unless_told_otherwise() {
        let pod = |namespace: &str, name: &str| Ok(InMessage::SelectPod { namespace: namespace.into(), name: name.into() });
        assert_eq!(parse_message(r#"{"type":"select-pod","name":"web-1"}"#), pod("default", "web-1"));
        assert_eq!(parse_message(r#"{"type":"select-pod","namespace":"shop","name":"web-1"}"#), pod("shop", "web-1"));
        for (bad, field) in [
            (r#"{"type":"select-pod"}"#, "name"),
            (r#"{"type":"select-pod","name":""}"#, "name"),
            (r#"{"type":"select-pod","name":7}"#, "name"),
            (r#"{"type":"select-pod","namespace":"","name":"web-1"}"#, "namespace"),
            (r#"{"type":"select-pod","namespace":null,"name":"web-1"}"#, "namespace"),
        ] {
            let error = format!("error: ignored message \"select-pod\": it needs a non-empty string field \"{field}\"");
            assert_eq!(parse_message(bad), Err(error), "{bad}");
        }
    }

    #[test]
    fn messages_out_are_tagged_json() {
        assert_eq!(OutMessage::Resize { height: 640 }.to_json(), r#"{"source":"kubeloop","type":"resize","height":640}"#);
        assert_eq!(
            OutMessage::Ready { version: "0.1.0".into(), scenario: "default".into(), seed: 1, time_ms: 0 }.to_json(),
            r#"{"source":"kubeloop","type":"ready","version":"0.1.0","scenario":"default","seed":1,"timeMs":0}"#
        );
        assert_eq!(
            OutMessage::StepCompleted { lesson: "scale".into(), step: 2, title: "Watch it converge".into(), time_ms: 5000 }.to_json(),
            r#"{"source":"kubeloop","type":"step-completed","lesson":"scale","step":2,"title":"Watch it converge","timeMs":5000}"#
        );
    }

    #[test]
    fn a_skipped_span_is_never_reported_and_what_follows_is() {
        let mut session = Session::new(scenario("default").unwrap(), Some(1)).unwrap();
        let mut feed = EventFeed::new();
        session.advance(Duration::secs(5));
        assert!(session.sim().objects(Kind::Event).count() > 3, "the span skipped has events");
        feed.skip(session.sim());
        assert_eq!(feed.poll(session.sim()), vec![]);
        assert!(session.execute("kubectl scale deployment web --replicas=4").ok);
        session.advance(Duration::secs(5));
        let scheduled =
            feed.poll(session.sim()).into_iter().filter(|m| matches!(m, OutMessage::Event { reason, .. } if reason == "Scheduled")).count();
        assert_eq!(scheduled, 1, "only the fourth pod's Scheduled comes after the skip");
    }

    #[test]
    fn the_feed_reports_each_event_write_once_as_written() {
        let mut session = Session::new(scenario("default").unwrap(), Some(1)).unwrap();
        let mut feed = EventFeed::new();
        let mut seen = Vec::new();
        for _ in 0..30 {
            session.advance(Duration::millis(500));
            seen.extend(feed.poll(session.sim()));
        }
        let scheduled: Vec<_> = seen
            .iter()
            .filter_map(|m| match m {
                OutMessage::Event { reason, message, involved_object, event_type, .. } if reason == "Scheduled" => {
                    Some((message.clone(), involved_object.kind.clone(), event_type.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(scheduled.len(), 3, "one Scheduled per pod of web: {seen:#?}");
        assert!(scheduled[0].0.starts_with("Successfully assigned default/web-"), "{scheduled:?}");
        assert_eq!((scheduled[0].1.as_str(), scheduled[0].2.as_str()), ("Pod", "Normal"));
        assert!(seen.iter().any(|m| matches!(m, OutMessage::Event { reason, .. } if reason == "ScalingReplicaSet")));
        assert_eq!(feed.poll(session.sim()), vec![], "nothing new, nothing out");
        let json = seen[0].to_json();
        assert!(json.starts_with(r#"{"source":"kubeloop","type":"event","reason":"#), "{json}");
        assert!(json.contains(r#""involvedObject":{"kind":"#) && json.contains(r#""time":"2026-01-01T00:00:0"#), "{json}");
    }
}
