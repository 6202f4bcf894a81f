//! The namespace controller (pkg/controller/namespace): empties a deleted namespace, then lets
//! it go.
//!
//! Deleting a namespace only marks it Terminating (`api::namespaces`). This loop sees that and
//! deletes every namespaced kind's collection in it. Whatever is still there afterwards (pods in
//! their grace period) is written into the namespace's conditions, and the loop looks again after
//! half the longest grace period plus a second, as upstream's `Estimate/2 + 1` does. A pass that
//! finds nothing left calls `finalize`, taking the `kubernetes` finalizer off, and the API
//! server removes the namespace.
//!
//! Upstream does the deleting and the deciding in one sync, with live lists in between. Here a
//! sync's calls are fixed when it starts, so a pass is two syncs: one sends the deletions (their
//! answers say what remains), the next, queued at once, decides from those answers.

use super::{Action, Caches, Call, Controller, Outcome, Sync};
use crate::api::ApiRequest;
use crate::model::*;
use crate::runtime::informer::Delta;
use std::collections::BTreeMap;

/// What the deletions of one pass left in a namespace.
#[derive(Debug, Default)]
struct Pass {
    /// Objects still there, per kind.
    remaining: BTreeMap<Kind, usize>,
    /// The longest grace period among the pods still there, in seconds.
    estimate: i64,
    /// Answers still to come.
    outstanding: usize,
    /// A deletion failed: the pass proves nothing and is run again.
    failed: bool,
}

#[derive(Debug, Default)]
pub struct NamespaceController {
    passes: BTreeMap<Name, Pass>,
}

impl NamespaceController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The kinds whose objects live in namespaces, the order a pass deletes them in: custom objects
/// only when discovery shows a CustomResourceDefinition (the controller deletes what discovery
/// lists), so a cluster without one asks for what it always did.
fn namespaced_kinds(custom: bool) -> impl Iterator<Item = Kind> {
    Kind::ALL.into_iter().filter(move |k| k.namespaced() && (custom || *k != Kind::CustomObject))
}

impl Controller for NamespaceController {
    fn name(&self) -> &'static str {
        "namespace-controller"
    }
    /// And the definitions, to know whether custom objects are among the resources to delete.
    fn watches(&self) -> &'static [Kind] {
        &[Kind::Namespace, Kind::CustomResourceDefinition]
    }
    /// `--concurrent-namespace-syncs`.
    fn workers(&self) -> usize {
        10
    }

    fn on_delta(&mut self, _caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        match delta {
            Delta::Added(o) | Delta::Updated { new: o, .. } if o.meta().is_deleting() => vec![o.key()],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let ns = caches[Kind::Namespace].get(key).and_then(|o| o.as_namespace());
        let Some(ns) = ns.filter(|ns| ns.metadata.is_deleting()) else {
            self.passes.remove(&key.name);
            return Sync::nothing();
        };
        match self.passes.remove(&key.name) {
            Some(pass) if pass.outstanding == 0 && !pass.failed => decide(ns, &pass, now),
            _ => {
                let custom = caches.get(Kind::CustomResourceDefinition).is_some_and(|d| !d.is_empty());
                self.delete_content(ns, custom)
            }
        }
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &Outcome) {
        if !matches!(call.request, ApiRequest::DeleteCollection { .. }) {
            return;
        }
        let Some(pass) = self.passes.get_mut(&key.name) else { return };
        pass.outstanding = pass.outstanding.saturating_sub(1);
        let Outcome::Listed(items) = outcome else {
            pass.failed = true;
            return;
        };
        for item in items {
            *pass.remaining.entry(item.kind()).or_default() += 1;
            if let Some(grace) = item.meta().deletion_grace_period_seconds {
                pass.estimate = pass.estimate.max(grace);
            }
        }
    }

    fn reset(&mut self) {
        self.passes.clear();
    }
}

impl NamespaceController {
    /// The first sync of a pass: every namespaced kind's collection deleted at once.
    fn delete_content(&mut self, ns: &Namespace, custom: bool) -> Sync {
        let name = &ns.metadata.name;
        let calls: Vec<Call> =
            namespaced_kinds(custom).map(|kind| Call::new(ApiRequest::DeleteCollection { kind, namespace: name.to_string() })).collect();
        self.passes.insert(name.clone(), Pass { outstanding: calls.len(), ..Default::default() });
        Sync::with_steps(vec![calls], format!("namespace {name}: deleting all content")).then(Action::RequeueAfter(Duration::ZERO))
    }
}

/// The second sync of a pass: finalize an empty namespace, or say what remains and wait.
fn decide(ns: &Namespace, pass: &Pass, now: Time) -> Sync {
    let name = &ns.metadata.name;
    if pass.remaining.is_empty() {
        let mut done = ns.clone();
        done.spec.finalizers.retain(|f| f != NAMESPACE_FINALIZER);
        return Sync::with_steps(
            vec![vec![Call::new(ApiRequest::Finalize(Object::Namespace(done)))]],
            format!("namespace {name}: empty, finalized"),
        );
    }
    let what: Vec<String> = pass.remaining.iter().map(|(kind, n)| format!("{}. has {n} resource instances", kind.plural())).collect();
    let mut next = ns.clone();
    next.status.conditions = deletion_conditions(&what.join(", "), now, &ns.status.conditions);
    let wait = pass.estimate / 2 + 1;
    let summary = format!("namespace {name}: {} remaining, waiting {wait} s", what.join(", "));
    let steps =
        if next.status != ns.status { vec![vec![Call::new(ApiRequest::UpdateStatus(Object::Namespace(next)))]] } else { Vec::new() };
    Sync::with_steps(steps, summary).then(Action::RequeueAfter(Duration::secs(wait as u64)))
}

/// The conditions `updateNamespaceStatusFunc` writes while content remains, each keeping its
/// transition time when its status did not change.
fn deletion_conditions(remaining: &str, now: Time, old: &[NamespaceCondition]) -> Vec<NamespaceCondition> {
    let rows: [(&str, &str, &str, String); 5] = [
        ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered".into()),
        ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions", "All legacy kube types successfully parsed".into()),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".into(),
        ),
        ("NamespaceContentRemaining", "True", "SomeResourcesRemain", format!("Some resources are remaining: {remaining}")),
        ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers", "All content-preserving finalizers finished".into()),
    ];
    rows.into_iter()
        .map(|(type_, status, reason, message)| {
            let since = old.iter().find(|c| c.type_ == type_ && c.status == status).and_then(|c| c.last_transition_time);
            NamespaceCondition {
                type_: type_.into(),
                status: status.into(),
                last_transition_time: Some(since.unwrap_or(now)),
                reason: Some(reason.into()),
                message: Some(message),
            }
        })
        .collect()
}
