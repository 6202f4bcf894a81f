//! Story mode in a fake frame loop: the page's engine as it will drive `view::story::Story` —
//! 16.7 ms frames at 1×, advancing the session delivery by delivery as the engine's
//! `run_until` does, standing still while the story holds a beat — on the default scenario.

use kubeloop::command::Session;
use kubeloop::model::{Duration, Kind, ObjectKey, Time};
use kubeloop::sim::MessageKind;
use kubeloop::view::story::{self, hold_ms, Caption, Story, MIN_DWELL_MS};
use kubeloop::view::ClusterTracker;

const FRAME_MS: f64 = 16.7;
/// Give up after this much wall time: a chain that long could not be followed anyway.
const WALL_LIMIT_MS: f64 = 60_000.0;

/// A caption as it came on show: when (wall ms), and what the cluster view showed meanwhile.
#[derive(Clone, Debug, PartialEq)]
struct Shown {
    wall: f64,
    /// The simulated time then.
    at: Time,
    caption: Caption,
    /// Pods in the cluster view's unscheduled list in the frames this caption was held.
    unscheduled: Vec<String>,
}

/// The engine's frame loop, reduced to what story mode touches.
struct Player {
    session: Session,
    story: Story,
    cluster: ClusterTracker,
    wall: f64,
    carry: f64,
    speed: f64,
    shown: Vec<Shown>,
}

impl Player {
    fn new() -> Player {
        let scenario = kubeloop::view::page::scenario("default").unwrap();
        let mut session = Session::new(scenario, None).unwrap();
        session.settle(Duration::mins(2)).unwrap();
        let mut story = Story::new();
        story.skip(session.sim());
        let mut cluster = ClusterTracker::new();
        cluster.update(session.sim());
        Player { session, story, cluster, wall: 0.0, carry: 0.0, speed: 1.0, shown: Vec::new() }
    }

    /// A console command: run, then observed as the engine's `observe` does after it.
    fn run(&mut self, line: &str) {
        assert!(self.session.execute(line).ok, "{line}");
        self.observe();
    }

    /// One animation frame.
    fn frame(&mut self) {
        self.wall += FRAME_MS;
        assert!(story::applies(self.session.sim()));
        if self.story.holding(self.wall, self.speed) {
            self.carry = 0.0;
        } else {
            self.carry += FRAME_MS * self.speed;
            let whole = self.carry.floor();
            self.carry -= whole;
            let target = self.session.sim().now() + Duration(whole as u64);
            if !self.run_until(target) {
                self.carry = 0.0;
            }
        }
        self.observe();
    }

    /// The engine's `run_until`: every delivery due by `target`, stopping right after one that
    /// made a beat (false then).
    fn run_until(&mut self, target: Time) -> bool {
        loop {
            match self.session.sim().next_time() {
                Some(t) if t <= target => {
                    self.session.advance_to(t);
                    if self.story.observe(self.session.sim()).is_some() {
                        return false;
                    }
                }
                _ => {
                    self.session.advance_to(target);
                    return true;
                }
            }
        }
    }

    /// The engine's `observe` and `build`: the trackers catch up, the caption is drawn.
    fn observe(&mut self) {
        self.story.observe(self.session.sim());
        self.cluster.update(self.session.sim());
        let unscheduled: Vec<String> = self.cluster.view().unscheduled.iter().map(|p| p.name.clone()).collect();
        let Some(caption) = self.story.caption().cloned() else { return };
        match self.shown.last_mut() {
            Some(last) if last.caption == caption => last.unscheduled.extend(unscheduled),
            _ => self.shown.push(Shown { wall: self.wall, at: self.session.sim().now(), caption, unscheduled }),
        }
    }

    /// Frames until `done`, or the wall limit. The wall time it took.
    fn play_until(&mut self, done: impl Fn(&Session) -> bool) -> f64 {
        let start = self.wall;
        while !done(&self.session) {
            assert!(self.wall - start < WALL_LIMIT_MS, "not done after {WALL_LIMIT_MS} ms of wall time: {:#?}", self.texts());
            self.frame();
        }
        self.wall - start
    }

    fn texts(&self) -> Vec<&str> {
        self.shown.iter().map(|s| s.caption.text.as_str()).collect()
    }

