//! Runs of a simulated day: what must not grow while a cluster is left running (a page left open
//! in a classroom for a day). Events are the one kind every change adds to; kube-apiserver's
//! `--event-ttl` (an hour) is what keeps them, and so etcd, flat.

use kubeloop::command::{scenario::Scenario, Session};
use kubeloop::model::{Duration, Kind, Time};

/// The replica counts the churn cycles through, one every `PERIOD`: up and down, so pods are
/// created and deleted, and their events written, all day long.
const REPLICAS: [u32; 4] = [6, 2, 8, 3];
const PERIOD: Duration = Duration::mins(5);

/// What etcd holds: every object, and the Events among them.
fn counts(session: &Session) -> (usize, usize) {
    let api = session.sim().api();
    (api.key_count(), api.count(Kind::Event))
}

#[test]
fn a_day_of_scaling_churn_keeps_the_store_flat() {
    let mut session = Session::new(Scenario::builtin("default").expect("the default scenario"), Some(3)).unwrap();
    let mut hourly = Vec::new();
    let mut step = 0usize;
    for hour in 1..=24u64 {
        while session.sim().now() < Time(0) + Duration::mins(60 * hour) {
            let replicas = REPLICAS[step % REPLICAS.len()];
            step += 1;
            let out = session.execute(&format!("kubectl scale deployment web --replicas={replicas}"));
            assert_eq!(out.stdout.trim(), "deployment.apps/web scaled", "{out:?}");
            session.settle(PERIOD).expect("each scale settles within its period");
            session.advance_to(Time(0) + Duration(PERIOD.0 * step as u64));
        }
        hourly.push(counts(&session));
    }
    let (first_hour, first_events) = hourly[0];
    let (last, last_events) = hourly[23];
    let most = hourly.iter().map(|(all, _)| *all).max().unwrap();
    println!("objects in etcd at the end of each hour (all, of which Events): {hourly:?}");
    println!("first hour {first_hour} ({first_events} Events), after 24 h {last} ({last_events} Events), most {most}");
    assert!(first_events > 100, "the churn writes events: {first_events}");
    assert!(most * 10 <= first_hour * 12, "the store stays within 1.2x the first hour's {first_hour}: at most {most}");
    assert!(last_events * 10 <= first_events * 12, "Events stay within 1.2x: {first_events} then {last_events}");
    assert!(session.sim().violations().is_empty(), "{:?}", session.sim().violations());
}
