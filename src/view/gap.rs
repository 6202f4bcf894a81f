//! The gap: for one Deployment, what was claimed (desired replicas) against what exists (current)
//! and what serves (ready), now and over the last minutes of simulated time.
//!
//! The numbers are the Deployment's own: `spec.replicas` and the `status` its controller writes,
//! the same that `kubectl get deployment` prints as READY. [`GapHistory`] samples them whenever
//! the page looks and keeps a point only when one changed, so a long quiet stretch costs one
//! point; the chart draws each series as steps between points.
//!
//! A status is only as fresh as the last loop that wrote it. When it has stood still for a while
//! and disagrees with the pods that exist (an edge-triggered controller that missed the deletes,
//! a stopped controller manager), the view says so in `stale`, so the numbers are not read as
//! the truth: that disagreement is the gap no loop is closing.

use crate::model::{Deployment, Kind, ObjectKey};
use crate::sim::Sim;
use serde::Serialize;
use std::collections::VecDeque;

/// How far back the chart looks, in simulated milliseconds.
pub const WINDOW_MS: u64 = 120_000;
/// The narrowest span the chart draws, so a young run is not squeezed into a sliver.
pub const MIN_SPAN_MS: u64 = 10_000;
/// Most points kept (a point is kept only on a change).
pub const MAX_POINTS: usize = 600;
/// How long the status must have stood still before its disagreement with the pods is stale,
/// in simulated milliseconds: a loop that is working rewrites it well within this.
pub const STALE_AFTER_MS: u64 = 5_000;

/// The three numbers at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GapSample {
    pub t: u64,
    pub desired: i32,
    pub current: i32,
    pub ready: i32,
}

impl GapSample {
    fn same_numbers(&self, other: &GapSample) -> bool {
        (self.desired, self.current, self.ready) == (other.desired, other.current, other.ready)
    }
}

/// What the gap panel shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GapView {
    /// `namespace/name`, empty when the Deployment does not exist.
    pub deployment: String,
    pub desired: i32,
    pub current: i32,
    pub updated: i32,
    pub ready: i32,
    pub available: i32,
    /// kubectl's READY cell (`2/3`).
    pub ready_cell: String,
    /// Whether desired = current = ready.
    pub converged: bool,
    /// Empty, or why the status is not to be believed: it has not changed for
    /// [`STALE_AFTER_MS`] and disagrees with the pods that exist ("status says 3 ready, but 0
    /// pods exist: no loop has updated it").
    pub stale: String,
    /// The Deployment's pods as its controllers count them (selected, not terminating, not
    /// finished), counted at teaching scale only (else 0): `desired - pods` are missing,
    /// drawn as ghost slots where they will appear.
    pub pods: i32,
    /// Whether `pods` and `going` were counted (teaching scale).
    pub counted: bool,
    /// Its pods being deleted (Terminating): drawn, but counted by no status.
    pub going: i32,
    /// Empty, or why the status differs from the pods drawn while a loop is still at it, in one
    /// line ("ready 2 is the status, a sync behind the pods drawn: ready 3").
    pub lag: String,
}

/// A Deployment's pods, counted as its controllers count them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counted {
    /// Selected, not being deleted, not finished.
    pods: i32,
    /// Of those, ready.
    ready: i32,
    /// Selected, being deleted, not finished.
    going: i32,
}

impl GapView {
    /// Replicas claimed that no pod stands for yet (the ghost slots); none past teaching scale,
    /// where the pods are not counted.
    pub fn missing(&self) -> i32 {
        if self.counted {
            (self.desired - self.pods).max(0)
        } else {
            0
        }
    }

    /// Pods past the claim, that the ReplicaSet controller is to delete.
    pub fn extra(&self) -> i32 {
        if self.counted {
            (self.pods - self.desired).max(0)
        } else {
            0
        }
    }
}

/// SVG path data for the chart: one `d` per series, in a `width` × `height` box.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GapChart {
    pub width: i32,
    pub height: i32,
    pub desired: String,
    pub current: String,
    pub ready: String,
    /// The value at the top of the chart.
    pub max: i32,
    /// Simulated milliseconds from the left edge to the right (now): the window, or less while
    /// the run is younger than the window.
    pub span: u64,
}

/// The history of one Deployment's numbers. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct GapHistory {
    namespace: String,
    name: String,
    points: VecDeque<GapSample>,
    view: GapView,
    /// When the status numbers last changed.
    status_since: u64,
    /// Since when the steady status has disagreed with the pods, if it does.
    mismatch_since: Option<u64>,
    /// The pods counted at an etcd revision, so the pods are not
    /// walked again until a Pod or a Deployment has changed since.
    counted: Option<(u64, Counted)>,
    /// How many times the pods were walked (tests bound it).
    pod_walks: u64,
}