    fn pod_status(&self, name: &str) -> Option<String> {
        let pod = self.session.sim().api().get(&ObjectKey::new(Kind::Pod, "default", name))?;
        Some(kubeloop::command::printers::pod_status(pod.as_pod()?))
    }

    fn first_pod(&self) -> String {
        self.session.sim().objects(Kind::Pod).next().unwrap().meta().name.to_string()
    }
}

/// Kills the first pod and plays until its replacement is Running. The player, the wall time
/// it took, the victim and the replacement.
fn kill() -> (Player, f64, String, String) {
    let mut p = Player::new();
    let victim = p.first_pod();
    let started = p.session.sim().now();
    p.run(&format!("kubectl delete pod {victim}"));
    let wall = p.play_until(|s| {
        let story = s.sim().objects(Kind::Pod).filter(|o| o.meta().creation_timestamp.is_some_and(|t| t >= started));
        story.filter_map(|o| o.as_pod()).any(|pod| kubeloop::command::printers::pod_status(pod) == "Running")
    });
    let replacement = p.story.replacements().next().expect("the killed pod is linked to its replacement").replacement.clone();
    (p, wall, victim, replacement)
}

fn index_of(p: &Player, component: &str) -> usize {
    p.shown.iter().position(|s| s.caption.component == component).unwrap_or_else(|| panic!("no caption from {component}: {:#?}", p.texts()))
}

#[test]
fn after_a_kill_the_replicaset_controller_scheduler_and_kubelet_speak_in_that_order() {
    let (p, _, victim, replacement) = kill();
    assert_eq!(p.shown[0].caption.text, format!("kubectl: delete pod {}", story::short_name(&victim)));
    let node = p.session.sim().api().get(&ObjectKey::new(Kind::Pod, "default", &replacement)).unwrap();
    let node = node.as_pod().unwrap().spec.node_name.clone().unwrap();
    let rs = index_of(&p, "kube-controller-manager/replicaset-controller");
    let scheduler = index_of(&p, "kube-scheduler");
    let kubelet = p
        .shown
        .iter()
        .position(|s| s.caption.component == format!("kubelet-{node}") && s.caption.object == format!("pod/{replacement}"))
        .expect("the chosen node's kubelet");
    assert!(rs < scheduler && scheduler < kubelet, "{:#?}", p.texts());
    assert_eq!(p.shown[rs].caption.text, "ReplicaSet controller: 2 of 3 → creating 1");
    assert_eq!(p.shown[scheduler].caption.text, format!("kube-scheduler: bind {} → {node}", story::short_name(&replacement)));
    assert_eq!(p.pod_status(&replacement).as_deref(), Some("Running"));
}

#[test]
fn the_replacement_waits_unscheduled_while_the_replicaset_controllers_beat_is_held() {
    let (p, _, _, replacement) = kill();
    let rs = &p.shown[index_of(&p, "kube-controller-manager/replicaset-controller")];
    assert_eq!(rs.caption.object, format!("pod/{replacement}"));
    // Drawn in every frame of the beat: created, not yet bound.
    let frames = rs.unscheduled.iter().filter(|name| **name == replacement).count();
    let held = hold_ms(&rs.caption);
    assert!(held >= 1500.0, "long enough to read: {held} ms");
    assert!(frames as f64 >= held / FRAME_MS - 1.0, "unscheduled in {frames} frames of the beat: {:?}", rs.unscheduled);
    assert!(rs.unscheduled.iter().all(|name| *name == replacement), "{:?}", rs.unscheduled);
    let bind = &p.shown[index_of(&p, "kube-scheduler")];
    assert!(bind.unscheduled.is_empty(), "bound during the scheduler's beat: {:?}", bind.unscheduled);
}

