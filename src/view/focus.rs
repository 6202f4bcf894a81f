//! Which loops the stage shows unfolded, and which fold into a row of dials.
//!
//! Why it exists: the room has grown from five loops to more than twenty-five (kube-controller-
//! manager alone runs about twenty), and a row of words per loop — most of them "idle · queue 0 ·
//! nothing yet" — took the stage's best space at every size. A loop earns its row while it is
//! at work or just acted; an idle one is a dial in its process's folded row, named on hover and
//! focus, one click from its row again. This is the one place that decides, for every process
//! alike (a kube-controller-manager loop, kube-scheduler, a node's kubelet or kube-proxy, and
//! whatever process comes next: an operator, a static pod), so a new loop needs no new layout.

use crate::view::loops::{ComponentView, LoopView};

/// How long after its last action a loop stays unfolded, in simulated milliseconds: long enough
/// to read what it did at teaching speed.
pub const RECENT_MS: u64 = 10_000;

/// Whether a loop that last acted at `last_action_at` still counts as having acted recently.
pub fn recent(last_action_at: Option<u64>, now: u64) -> bool {
    last_action_at.is_some_and(|at| now.saturating_sub(at) < RECENT_MS)
}

/// What, besides a loop's own work, keeps it unfolded.
#[derive(Clone, Copy, Debug, Default)]
pub struct Focus<'a> {
    /// Loops the learner unfolded by hand, as `PROCESS/LOOP` ([`qualified`]).
    pub pinned: &'a [String],
    /// The caption's process and, if it names one, its loop (`view::stage::caption_target`).
    pub lit: Option<(&'a str, Option<&'a str>)>,
    /// A lesson is playing: every loop stays unfolded. Its steps name loops for the learner to
    /// find and watch, and when it asks which loop stopped, folding the idle ones would point at
    /// the stopped one (a stopped loop must not be told apart by its look).
    pub keep_all: bool,
}

/// A loop's name qualified by its process (`kube-controller-manager/replicaset-controller`),
/// as `sim stop` takes it and as a pin names it.
pub fn qualified(component: &str, loop_name: &str) -> String {
    format!("{component}/{loop_name}")
}

/// Why a loop is unfolded, or `None` when it folds into a dial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// It has work: a phase other than idle, or keys queued.
    Work,
    /// It acted within [`RECENT_MS`].
    Recent,
    /// It, or its process, is stopped (the stopped look is the lesson).
    Stopped,
    /// The caption is about it (or about its process, when that has one loop).
    Lit,
    /// The learner unfolded it.
    Pinned,
    /// A lesson is playing.
    Lesson,
}

/// Why loop `l` of process `c` is shown unfolded, if it is.
pub fn why(c: &ComponentView, l: &LoopView, focus: &Focus) -> Option<Why> {
    let solo = c.loops.len() == 1;
    if focus.keep_all {
        return Some(Why::Lesson);
    }
    if l.stopped || c.state != "running" {
        return Some(Why::Stopped);
    }
    if let Some((process, loop_name)) = focus.lit {
        if process == c.name && (loop_name == Some(l.name.as_str()) || (solo && loop_name.is_none())) {
            return Some(Why::Lit);
        }
    }
    if l.phase != "idle" || l.queue_depth > 0 {
        return Some(Why::Work);
    }
    if l.recent {
        return Some(Why::Recent);
    }
    focus.pinned.iter().any(|p| *p == qualified(&c.name, &l.name)).then_some(Why::Pinned)
}

/// A process's loops split into those shown as rows and those folded into dials, each in the
/// process's own order.
#[derive(Debug, Default, PartialEq)]
pub struct Folding<'a> {
    pub shown: Vec<(&'a LoopView, Why)>,
    pub folded: Vec<&'a LoopView>,
}