impl GapHistory {
    pub fn new(namespace: &str, name: &str) -> GapHistory {
        GapHistory { namespace: namespace.into(), name: name.into(), ..Default::default() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
    pub fn view(&self) -> &GapView {
        &self.view
    }
    pub fn points(&self) -> impl Iterator<Item = &GapSample> + '_ {
        self.points.iter()
    }

    /// Forgets the history (a new run).
    pub fn clear(&mut self) {
        self.points.clear();
        self.view = GapView::default();
        self.status_since = 0;
        self.mismatch_since = None;
        self.counted = None;
    }

    /// Samples the Deployment at `sim`'s time. Returns whether the numbers changed.
    pub fn observe(&mut self, sim: &Sim) -> bool {
        let now = sim.now().0;
        if self.points.back().is_some_and(|p| p.t > now) {
            self.clear();
        }
        let key = ObjectKey::new(Kind::Deployment, &self.namespace, &self.name);
        let deployment = sim.api().get(&key).and_then(|o| o.as_deployment());
        let mut view = deployment.map(|d| self.numbers(d)).unwrap_or_default();
        let status = |v: &GapView| (v.deployment.clone(), v.current, v.updated, v.ready, v.available);
        if status(&view) != status(&self.view) {
            self.status_since = now;
            self.mismatch_since = None;
        }
        // Pods are counted only under a status that has stood still (a busy cluster's keeps
        // moving), and the note waits until the disagreement itself has lasted.
        // At teaching scale the pods are counted at every look (a walk only when a pod was
        // written): the stage draws the missing replicas and the gap panel says why the status
        // differs from the pods drawn. Past it, only under a status that has stood still.
        let teaching = crate::view::story::applies(sim);
        if let Some(d) = deployment.filter(|_| teaching) {
            let c = self.count_pods(sim, d);
            (view.pods, view.going, view.counted) = (c.pods, c.going, true);
            view.lag = lag_note(&view, c);
        }
        if let Some(d) = deployment.filter(|_| now >= self.status_since + STALE_AFTER_MS) {
            let Counted { pods, ready, .. } = self.count_pods(sim, d);
            let note = stale_note(view.current, view.ready, pods, ready);
            if note.is_empty() {
                self.mismatch_since = None;
            } else if now >= *self.mismatch_since.get_or_insert(now) + STALE_AFTER_MS {
                view.stale = note;
                // Stale says it all: no loop is closing this one.
                view.lag.clear();
            }
        }
        let sample = GapSample { t: now, desired: view.desired, current: view.current, ready: view.ready };
        if !self.points.back().is_some_and(|p| p.same_numbers(&sample)) {
            self.points.push_back(sample);
        }
        // Keep one point from before the window: it gives the value at the window's left edge.
        while self.points.len() > MAX_POINTS || (self.points.len() > 1 && self.points[1].t + WINDOW_MS < now) {
            self.points.pop_front();
        }
        let changed = self.view != view;
        self.view = view;
        changed
    }

    /// The Deployment's own numbers, as `kubectl get deployment` reads them.
    fn numbers(&self, d: &Deployment) -> GapView {
        let desired = d.spec.replicas.unwrap_or(1);
        let st = &d.status;
        GapView {
            deployment: format!("{}/{}", self.namespace, self.name),
            desired,
            current: st.replicas,
            updated: st.updated_replicas,
            ready: st.ready_replicas,
            available: st.available_replicas,
            ready_cell: format!("{}/{desired}", st.ready_replicas),
            converged: desired == st.replicas && desired == st.ready_replicas,
            ..GapView::default()
        }
    }

    /// The Deployment's pods as its controllers count them (selected, not terminating, not
    /// finished), and how many are ready; walked again only when a Pod or a Deployment changed.
    fn count_pods(&mut self, sim: &Sim, d: &Deployment) -> Counted {
        let api = sim.api();
        let revision = api.revision();
        if let Some((at, counted)) = self.counted {
            if !pods_may_differ(sim, at) {
                self.counted = Some((revision, counted));
                return counted;
            }
        }
        self.pod_walks += 1;
        let mut c = Counted::default();
        for pod in api.items(Kind::Pod, Some(&self.namespace)).filter_map(|o| o.as_pod()) {
            if pod.is_terminal() || !d.spec.selector.matches(&pod.metadata.labels) {
                continue;
            }
            if pod.metadata.is_deleting() {
                c.going += 1;
                continue;
            }
            c.pods += 1;
            c.ready += i32::from(pod.is_ready());
        }
        self.counted = Some((revision, c));
        c
    }

    /// The chart at `now`: the last [`WINDOW_MS`] (or the whole run, if shorter, but at least
    /// [`MIN_SPAN_MS`]) as steps; the right edge is now.
    pub fn chart(&self, now: u64, width: i32, height: i32) -> GapChart {
        let max = self.points.iter().map(|p| p.desired.max(p.current).max(p.ready)).max().unwrap_or(0).max(1);
        let span = now.clamp(MIN_SPAN_MS, WINDOW_MS);
        // The right edge is now; while the run is younger than the span, the left edge is
        // before time zero and the lines start part-way in.
        let start = now as i64 - span as i64;
        let x = |t: u64| -> i32 {
            let t = (t as i64).clamp(start.max(0), now as i64);
            ((t - start) * width as i64 / span as i64) as i32
        };
        // A little headroom so the top line is not clipped.
        let y = |v: i32| -> i32 { height - 2 - (v.max(0) as i64 * (height - 4) as i64 / max as i64) as i32 };
        let series = |pick: fn(&GapSample) -> i32| -> String {
            let mut d = String::new();
            let mut last: Option<i32> = None;
            for p in self.points.iter() {
                let (px, py) = (x(p.t), y(pick(p)));
                match last {
                    None => d.push_str(&format!("M{px} {py}")),
                    Some(ly) if ly != py => d.push_str(&format!("H{px}V{py}")),
                    Some(_) => {}
                }
                last = Some(py);
            }
            if last.is_some() {
                d.push_str(&format!("H{}", x(now)));
            }
            d
        };
        GapChart { width, height, desired: series(|p| p.desired), current: series(|p| p.current), ready: series(|p| p.ready), max, span }
    }
}

/// Whether the count taken at etcd revision `at` may be out of date: a Pod or a Deployment (its
/// selector) was written since, or the history that would tell was compacted away. A steady
/// large cluster writes every frame (node leases and statuses) but rarely a pod, and walking
/// 3,000 pods per animation frame cost the page several milliseconds of each one.
fn pods_may_differ(sim: &Sim, at: u64) -> bool {
    let api = sim.api();
    if at == api.revision() {
        return false;
    }
    // Another run's revision (a new seed restarts the store): nothing to compare with.
    if at > api.revision() {
        return true;
    }
    match api.changes_since(at) {
        Ok(mut changes) => changes.any(|c| matches!(c.object.kind(), Kind::Pod | Kind::Deployment)),
        Err(_) => true,
    }
}

/// Why the status differs from the pods drawn while the loops are still at it, in one line, or
/// empty: the status is written after the pods change (the ReplicaSet controller counts them,
/// then the Deployment controller copies its ReplicaSets' counts), and Terminating pods are
/// drawn but counted by no status.
fn lag_note(view: &GapView, c: Counted) -> String {
    let (what, status, drawn) = if view.current != c.pods {
        ("current", view.current, c.pods)
    } else if view.ready != c.ready {
        ("ready", view.ready, c.ready)
    } else if c.going > 0 {
        return format!("Terminating pods drawn: {}; no status counts a pod being deleted", c.going);
    } else {
        return String::new();
    };
    format!("{what} {status} is the status, a sync behind the pods drawn: {what} {drawn}")
}

/// Why a status that disagrees with the pods is stale, or empty when it agrees.
fn stale_note(current: i32, ready: i32, pods: i32, ready_pods: i32) -> String {
    if current != pods {
        let exist = if pods == 1 { "pod exists" } else { "pods exist" };
        format!("status says {ready} ready, but {pods} {exist}: no loop has updated it")
    } else if ready != ready_pods {
        format!("status says {ready} ready, but {ready_pods} of its {pods} pods are: no loop has updated it")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;

    #[test]
    fn missing_replicas_are_counted_and_a_lagging_status_is_explained_in_one_line() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        let mut g = GapHistory::new("default", "web");
        s.settle(Duration::mins(2)).unwrap();
        g.observe(s.sim());
        assert_eq!((g.view().pods, g.view().missing(), g.view().extra(), g.view().lag.as_str()), (3, 0, 0, ""), "settled");
        // Claimed with no loop to act on it: two ghost slots.
        assert!(s.execute("sim stop kube-controller-manager").ok);
        assert!(s.execute("kubectl scale deployment web --replicas=5").ok);
        g.observe(s.sim());
        assert_eq!((g.view().desired, g.view().pods, g.view().missing()), (5, 3, 2));
        assert!(s.execute("sim start kube-controller-manager").ok);
        s.settle(Duration::mins(2)).unwrap();
        g.observe(s.sim());
        assert_eq!((g.view().pods, g.view().missing(), g.view().lag.as_str()), (5, 0, ""));
        // Scaled down to one: the four going are drawn Terminating, and the panel says why
        // current does not count them; on the way the status lags the pods.
        assert!(s.execute("kubectl scale deployment web --replicas=1").ok);
        let mut notes = std::collections::BTreeSet::new();
        let mut extra = 0;
        for _ in 0..3000 {
            s.advance(Duration::millis(2));
            g.observe(s.sim());
            extra = extra.max(g.view().extra());
            if !g.view().lag.is_empty() {
                notes.insert(g.view().lag.clone());
            }
        }
        assert!(extra > 0, "right after the scale, more pods than claimed");
        assert!(notes.contains("Terminating pods drawn: 4; no status counts a pod being deleted"), "{notes:?}");
        assert!(notes.contains("current 5 is the status, a sync behind the pods drawn: current 1"), "{notes:?}");
        s.settle(Duration::mins(2)).unwrap();
        g.observe(s.sim());
        assert_eq!((g.view().pods, g.view().going, g.view().lag.as_str()), (1, 0, ""), "settled: nothing to explain");
    }

    #[test]
    fn past_teaching_scale_nothing_is_counted_so_nothing_is_missing() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        let mut g = GapHistory::new("default", "web");
        assert!(s.execute("kubectl scale deployment web --replicas=400").ok);
        s.settle(Duration::mins(5)).unwrap();
        g.observe(s.sim());
        assert!(!crate::view::story::applies(s.sim()));
        assert_eq!((g.view().desired, g.view().counted, g.view().missing(), g.view().extra()), (400, false, 0, 0));
    }

