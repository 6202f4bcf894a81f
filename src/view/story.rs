//! Story mode: the meaningful hops of a run, said in words, so a learner can follow one change
//! from the claim to the container at a pace the eye can keep.
//!
//! Work in progress: this module so far holds only the [`Caption`] the page draws; the
//! classification of hops and the pacing land next.

use serde::Serialize;

/// The current hop in words, with who did it and what it touched.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Caption {
    /// The hop in words: `ReplicaSet controller: 2 of 3 → creating 1`.
    pub text: String,
    /// The component's `data-name` on the page: `kube-controller-manager/replicaset-controller`,
    /// `kube-scheduler`, `kubelet-node-2`.
    pub component: String,
    /// The object the hop is about, as kubectl names it: `pod/web-7d4b9c8f6-x7k2p`.
    pub object: String,
}
