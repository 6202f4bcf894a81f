//! The engine's side of embedding: what it tells a host page and what it does with what a host
//! sends.
//!
//! It exists so that the messages a host sees and their effects are decided in the library,
//! where native tests reach them; the page's `src/web/host.rs` only moves JSON text between the
//! browser (`postMessage`, the element's callback) and [`Engine::receive`] /
//! [`Engine::take_outbox`]. A standalone page has no host: with nobody listening the engine
//! builds no message (thousands of Events while a large cluster converges would be JSON for no
//! one).

use super::{Action, Engine, Snapshot};
use crate::api::errors::ApiError;
use crate::model::Kind;
use crate::sim::Sim;
use crate::view::embed::{EventFeed, InMessage, OutMessage};
use std::rc::Rc;

/// The messages waiting for the host, and the feed of Event writes.
#[derive(Debug)]
pub(crate) struct Outbox {
    messages: Vec<OutMessage>,
    feed: EventFeed,
    /// Whether a host hears the outbox; a standalone page builds no messages for no one.
    listens: bool,
}

impl Outbox {
    pub(crate) fn new() -> Outbox {
        Outbox { messages: Vec::new(), feed: EventFeed::new(), listens: true }
    }

    pub(crate) fn push(&mut self, message: OutMessage) {
        self.messages.push(message);
    }

    /// The messages since the last call, then the Event writes since then. With no host
    /// listening it drops them and moves the event feed on without building a message per Event.
    fn take(&mut self, sim: &Sim) -> Vec<OutMessage> {
        if !self.listens {
            self.messages.clear();
            self.feed.skip(sim);
            return Vec::new();
        }
        let mut out = std::mem::take(&mut self.messages);
        out.extend(self.feed.poll(sim));
        out
    }
}

impl Engine {
    /// Queues a message for the host (the lesson engine reports completed steps here).
    pub fn emit(&mut self, message: OutMessage) {
        self.outbox.push(message);
    }

    /// Tells the engine whether a host hears its outbox (see [`Engine::take_outbox`]).
    pub fn set_host_listens(&mut self, listens: bool) {
        self.outbox.listens = listens;
    }

    /// The messages for the host since the last call, cluster events included.
    pub fn take_outbox(&mut self) -> Vec<OutMessage> {
        self.outbox.take(self.session.sim())
    }

    /// A message from the host (already checked for its origin), as JSON text. A message that
    /// is refused changes nothing; the banner and the host are told why.
    pub fn receive(&mut self, json: &str) -> Option<Rc<Snapshot>> {
        match crate::view::embed::parse_message(json) {
            Ok(InMessage::Command(line)) => {
                self.run(&line);
            }
            Ok(InMessage::Scenario(name)) => return self.load_scenario(&name),
            Ok(InMessage::Speed(s)) => return self.act(Action::Speed(s)),
            Ok(InMessage::Play) => return self.act(Action::Play),
            Ok(InMessage::Pause) => return self.act(Action::Pause),
            Ok(InMessage::Reset) => return self.act(Action::Reset),
            Ok(InMessage::Step) => return self.act(Action::Step),
            Ok(InMessage::FastForward) => return self.act(Action::FastForward),
            Ok(InMessage::SelectPod { namespace, name }) => match self.pod_exists(&namespace, &name) {
                true => return self.act(Action::Select(namespace, name)),
                false => self.report(ApiError::not_found(Kind::Pod, &name).kubectl_message()),
            },
            Err(e) => self.report(e),
        }
        self.throttle.panels_due = true;
        self.publish()
    }

