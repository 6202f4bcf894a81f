//! The processes the `Sim` runs, as one closed list: kube-controller-manager, kube-scheduler, a
//! kubelet and a kube-proxy per node, and the operators a learner adds.
//!
//! The simulation drives every process through the generic, sans-I/O `Component` contract, and
//! the contract has no downcasts. But a view or a `sim` verb sometimes needs what only one kind of
//! process knows — kube-scheduler's decision log for "why this node?", kube-controller-manager's
//! edge or level mode — and a node's processes run on that node's `Machine`. So the Sim keeps
//! its processes typed, the way turmoil keeps its hosts: matching on `Process` is the typed
//! access, and the components themselves never learn of each other.

use crate::controllers::manager::ControllerManager;
use crate::kubelet::Kubelet;
use crate::operator::Operator;
use crate::proxy::KubeProxy;
use crate::runtime::Component;
use crate::scheduler::Scheduler;

/// One process, boxed: a slot moves a pointer, not a kubelet's whole memory.
pub enum Process {
    ControllerManager(Box<ControllerManager>),
    Scheduler(Box<Scheduler>),
    Kubelet(Box<Kubelet>),
    KubeProxy(Box<KubeProxy>),
    /// An operator the learner wrote (`operator/NAME`), its handlers run by an interpreter.
    // In the page too (its Operator panel, Pyodide): driven through the `Component` vtable, so
    // its code is reached only once an operator runs, and the wasm split keeps it in the lazy part.
    Operator(Box<Operator>),
}

impl Process {
    /// The process as the Sim drives it.
    pub fn component(&self) -> &dyn Component {
        match self {
            Process::ControllerManager(c) => c.as_ref(),
            Process::Scheduler(c) => c.as_ref(),
            Process::Kubelet(c) => c.as_ref(),
            Process::KubeProxy(c) => c.as_ref(),
            Process::Operator(c) => c.as_ref(),
        }
    }

    pub(crate) fn component_mut(&mut self) -> &mut dyn Component {
        match self {
            Process::ControllerManager(c) => c.as_mut(),
            Process::Scheduler(c) => c.as_mut(),
            Process::Kubelet(c) => c.as_mut(),
            Process::KubeProxy(c) => c.as_mut(),
            Process::Operator(c) => c.as_mut(),
        }
    }

    /// Whether the machine's own timers wake this process: containerd's events (a container's
    /// planned exit) reach the kubelet, and nothing else on the node listens for them.
    pub(crate) fn hears_runtime_events(&self) -> bool {
        matches!(self, Process::Kubelet(_))
    }
}

impl From<ControllerManager> for Process {
    fn from(c: ControllerManager) -> Self {
        Process::ControllerManager(Box::new(c))
    }
}

impl From<Scheduler> for Process {
    fn from(c: Scheduler) -> Self {
        Process::Scheduler(Box::new(c))
    }
}

impl From<Kubelet> for Process {
    fn from(c: Kubelet) -> Self {
        Process::Kubelet(Box::new(c))
    }
}

impl From<KubeProxy> for Process {
    fn from(c: KubeProxy) -> Self {
        Process::KubeProxy(Box::new(c))
    }
}

impl From<Operator> for Process {
    fn from(c: Operator) -> Self {
        Process::Operator(Box::new(c))
    }
}