#[test]
fn the_kill_chain_takes_eight_beats_each_held_to_be_read_and_well_under_30_seconds() {
    let (p, wall, _, replacement) = kill();
    // kubectl's delete, the ReplicaSet controller's create, the bind, the kubelet starting the
    // pod, ContainerCreating, the old pod Completed and removed, and Running: seven beats held
    // before the eighth (Running) ends the chain, and half a second to a second of simulated
    // time between them (the image is on the node already; how long depends on the seed's draws).
    assert_eq!(p.shown.len(), 8, "{:#?}", p.texts());
    assert_eq!(
        p.shown.last().unwrap().caption.text,
        format!("kubelet {}: {} Running", node(&p, &replacement), story::short_name(&replacement))
    );
    // Each of the seven held for its reading time; between beats the simulation runs at 1×, so
    // its ~1 s of simulated time costs as much wall time; each beat may begin a frame or two late.
    let simulated = p.shown.last().unwrap().at.since(p.shown[0].at).0 as f64;
    let held: f64 = p.shown[..7].iter().map(|s| hold_ms(&s.caption)).sum();
    assert!(held >= 7.0 * MIN_DWELL_MS);
    let expected = held + simulated;
    assert!((400.0..1_500.0).contains(&simulated), "{simulated} ms of simulated time");
    assert!(wall >= expected && wall <= expected + 8.0 * 2.0 * FRAME_MS, "{wall} ms of wall time, expected about {expected}");
    assert!(wall < 20_000.0, "well under the 30 s the issue allows: {wall} ms");
}

fn node(p: &Player, pod: &str) -> String {
    let pod = p.session.sim().api().get(&ObjectKey::new(Kind::Pod, "default", pod)).unwrap();
    pod.as_pod().unwrap().spec.node_name.clone().unwrap()
}

#[test]
fn noise_never_yields_a_caption() {
    let (mut p, _, _, _) = kill();
    let trace = p.session.sim().trace();
    for s in &p.shown {
        let hop = trace.recent().find(|m| m.seq == s.caption.seq).expect("the hop is still in the trace");
        assert!(matches!(hop.kind, MessageKind::EtcdWrite | MessageKind::Watch), "{hop:?} made {:?}", s.caption);
        assert!(!hop.object.starts_with("event/") && !hop.object.starts_with("lease/"), "{hop:?} made {:?}", s.caption);
    }
    // Settled again: 30 s of wall time of lease renewals, node status and Event writes.
    p.play_until(|s| s.sim().is_settled());
    let (count, shown) = (p.session.sim().trace().count(), p.shown.len());
    let until = p.wall + 30_000.0;
    while p.wall < until {
        p.frame();
    }
    assert!(p.session.sim().trace().count() > count + 10, "leases were renewed");
    let later: Vec<&str> = p.texts()[shown..].to_vec();
    // Only the gap closing may still come, once.
    assert!(later.iter().all(|t| t.starts_with("Deployment controller: web 3/3 ready")) && later.len() <= 1, "{later:#?}");
}

#[test]
fn the_same_run_twice_tells_the_same_story() {
    let (a, wall_a, _, _) = kill();
    let (b, wall_b, _, _) = kill();
    assert_eq!(a.shown, b.shown);
    assert_eq!(wall_a, wall_b);
    assert_eq!(a.session.sim().trace().hash(), b.session.sim().trace().hash());
}

#[test]
fn story_mode_leaves_the_trace_as_it_was() {
    let (p, _, victim, _) = kill();
    // The same commands at the same simulated times, without a story: the same trace.
    let scenario = kubeloop::view::page::scenario("default").unwrap();
    let mut plain = Session::new(scenario, None).unwrap();
    plain.settle(Duration::mins(2)).unwrap();
    assert!(plain.execute(&format!("kubectl delete pod {victim}")).ok);
    plain.advance_to(p.session.sim().now());
    assert_eq!(plain.sim().trace().hash(), p.session.sim().trace().hash());
}

#[test]
fn scaling_three_to_five_is_told_pod_by_pod() {
    let mut p = Player::new();
    p.run("kubectl scale deployment web --replicas=5");
    let wall = p.play_until(|s| s.sim().is_settled());
    let texts = p.texts();
    let rs = p.session.sim().objects(Kind::ReplicaSet).next().unwrap().meta().name.to_string();
    assert_eq!(
        texts[..4],
        [
            "kubectl: scale deployment web 3 → 5",
            &format!("Deployment controller: scale replicaset {rs} 3 → 5"),
            "ReplicaSet controller: 3 of 5 → creating 2",
            "ReplicaSet controller: 4 of 5 → creating 1",
        ],
        "{texts:#?}"
    );
    let count = |suffix: &str| texts.iter().filter(|t| t.ends_with(suffix)).count();
    assert_eq!((count(" ContainerCreating"), count(" Running")), (2, 2), "{texts:#?}");
    assert_eq!(texts.iter().filter(|t| t.starts_with("kube-scheduler: bind")).count(), 2);
    assert_eq!(texts.last(), Some(&"Deployment controller: web 5/5 ready"));
    // 2 + 2 creates + 2 × (bind, start, ContainerCreating, Running) + the gap closing.
    assert_eq!(texts.len(), 13, "{texts:#?}");
    assert!(wall > 12.0 * MIN_DWELL_MS && wall < 40_000.0, "{wall} ms");
}