    fn pod_exists(&self, namespace: &str, name: &str) -> bool {
        self.session.sim().objects(Kind::Pod).map(|o| o.meta()).any(|m| m.namespace == namespace && m.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_engine, Mode};
    use super::*;

    fn settle(e: &mut Engine) {
        assert!(e.run("sim settle"));
        e.refresh();
    }

    #[test]
    fn bad_json_from_the_host_is_reported_and_changes_nothing() {
        let mut e = test_engine("?scenario=default&seed=1");
        let before = e.snapshot();
        let hash = e.session.sim().trace().hash();
        let s = e.receive("{not json").expect("the banner shows the error");
        let error = "error: ignored a message that is not a kubeloop message (expected a JSON object with a string \"type\")";
        assert_eq!(*s.errors, vec![error.to_string()]);
        assert_eq!((s.time_ms, s.mode, e.session.sim().trace().hash()), (before.time_ms, before.mode, hash));
        assert!(e.log.is_empty() && s.commands.is_empty(), "nothing ran");
        assert_eq!(e.take_outbox().first(), Some(&OutMessage::Error { message: error.into() }), "the host is told");
    }

    #[test]
    fn with_no_host_listening_the_outbox_is_empty() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.set_host_listens(false);
        e.receive(r#"{"type":"command","command":"kubectl scale deployment web --replicas=4"}"#);
        e.receive(r#"{"type":"explode"}"#);
        settle(&mut e);
        assert!(e.session.sim().objects(Kind::Event).count() > 3, "there were Events to tell");
        assert_eq!(e.take_outbox(), vec![]);
        // A host that starts listening hears only what comes after.
        e.set_host_listens(true);
        e.run("kubectl get pods");
        let out = e.take_outbox();
        assert!(matches!(out.as_slice(), [OutMessage::Command { command, ok: true, .. }] if command == "kubectl get pods"), "{out:?}");
    }

    #[test]
    fn a_listening_host_hears_commands_then_events() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.receive(r#"{"type":"command","command":"kubectl scale deployment web --replicas=4"}"#);
        settle(&mut e);
        let out = e.take_outbox();
        assert!(matches!(&out[0], OutMessage::Command { command, ok: true, .. } if command.starts_with("kubectl scale")), "{out:?}");
        assert!(out.iter().any(|m| matches!(m, OutMessage::Event { reason, .. } if reason == "Scheduled")));
        assert_eq!(e.take_outbox(), vec![], "each message once");
    }

    #[test]
    fn a_host_can_step_fast_forward_and_select_a_pod() {
        let mut e = test_engine("?scenario=default&seed=1");
        let count = e.session.sim().trace().count();
        let s = e.receive(r#"{"type":"step"}"#).expect("a step shows");
        assert_eq!(s.mode, Mode::Paused);
        assert!(e.session.sim().trace().count() > count);
        let s = e.receive(r#"{"type":"fast-forward"}"#).expect("fast-forward shows");
        assert_eq!(s.mode, Mode::FastForward);
        while e.snapshot().mode == Mode::FastForward {
            e.frame(0.0, &|| 0.0);
        }
        let pod = e.snapshot().cluster.nodes.iter().flat_map(|n| n.pods.iter()).next().expect("a pod").clone();
        let s = e.receive(&format!(r#"{{"type":"select-pod","name":"{}"}}"#, pod.name)).expect("the selection shows");
        let selection = s.selection.as_ref().expect("selected");
        assert_eq!((selection.namespace.as_str(), selection.name.as_str()), ("default", pod.name.as_str()));
        assert!(selection.pod.is_some() && selection.explanation.is_some());
    }

    #[test]
    fn selecting_a_pod_that_does_not_exist_is_refused_and_changes_nothing() {
        let mut e = test_engine("?scenario=default&seed=1");
        settle(&mut e);
        let pod = e.snapshot().cluster.nodes[0].pods[0].name.clone();
        e.receive(&format!(r#"{{"type":"select-pod","name":"{pod}"}}"#));
        e.take_outbox();
        for (json, error) in [
            (r#"{"type":"select-pod","name":"web-nope"}"#.to_string(), r#"Error from server (NotFound): pods "web-nope" not found"#),
            (
                format!(r#"{{"type":"select-pod","namespace":"kube-system","name":"{pod}"}}"#),
                &*format!(r#"Error from server (NotFound): pods "{pod}" not found"#),
            ),
        ] {
            let s = e.receive(&json).expect("the banner shows the error");
            assert_eq!(s.errors.last().map(String::as_str), Some(error));
            assert_eq!(s.selection.as_ref().map(|s| s.name.as_str()), Some(pod.as_str()), "the selection stays");
            assert_eq!(e.take_outbox(), vec![OutMessage::Error { message: error.to_string() }]);
        }
    }
}