/// How process `c`'s loops are drawn under `focus`.
pub fn fold<'a>(c: &'a ComponentView, focus: &Focus) -> Folding<'a> {
    let mut out = Folding::default();
    for l in &c.loops {
        match why(c, l, focus) {
            Some(reason) => out.shown.push((l, reason)),
            None => out.folded.push(l),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;
    use crate::view::loops::components;

    fn settled() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        s.advance(Duration::secs(30));
        s
    }

    fn kcm(c: &[ComponentView]) -> &ComponentView {
        c.iter().find(|c| c.role == "controller-manager").unwrap()
    }

    fn shown<'a>(f: &Folding<'a>) -> Vec<&'a str> {
        f.shown.iter().map(|(l, _)| l.name.as_str()).collect()
    }

    #[test]
    fn recent_is_a_window_of_simulated_time() {
        assert!(!recent(None, 5_000));
        assert!(recent(Some(1_000), 1_000 + RECENT_MS - 1));
        assert!(!recent(Some(1_000), 1_000 + RECENT_MS));
    }

    #[test]
    fn a_settled_cluster_folds_its_idle_loops() {
        let s = settled();
        let c = components(s.sim());
        let f = fold(kcm(&c), &Focus::default());
        assert!(f.folded.len() >= 15, "most controllers are idle once settled: shown {:?}", shown(&f));
        assert_eq!(f.shown.len() + f.folded.len(), kcm(&c).loops.len(), "every loop is drawn, one way or the other");
        assert!(f.shown.iter().all(|(_, why)| matches!(why, Why::Work | Why::Recent)), "{:?}", f.shown);
        let scheduler = c.iter().find(|c| c.role == "scheduler").unwrap();
        assert!(fold(scheduler, &Focus::default()).shown.is_empty(), "kube-scheduler has nothing to bind");
    }

    #[test]
    fn a_kill_unfolds_the_replicaset_controller_until_it_has_been_idle_a_while() {
        let mut s = settled();
        let victim = s.sim().objects(crate::model::Kind::Pod).next().unwrap().meta().name.clone();
        assert!(s.execute(&format!("kubectl delete pod {victim}")).ok);
        s.advance(Duration::secs(2));
        let c = components(s.sim());
        assert!(shown(&fold(kcm(&c), &Focus::default())).contains(&"replicaset-controller"));
        s.settle(Duration::mins(2)).unwrap();
        s.advance(Duration::millis(RECENT_MS + 1_000));
        let c = components(s.sim());
        let f = fold(kcm(&c), &Focus::default());
        assert!(f.folded.iter().any(|l| l.name == "replicaset-controller"), "folded again: {:?}", shown(&f));
    }

    #[test]
    fn a_stopped_loop_a_caption_a_pin_and_a_lesson_keep_a_loop_unfolded() {
        let mut s = settled();
        assert!(s.execute("sim stop kube-controller-manager/job-controller").ok);
        let c = components(s.sim());
        let k = kcm(&c);
        let reason = |name: &str, focus: &Focus| why(k, k.loops.iter().find(|l| l.name == name).unwrap(), focus);
        assert_eq!(reason("job-controller", &Focus::default()), Some(Why::Stopped));
        assert_eq!(reason("cronjob-controller", &Focus::default()), None);
        let lit = Focus { lit: Some(("kube-controller-manager", Some("cronjob-controller"))), ..Focus::default() };
        assert_eq!(reason("cronjob-controller", &lit), Some(Why::Lit));
        assert_eq!(reason("daemonset-controller", &lit), None, "only the captioned loop");
        let pins = vec![qualified("kube-controller-manager", "cronjob-controller")];
        assert_eq!(reason("cronjob-controller", &Focus { pinned: &pins, ..Focus::default() }), Some(Why::Pinned));
        let lesson = Focus { keep_all: true, ..Focus::default() };
        assert!(fold(k, &lesson).folded.is_empty(), "a lesson folds nothing");
        // A process with one loop is lit by the caption's naming of the process alone.
        let kubelet = c.iter().find(|c| c.name == "kubelet-node-1").unwrap();
        let lit = Focus { lit: Some(("kubelet-node-1", None)), ..Focus::default() };
        assert_eq!(why(kubelet, &kubelet.loops[0], &lit), Some(Why::Lit));
        // A stopped process shows its loops as they stopped.
        assert!(s.execute("sim stop kube-scheduler").ok);
        let c = components(s.sim());
        let scheduler = c.iter().find(|c| c.role == "scheduler").unwrap();
        assert_eq!(fold(scheduler, &Focus::default()).shown.len(), 1);
    }
}