#[test]
fn stepping_tells_the_same_story_as_playing() {
    let (played, _, victim, _) = kill();
    let scenario = kubeloop::view::page::scenario("default").unwrap();
    let mut session = Session::new(scenario, None).unwrap();
    session.settle(Duration::mins(2)).unwrap();
    let mut story = Story::new();
    story.skip(session.sim());
    assert!(session.execute(&format!("kubectl delete pod {victim}")).ok);
    let mut stepped = Vec::new();
    while stepped.len() < played.shown.len() {
        let beat = story.step(&mut session).expect("a next meaningful hop");
        assert_eq!(session.sim().now().max(beat.at), session.sim().now());
        stepped.push(beat.caption);
    }
    let captions: Vec<Caption> = played.shown.iter().map(|s| s.caption.clone()).collect();
    assert_eq!(stepped, captions);
}

/// The caption strip's line when no hop is being told (the latest thing any loop did) names
/// who did it once: `kube-scheduler: …` and `kubelet-node-2: …` for a process whose one loop
/// bears its name, `kube-controller-manager · replicaset-controller: …` for a controller.
#[test]
fn the_latest_action_names_its_doer_once() {
    use kubeloop::view::loops::components;
    use kubeloop::view::stage::last_action;
    let mut p = Player::new();
    let victim = p.first_pod();
    assert!(p.session.execute(&format!("kubectl delete pod {victim}")).ok);
    let mut said = Vec::new();
    let until = p.session.sim().now() + Duration::secs(5);
    while let Some(t) = p.session.sim().next_time().filter(|t| *t <= until) {
        p.session.advance_to(t);
        if let Some(text) = last_action(&components(p.session.sim())) {
            if said.last() != Some(&text) {
                said.push(text);
            }
        }
    }
    let solo = |prefix: &str| said.iter().any(|t| t.starts_with(prefix) && !t.contains(" · "));
    assert!(solo("kube-scheduler: ") && solo("kubelet-node-"), "{said:#?}");
    assert!(said.iter().any(|t| t.starts_with("kube-controller-manager · replicaset-controller: ")), "{said:#?}");
    for text in &said {
        let (who, _) = text.split_once(": ").expect("who: what");
        if let Some((process, loop_name)) = who.split_once(" · ") {
            assert_ne!(process, loop_name, "said twice: {text}");
        }
    }
}

/// Every caption the player showed but the last, with the wall time it stayed up.
fn held(p: &Player) -> Vec<(&Caption, f64)> {
    p.shown.windows(2).map(|w| (&w[0].caption, w[1].wall - w[0].wall)).collect()
}

/// Scale and rollout, like a kill: each hop stays up long enough to be read at 1×.
#[test]
fn every_hop_of_a_scale_and_a_rollout_is_held_long_enough_to_read() {
    for line in ["kubectl scale deployment web --replicas=5", "kubectl set image deployment/web nginx=nginx:1.16.1"] {
        let mut p = Player::new();
        p.run(line);
        // A rollout at reading pace is a minute and more of captions: its first dozen hops do.
        while p.shown.len() <= 12 && !p.session.sim().is_settled() {
            assert!(p.wall < WALL_LIMIT_MS, "{line}: {:#?}", p.texts());
            p.frame();
        }
        let held = held(&p);
        assert!(held.len() >= 10, "{line}: {:#?}", p.texts());
        for (caption, ms) in held {
            let text = &caption.text;
            assert!(ms >= 1500.0, "{line}: \"{text}\" was up {ms} ms");
            assert!(ms >= hold_ms(caption), "{line}: \"{text}\" was up {ms} ms, less than its reading time");
        }
    }
}
