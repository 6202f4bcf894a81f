//! What the page draws, as plain data computed from a [`Sim`]: the cluster (nodes with their
//! capacity bars and pods), the room of loops, the event flow, the gap of a Deployment, the
//! event log and the scheduler's explanation for a pod, and story mode's captions and pacing.
//!
//! It exists so that everything the page shows is decided here, natively, where unit tests can
//! check it, and the Yew shell (`src/web`) only renders it. Nothing here knows about a browser,
//! a wall clock or a frame: the shell says when to look, and each tracker reports whether what it
//! would draw changed, so the shell re-renders only then.
//!
//! The trackers are incremental where the cluster is large: [`cluster::ClusterTracker`] and
//! [`events::EventLog`] read etcd's change log since the revision they last saw (the same log
//! watches are served from), so a frame costs what changed, not what exists. When that log has
//! been compacted past them, or the simulation was replaced (`sim seed`), they rebuild from a
//! full list.
//!
//! Every view type is `Serialize` (for scripts and golden tests) and `Eq`, so `Rc`-shared views
//! compare by pointer first and the shell can skip unchanged parts cheaply.

pub mod attach;
pub mod cluster;
pub mod embed;
pub mod events;
pub mod explain;
pub mod flight;
pub mod flow;
pub mod focus;
pub mod gap;
pub mod hints;
pub mod loops;
pub mod page;
pub mod services;
pub mod share;
pub mod stage;
pub mod story;

pub use cluster::{ClusterTracker, ClusterView, NodeView, PodView, Usage};
pub use events::{EventFilter, EventLog, EventRow, EventTable};
pub use explain::{explain, Explanation, NodeVerdictView};
pub use flow::{FlowLayout, Hop, LanePos};
pub use gap::{GapHistory, GapSample, GapView};
pub use hints::{Hint, HintTracker};
pub use loops::{components, ComponentView, LoopView};
pub use page::PageParams;
pub use story::{Beat, Caption, Replacement, Story};

use crate::sim::Sim;

/// Where a tracker is in the simulation's history, to tell "more of the same run" from "a new
/// run" (after `sim seed`, time restarts at zero and the revision starts again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub revision: u64,
    pub now: u64,
    pub seed: u64,
    pub started: bool,
}

impl Cursor {
    /// Whether `sim` continues the run this cursor saw last.
    pub fn continues(&self, sim: &Sim) -> bool {
        self.started && sim.seed() == self.seed && sim.now().0 >= self.now && sim.api().revision() >= self.revision
    }

    pub fn at(sim: &Sim) -> Cursor {
        Cursor { revision: sim.api().revision(), now: sim.now().0, seed: sim.seed(), started: true }
    }
}