    #[test]
    fn the_gap_opens_on_scale_up_and_closes_when_the_pods_are_ready() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        let mut g = GapHistory::new("default", "web");
        g.observe(s.sim());
        assert_eq!((g.view().desired, g.view().ready, g.view().converged), (3, 0, false));
        s.settle(Duration::mins(2)).unwrap();
        assert!(g.observe(s.sim()));
        assert_eq!((g.view().desired, g.view().current, g.view().ready, g.view().converged), (3, 3, 3, true));
        assert_eq!(g.view().ready_cell, "3/3");
        s.execute("kubectl scale deployment web --replicas=5");
        g.observe(s.sim());
        assert_eq!((g.view().desired, g.view().ready, g.view().converged), (5, 3, false));
        s.settle(Duration::mins(2)).unwrap();
        g.observe(s.sim());
        assert_eq!((g.view().desired, g.view().current, g.view().ready), (5, 5, 5));
        assert!(!g.observe(s.sim()), "no change, no update");
    }

    #[test]
    fn only_changes_are_kept_and_old_points_fall_out_of_the_window() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        let mut g = GapHistory::new("default", "web");
        s.settle(Duration::mins(2)).unwrap();
        for _ in 0..10 {
            s.advance(Duration::secs(1));
            g.observe(s.sim());
        }
        assert_eq!(g.points().count(), 1, "ten quiet samples, one point");
        s.execute("kubectl scale deployment web --replicas=4");
        g.observe(s.sim());
        assert_eq!(g.points().count(), 2);
        s.advance(Duration::mins(5));
        g.observe(s.sim());
        let ts: Vec<u64> = g.points().map(|p| p.t).collect();
        assert!((1..=2).contains(&ts.len()), "{ts:?}");
        assert!(ts[ts.len() - 1] + WINDOW_MS >= s.sim().now().0 || ts.len() == 1);
    }

    #[test]
    fn the_chart_draws_steps_ending_at_now() {
        let mut g = GapHistory::new("default", "web");
        g.points = [
            GapSample { t: 0, desired: 3, current: 3, ready: 3 },
            GapSample { t: 60_000, desired: 3, current: 3, ready: 2 },
            GapSample { t: 90_000, desired: 3, current: 3, ready: 3 },
        ]
        .into();
        let c = g.chart(120_000, 240, 64);
        assert_eq!(c.max, 3);
        assert_eq!(c.desired, "M0 2H240");
        // 60 s into a 120 s window on 240 px is x = 120; ready 2 of 3 sits at 62 - 2*60/3 = 22.
        assert_eq!(c.ready, "M0 2H120V22H180V2H240");
        assert_eq!(c.span, 120_000);
        let empty = GapHistory::new("default", "web").chart(0, 240, 64);
        assert_eq!((empty.desired.as_str(), empty.max, empty.span), ("", 1, MIN_SPAN_MS));
        // Twenty seconds into a run, the chart spans those twenty seconds.
        g.points = [GapSample { t: 0, desired: 3, current: 3, ready: 3 }, GapSample { t: 10_000, desired: 3, current: 3, ready: 2 }].into();
        let young = g.chart(20_000, 240, 64);
        assert_eq!((young.span, young.ready.as_str()), (20_000, "M0 2H120V22H240"));
        // Four seconds in, the shortest span (ten seconds) ends at now: the lines start at 60%.
        let new = g.chart(4_000, 240, 64);
        assert_eq!((new.span, new.desired.as_str()), (MIN_SPAN_MS, "M144 2H240"));
    }

    #[test]
    fn a_status_no_loop_updates_is_called_stale_once_it_has_stood_still() {
        // The edge-triggered widget: every web pod is deleted at 12 s and the news is lost.
        let mut s = Session::new(Scenario::builtin("dropped-events-edge").unwrap(), Some(11)).unwrap();
        let mut g = GapHistory::new("default", "web");
        for _ in 0..100 {
            s.advance(Duration::millis(500));
            g.observe(s.sim());
            if s.sim().now().0 == 14_000 {
                assert_eq!(g.view().stale, "", "right after the deletes the status may still catch up");
            }
        }
        assert_eq!((g.view().desired, g.view().current, g.view().ready), (3, 3, 3), "the status still claims three");
        assert_eq!(g.view().stale, "status says 3 ready, but 0 pods exist: no loop has updated it");
        // The level-triggered twin closes the gap, and its status is the truth.
        let mut s = Session::new(Scenario::builtin("dropped-events").unwrap(), Some(11)).unwrap();
        let mut g = GapHistory::new("default", "web");
        for _ in 0..100 {
            s.advance(Duration::millis(500));
            g.observe(s.sim());
        }
        assert!(g.view().converged);
        assert_eq!(g.view().stale, "");
    }

    #[test]
    fn a_steady_cluster_is_counted_once_while_only_leases_and_node_statuses_are_written() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        let mut g = GapHistory::new("default", "web");
        s.settle(Duration::mins(2)).unwrap();
        // Past the status's quiet time, a page frame every 16 ms of simulated time for a minute:
        // the store keeps moving (leases, node statuses) but no pod changes.
        s.advance(Duration::millis(STALE_AFTER_MS));
        let revision = s.sim().api().revision();
        for _ in 0..3_750 {
            s.advance(Duration::millis(16));
            g.observe(s.sim());
        }
        assert!(s.sim().api().revision() > revision + 10, "the store was written meanwhile");
        assert_eq!(g.pod_walks, 1, "the pods were walked once, not once per frame");
        assert_eq!(g.view().stale, "");
        // A pod that changes is counted again.
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.clone();
        s.execute(&format!("kubectl delete pod {victim} --wait=false"));
        s.advance(Duration::millis(16));
        g.observe(s.sim());
        assert_eq!(g.pod_walks, 2, "a pod write is seen");
        // A new run (a new store, its revisions from the start) is counted afresh.
        let mut fresh = Session::new(Scenario::builtin("default").unwrap(), Some(2)).unwrap();
        fresh.settle(Duration::secs(20)).unwrap_or_default();
        fresh.advance(Duration::millis(STALE_AFTER_MS));
        let before = g.pod_walks;
        g.observe(fresh.sim());
        fresh.advance(Duration::millis(STALE_AFTER_MS + 16));
        g.observe(fresh.sim());
        assert!(g.pod_walks > before, "another run's pods are counted");
    }

    #[test]
    fn a_working_loop_never_looks_stale() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        let mut g = GapHistory::new("default", "web");
        s.settle(Duration::mins(2)).unwrap();
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.clone();
        s.execute(&format!("kubectl delete pod {victim}"));
        for _ in 0..60 {
            s.advance(Duration::millis(250));
            g.observe(s.sim());
            assert_eq!(g.view().stale, "", "at {}", s.sim().now().0);
        }
        assert_eq!(stale_note(3, 2, 3, 3), "status says 2 ready, but 3 of its 3 pods are: no loop has updated it");
        assert_eq!(stale_note(2, 2, 1, 1), "status says 2 ready, but 1 pod exists: no loop has updated it");
    }
}
