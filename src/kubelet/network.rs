//! Whether this node's machine answers a connection to a pod IP and port: the data plane's last
//! hop, which traffic (`sim::traffic`) asks after kube-proxy's rules picked a backend.
//!
//! It reads only the runtime (its sandboxes and containers, on the node's `sim::Machine`), never
//! the kubelet process, so a stopped kubelet's pods still answer, as a real node's do. What a container listens on
//! comes from the container model (`container_model::Program::listens`), read from the spec of
//! the pod the container runs.

use super::container_model::Program;
use super::runtime::Runtime;
use crate::model::{ObjectKey, PodSpec, Time};

/// What a connection to a pod IP meets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A running container of this pod accepted it.
    Accepted(ObjectKey),
    /// The pod's network is up but nothing listens on the port (a TCP reset).
    Refused(ObjectKey),
    /// No pod here holds the address (it was torn down): nothing answers.
    NoHost,
}

impl Runtime {
    /// What a connection to `ip:port` meets on this machine at `now`. `spec_of` gives the spec of
    /// the pod a sandbox belongs to, if the API still has it.
    pub fn answer_connection<'a>(&self, now: Time, ip: &str, port: i64, spec_of: impl Fn(&ObjectKey) -> Option<&'a PodSpec>) -> Answer {
        let Some(sandbox) = self.sandboxes().find(|s| s.ready && s.ip == ip) else { return Answer::NoHost };
        let spec = spec_of(&sandbox.pod);
        let listening = sandbox.containers.iter().any(|(name, slot)| {
            let c = &slot.current;
            // The runtime catches up lazily: an exit that is due has happened.
            let running = c.state.is_running() && c.planned_exit.is_none_or(|e| e.at > now);
            let program = spec.and_then(|s| s.containers.iter().find(|k| k.name == *name)).map(Program::of);
            running && program.is_some_and(|p| p.listens(port))
        });
        if listening {
            Answer::Accepted(sandbox.pod.clone())
        } else {
            Answer::Refused(sandbox.pod.clone())
        }
    }
}
