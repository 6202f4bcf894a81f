//! The built-in lessons played end to end against a command session, as a learner who answers
//! every question right would play them: every command runs, every check passes in time, and
//! every answer is graded right (measured answers against what the cluster really did).
//!
//! Lessons 3, 4, 5 and 7 use the failure verbs of issue 5 (`sim stop`, `sim node fail`,
//! `sim watch drop`, `sim mode`) and the node lifecycle controller.

use kubeloop::command::{Scenario, Session};
use kubeloop::lesson::run::{play, Phase, Score};
use kubeloop::lesson::{Answer, Lesson, LessonRun, Measure, Question};
use kubeloop::model::{Duration, Kind, Pod, PodPhase};

/// The right answer: the stated one, or for a measured one the number this seed produces.
fn right<'a>(measured: &'a [(usize, &'a str)]) -> impl Fn(usize, &Question) -> String + 'a {
    move |step, q| match &q.answer {
        Answer::Stated(a) => a.clone(),
        Answer::Measured { .. } => measured.iter().find(|(s, _)| *s == step).map(|(_, a)| a.to_string()).unwrap_or_default(),
    }
}

fn session_for(lesson: &Lesson) -> Session {
    let scenario = Scenario::builtin(&lesson.scenario).expect("built-in scenario");
    Session::new(scenario, lesson.seed).expect("scenario starts")
}

fn play_builtin(name: &str, measured: &[(usize, &str)], tasks: &dyn Fn(usize) -> Vec<String>) -> (Score, Vec<String>) {
    let lesson = Lesson::builtin(name).expect("built-in lesson");
    let mut session = session_for(&lesson);
    play(&mut session, lesson, Duration::millis(100), Duration::mins(10), &right(measured), tasks)
}

fn questions(name: &str) -> u32 {
    Lesson::builtin(name).unwrap().steps.iter().filter(|s| s.question.is_some()).count() as u32
}

fn checks(name: &str) -> u32 {
    Lesson::builtin(name).unwrap().steps.iter().filter(|s| s.check.is_some()).count() as u32
}

fn all_right(name: &str, score: Score) {
    let (q, c) = (questions(name), checks(name));
    assert_eq!(score, Score { answers_right: q, questions: q, checks_passed: c, checks: c }, "{name}");
}

#[test]
fn lesson_1_desired_state() {
    // Right after `kubectl scale` returns, the ReplicaSet controller has not acted yet: 3 pods.
    let (score, errors) = play_builtin("desired-state", &[(1, "3")], &|step| match step {
        2 => vec!["kubectl scale deployment/web --replicas=2".into()],
        _ => vec![],
    });
    assert_eq!(errors, Vec::<String>::new());
    all_right("desired-state", score);
}

#[test]
fn lesson_1_a_wrong_prediction_is_graded_wrong() {
    let lesson = Lesson::builtin("desired-state").unwrap();
    let mut session = session_for(&lesson);
    let (score, errors) = play(&mut session, lesson, Duration::millis(100), Duration::mins(10), &|_, _| "5".into(), &|_| {
        vec!["kubectl scale deployment/web --replicas=2".into()]
    });
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!((score.answers_right, score.questions), (0, 1));
}

#[test]
fn lesson_2_worked_example() {
    // One second after the delete the replacement exists and the old pod has finished terminating.
    let (score, errors) = play_builtin("worked-example", &[(1, "3")], &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("worked-example", score);
}

#[test]
fn lesson_6_rolling_update() {
    let (score, errors) = play_builtin("rolling-update", &[], &|step| match step {
        3 => vec!["kubectl rollout undo deployment/web".into()],
        _ => vec![],
    });
    assert_eq!(errors, Vec::<String>::new());
    all_right("rolling-update", score);
}

#[test]
fn the_measured_answers_read_the_pods() {
    let lesson = Lesson::builtin("worked-example").unwrap();
    let q = lesson.steps[1].question.as_ref().unwrap();
    assert!(matches!(&q.answer, Answer::Measured { measure: Measure::Pods(_), at: Some(at) } if *at == Duration::secs(1)));
}

#[test]
fn lesson_3_level_vs_edge() {
    let (score, errors) = play_builtin("level-vs-edge", &[(1, "2")], &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("level-vs-edge", score);
}

#[test]
fn lesson_4_controller_restart() {
    let (score, errors) = play_builtin("controller-restart", &[(1, "3")], &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("controller-restart", score);
}

#[test]
fn lesson_5_which_loop() {
    let (score, errors) = play_builtin("which-loop", &[], &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("which-loop", score);
}

/// Plays the step's clock in 100 ms ticks until the run is in `phase`, at most `limit`.
fn tick_until(s: &mut Session, run: &mut LessonRun, phase: Phase, limit: Duration) {
    let deadline = s.sim().now() + limit;
    while run.phase() != phase {
        assert!(s.sim().now() < deadline, "step {} never reached {phase:?} (at {:?})", run.index(), run.phase());
        s.advance(Duration::millis(100));
        run.poll(s.sim());
    }
}

fn web_pods(s: &Session) -> Vec<Pod> {
    s.sim()
        .objects(Kind::Pod)
        .filter_map(|o| o.as_pod().cloned())
        .filter(|p| p.metadata.labels.get("app").is_some_and(|v| v == "web") && !p.metadata.is_deleting())
        .collect()
}

/// Each case of "which loop stopped turning?" must show its symptom in the cluster by the time
/// its question opens, and keep the stopped component concealed until it is answered.
#[test]
fn lesson_5_every_case_shows_its_symptom_while_the_stopped_component_stays_concealed() {
    let lesson = Lesson::builtin("which-loop").unwrap();
    let mut s = session_for(&lesson);
    let mut run = LessonRun::new(lesson);
    assert_eq!(run.start(&mut s), Vec::<String>::new());
    tick_until(&mut s, &mut run, Phase::Passed, Duration::mins(2));
    for case in 1..=5 {
        assert_eq!(run.next(&mut s), Ok(vec![]), "case {case}");
        assert!(run.view().conceal_components, "case {case}: concealed from the start");
        tick_until(&mut s, &mut run, Phase::Diagnose, Duration::mins(1));
        assert!(run.view().conceal_components && run.view().asking, "case {case}: concealed while asked");
        let pods = web_pods(&s);
        match case {
            1 => {
                let unbound = pods.iter().filter(|p| p.node_name().is_none()).count();
                assert_eq!(unbound, 2, "case 1: the two new pods wait with no node");
            }
            2 => {
                let wants = s.sim().objects(Kind::Deployment).find_map(|o| o.as_deployment().and_then(|d| d.spec.replicas));
                assert_eq!(wants, Some(5), "case 2: the Deployment wants five");
                assert_eq!(pods.len(), 3, "case 2: yet three pods exist");
                let rs = s.sim().objects(Kind::ReplicaSet).find_map(|o| o.as_replica_set().and_then(|r| r.spec.replicas));
                assert_eq!(rs, Some(3), "case 2: and the ReplicaSet was never told");
            }
            3 => {
                let stuck: Vec<&Pod> =
                    pods.iter().filter(|p| p.node_name() == Some("node-1") && p.status.phase != Some(PodPhase::Running)).collect();
                assert!(!stuck.is_empty(), "case 3: a new pod is bound to node-1 and never starts");
                assert!(stuck.iter().all(|p| p.status.container_statuses.is_empty()), "case 3: node-1's kubelet never touched them");
            }
            4 => {
                let out = s.execute("kubectl get pods");
                assert!(!out.ok, "case 4: every request fails: {out:?}");
            }
            _ => {
                // The endpoints are right: three ready pods, the deleted one gone.
                let ready = Measure::parse(&serde_json::json!({"endpoints": {"service": "web", "state": "ready"}}), "m").unwrap();
                assert_eq!(ready.read(s.sim(), s.sim().now()), 3, "case 5: the EndpointSlice controller turned");
                let listed: Vec<String> = pods.iter().map(|p| p.metadata.name.to_string()).collect();
                let sim = s.sim();
                let recent: Vec<_> = sim.recent_connections().filter(|c| c.at.0 + 5_000 >= sim.now().0).collect();
                let stale: Vec<_> = recent.iter().filter(|c| c.backend.as_ref().is_some_and(|b| !listed.contains(b))).collect();
                assert!(!stale.is_empty(), "case 5: connections still go to the deleted pod");
                assert!(
                    stale.iter().all(|c| c.from_node == "node-1" && c.outcome == kubeloop::sim::traffic::Outcome::TimedOut),
                    "case 5: only from node-1, timing out"
                );
                let newest = listed.iter().find(|p| {
                    recent.iter().any(|c| c.from_node == "node-2" && c.backend.as_ref() == Some(*p))
                        && !recent.iter().any(|c| c.from_node == "node-1" && c.backend.as_ref() == Some(*p))
                });
                assert!(newest.is_some(), "case 5: the replacement gets node-2's traffic and none of node-1's");
            }
        }
        let answer = match &run.lesson().steps[run.index()].question.as_ref().unwrap().answer {
            Answer::Stated(a) => a.clone(),
            Answer::Measured { .. } => unreachable!("which-loop states its answers"),
        };
        assert_eq!(run.answer(&mut s, &answer), Ok(vec![]));
        assert!(!run.view().conceal_components, "case {case}: answered, nothing left to conceal");
    }
}

#[test]
fn lesson_7_node_dies() {
    let (score, errors) = play_builtin("node-dies", &[], &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("node-dies", score);
}

#[test]
fn lesson_8_service_loop() {
    // Fifteen seconds after the kill the replacement is ready and answering: three pods. Fifteen
    // seconds after a readiness probe starts failing, the pod is out of every node's rules: two.
    // (Each answer is measured over 5 s of traffic, ~20 connections at 4 a second: enough that a
    // pod in the rules is all but sure to be picked at least once, whatever the seed draws.)
    let (score, errors) = play_builtin("service-loop", &[(1, "3"), (2, "2")], &|step| match step {
        3 => vec!["sim stop kube-proxy-node-1".into(), "kubectl delete pods -l app=web --wait=false".into()],
        _ => vec![],
    });
    assert_eq!(errors, Vec::<String>::new());
    all_right("service-loop", score);
}

#[test]
fn lesson_8_a_learner_who_thinks_running_means_served_is_graded_wrong() {
    let lesson = Lesson::builtin("service-loop").unwrap();
    let mut session = session_for(&lesson);
    let (score, errors) = play(&mut session, lesson, Duration::millis(100), Duration::mins(10), &|_, _| "3".into(), &|step| match step {
        3 => vec!["sim stop kube-proxy-node-1".into(), "kubectl delete pods -l app=web --wait=false".into()],
        _ => vec![],
    });
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!((score.answers_right, score.questions), (1, 2), "right about the kill, wrong about readiness");
}

/// The example lesson files the page loads by URL (`?lesson=examples/…`): the good one plays to a
/// passed check; the broken one is refused with the field that is wrong.
#[test]
fn the_example_lesson_files_served_next_to_the_page() {
    let lesson = Lesson::parse(include_str!("../www/examples/scale-lesson.yaml")).expect("the example lesson parses");
    let mut session = session_for(&lesson);
    let (score, problems) = play(&mut session, lesson, Duration::millis(100), Duration::mins(10), &right(&[]), &|_| Vec::new());
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!((score.checks_passed, score.checks), (1, 1));
    let err = Lesson::parse(include_str!("../www/examples/broken-lesson.yaml")).unwrap_err();
    assert!(err.contains("steps[0].check.pods.count: must be a whole number, got \"many\""), "{err}");
}

#[test]
fn lesson_10_which_controller() {
    let (score, errors) = play_builtin("which-controller", &[], &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("which-controller", score);
}

/// Each case of "which controller stopped?" must leave only its own loop's hop undone by the
/// time its question opens, with the process running and the stopped loop concealed.
#[test]
fn lesson_10_every_case_leaves_only_its_loops_hop_undone() {
    let lesson = Lesson::builtin("which-controller").unwrap();
    let mut s = session_for(&lesson);
    let mut run = LessonRun::new(lesson);
    assert_eq!(run.start(&mut s), Vec::<String>::new());
    tick_until(&mut s, &mut run, Phase::Passed, Duration::mins(2));
    let count = |s: &Session, kind: Kind| s.sim().objects(kind).count();
    for case in 1..=13 {
        assert_eq!(run.next(&mut s), Ok(vec![]), "case {case}");
        tick_until(&mut s, &mut run, Phase::Diagnose, Duration::mins(3));
        assert!(run.view().conceal_components && run.view().asking, "case {case}: concealed while asked");
        assert!(s.sim().is_running(&kubeloop::sim::ComponentId::ControllerManager), "case {case}: the process runs");
        let answer = match &run.lesson().steps[run.index()].question.as_ref().unwrap().answer {
            Answer::Stated(a) => a.clone(),
            Answer::Measured { .. } => unreachable!("which-controller states its answers"),
        };
        let manager = s.sim().controller_manager().expect("kube-controller-manager");
        let stopped: Vec<&str> = manager.controller_names().filter(|n| manager.is_stopped(n)).collect();
        assert_eq!(stopped, vec![answer.as_str()], "case {case}: exactly the answer is switched off");
        let pods = web_pods(&s);
        match case {
            1 => {
                let rs = s.sim().objects(Kind::ReplicaSet).find_map(|o| o.as_replica_set().and_then(|r| r.spec.replicas));
                assert_eq!((rs, pods.len()), (Some(5), 3), "case 1: the ReplicaSet says five, three pods exist");
            }
            2 => {
                assert_eq!(count(&s, Kind::ReplicaSet), 1, "case 2: no ReplicaSet for the new template");
                assert_eq!(pods.len(), 3);
            }
            3 => {
                assert_eq!(count(&s, Kind::Deployment), 0, "case 3: the Deployment is gone");
                assert_eq!((count(&s, Kind::ReplicaSet), pods.len()), (1, 3), "case 3: its ReplicaSet and pods are left");
            }
            4 => {
                let job_pods =
                    s.sim().objects(Kind::Pod).filter_map(|o| o.as_pod()).filter(|p| p.metadata.labels.get("job-name").is_some()).count();
                assert_eq!((count(&s, Kind::Job), job_pods), (1, 0), "case 4: a Job with no pod");
            }
            5 => {
                let nodes = s.sim().objects(Kind::Node).count();
                let agents: Vec<Pod> = s
                    .sim()
                    .objects(Kind::Pod)
                    .filter_map(|o| o.as_pod().cloned())
                    .filter(|p| p.metadata.labels.get("app").is_some_and(|v| v == "node-agent"))
                    .collect();
                assert_eq!((nodes, agents.len()), (3, 2), "case 5: three nodes, two agents");
                assert!(agents.iter().all(|p| p.node_name() != Some("node-3")), "case 5: none for node-3");
            }
            6 => {
                let pdb =
                    s.sim().objects(Kind::PodDisruptionBudget).find_map(|o| o.as_pod_disruption_budget().cloned()).expect("the budget");
                assert_eq!((pdb.status.current_healthy, pdb.status.disruptions_allowed), (0, 0), "case 6: no status written");
                let out = s.execute("kubectl drain node-1 --ignore-daemonsets --timeout=10s");
                assert!(!out.ok && out.stderr.contains("global timeout reached"), "case 6: the drain is refused: {out:?}");
            }
            7 => {
                let job = s.sim().objects(Kind::Job).find_map(|o| o.as_job().cloned()).expect("case 7: the Job is still there");
                assert!(job.status.completion_time.is_some(), "case 7: it finished");
            }
            8 => {
                let loaded =
                    s.sim().objects(Kind::Pod).filter_map(|o| o.as_pod()).filter(|p| p.metadata.name.starts_with("php-apache-")).count();
                let wants = s
                    .sim()
                    .objects(Kind::Deployment)
                    .find_map(|o| o.as_deployment().filter(|d| d.metadata.name == "php-apache").and_then(|d| d.spec.replicas));
                assert_eq!((wants, loaded), (Some(1), 1), "case 8: under 250% load the Deployment still asks for one");
                let out = s.execute("kubectl get hpa php-apache");
                assert!(out.stdout.contains("cpu: 0%/50%"), "case 8: the autoscaler's status is stale: {}", out.stdout);
            }
            9 => {
                let cron = s.sim().objects(Kind::CronJob).find_map(|o| o.as_cron_job().cloned()).expect("case 9: the CronJob");
                assert_eq!((count(&s, Kind::Job), cron.status.last_schedule_time), (0, None), "case 9: no Job and no schedule kept");
            }
            10 => {
                assert_eq!((count(&s, Kind::StatefulSet), count(&s, Kind::PersistentVolumeClaim)), (1, 0), "case 10: no claim");
                let db = s.sim().objects(Kind::Pod).filter_map(|o| o.as_pod()).filter(|p| p.metadata.name.starts_with("db-")).count();
                assert_eq!(db, 0, "case 10: and no pod");
            }
            11 => {
                let claim = s
                    .sim()
                    .objects(Kind::PersistentVolumeClaim)
                    .find_map(|o| o.as_persistent_volume_claim().cloned())
                    .expect("case 11: the claim");
                assert_eq!((claim.metadata.name.as_str(), claim.spec.volume_name.as_str()), ("data-db-0", ""), "case 11: unbound");
                let db: Vec<Pod> =
                    s.sim().objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).filter(|p| p.metadata.name.starts_with("db-")).collect();
                assert_eq!(db.len(), 1, "case 11: only db-0, waiting");
                assert!(db[0].node_name().is_none(), "case 11: not scheduled");
                let refused = s
                    .sim()
                    .objects(Kind::Event)
                    .filter_map(|o| o.as_event())
                    .any(|e| e.reason == "FailedScheduling" && e.message.contains("unbound immediate PersistentVolumeClaims"));
                assert!(refused, "case 11: the scheduler said why");
            }
            12 => {
                let nginx = s.sim().objects(Kind::Pod).filter_map(|o| o.as_pod()).filter(|p| p.metadata.name.starts_with("nginx-")).count();
                assert_eq!((count(&s, Kind::ReplicationController), nginx, pods.len()), (1, 0, 3), "case 12: no nginx pod, web's three");
            }
            _ => {
                assert_eq!(count(&s, Kind::Node), 1, "case 13: node-2 is gone");
                let stranded = pods.iter().filter(|p| p.node_name() == Some("node-2")).count();
                assert!(stranded > 0, "case 13: a pod is still bound to the vanished node");
                assert_eq!(pods.len(), 3, "case 13: and it still counts: no replacement");
            }
        }
        assert_eq!(run.answer(&mut s, &answer), Ok(vec![]));
        assert!(!run.view().conceal_components, "case {case}: answered, nothing left to conceal");
    }
}

#[test]
fn lesson_9_many_names() {
    let (score, errors) = play_builtin("many-names", &[(1, "3"), (3, "3"), (4, "3")], &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("many-names", score);
}

/// The predictions are measured, not stated: a learner who thinks the Job's finished pods are
/// replaced (or removed) is graded wrong by what the cluster did.
#[test]
fn lesson_9_a_learner_who_expects_finished_pods_to_go_is_graded_wrong() {
    let (score, _) = play_builtin("many-names", &[(1, "3"), (3, "3"), (4, "0")], &|_| vec![]);
    assert_eq!((score.answers_right, score.questions), (2, 3));
}

/// Lesson 11 runs an operator, which the core cannot start: the shell supplies the interpreter
/// (here, as in the native command line, a `python3` subprocess), running the lesson's solution.
#[path = "../src/bin/kubeloop/operator_host.rs"]
#[allow(dead_code)]
mod operator_host;

fn python_available() -> bool {
    let python = std::env::var("KUBELOOP_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into());
    let found = std::process::Command::new(python).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "python3 is needed for lesson 11 in CI");
        eprintln!("skipped: no python3");
    }
    found
}

/// Lesson 11's session, its operator run from `pick(operator)`'s text.
fn lesson_11_session(pick: fn(&kubeloop::lesson::LessonOperator) -> &str) -> (Lesson, Session) {
    let lesson = Lesson::builtin("write-your-own-loop").expect("built-in lesson");
    let mut session = session_for(&lesson);
    session.set_operator_interpreter(move |operator| {
        Ok(Box::new(operator_host::PythonInterpreter::for_source(&operator.file, pick(operator)))
            as Box<dyn kubeloop::operator::Interpreter>)
    });
    (lesson, session)
}

#[test]
fn lesson_11_write_your_own_loop() {
    if !python_available() {
        return;
    }
    let (lesson, mut session) = lesson_11_session(|o| &o.solution);
    // No pod serves the unread claim; two run again 30 s after the Deployment is deleted; two
    // while the operator is stopped; none a minute after the Website is deleted.
    let measured = [(1, "0"), (3, "2"), (4, "2"), (6, "0")];
    let (score, errors) = play(&mut session, lesson, Duration::millis(100), Duration::mins(10), &right(&measured), &|_| vec![]);
    assert_eq!(errors, Vec::<String>::new());
    all_right("write-your-own-loop", score);
    assert!(session.sim().violations().is_empty(), "{:?}", session.sim().violations());
}

#[test]
fn lesson_11_with_the_handler_left_to_write_does_not_pass() {
    if !python_available() {
        return;
    }
    let (lesson, mut session) = lesson_11_session(|o| &o.start);
    let (score, errors) = play(&mut session, lesson, Duration::millis(100), Duration::mins(10), &right(&[(1, "0")]), &|_| vec![]);
    assert!(errors.iter().any(|e| e.starts_with("step 2: check timed out")), "{errors:?}");
    assert!(score.checks_passed < score.checks, "{score:?}");
}

#[test]
fn lesson_11_without_an_interpreter_is_refused_at_its_operator_step() {
    let lesson = Lesson::builtin("write-your-own-loop").expect("built-in lesson");
    let mut session = session_for(&lesson);
    let (_, errors) = play(&mut session, lesson, Duration::millis(100), Duration::mins(10), &right(&[(1, "0")]), &|_| vec![]);
    assert_eq!(
        errors,
        vec![
            "this step runs the operator operator/website (website.py), and nothing here can run Python operators yet".to_string(),
            "step 2: refused: this step runs the operator operator/website (website.py), and nothing here can run Python operators yet"
                .to_string()
        ]
    );
}
