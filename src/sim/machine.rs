//! The machines under the processes: what a node holds that outlives any one process on it.
//!
//! Today that is the node's Service routing table (the kernel's iptables rules), which kube-proxy
//! writes through `Effect::ProgramRules` and traffic is routed by. Power off the machine and the
//! kernel's rules are gone; stop kube-proxy and they stay as they were.

use crate::net::NodeRules;

/// One node's machine.
#[derive(Debug, Default)]
pub struct Machine {
    pub(crate) rules: NodeRules,
}

impl Machine {
    /// The routing table kube-proxy last wrote here.
    pub fn rules(&self) -> &NodeRules {
        &self.rules
    }
}
