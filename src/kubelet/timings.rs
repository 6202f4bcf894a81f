//! How long each thing a kubelet does takes, and the back-off arithmetic it shares with
//! client-go's `flowcontrol.Backoff`.
//!
//! Every duration is a field with a realistic default, so a scenario can make a slow registry or a
//! fast node; each draw is jittered from the simulation's seeded RNG, never from a clock.

use crate::model::{Duration, Time};
use crate::rng::Rng;

/// Durations of the kubelet's and the container runtime's work. Defaults are what a small
/// containerd node with a warm network shows; each is jittered by `jitter` unless said otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeletTimings {
    /// The fraction every step below is jittered by (±).
    pub jitter: f64,
    /// From the first sync to a ready sandbox: waiting for the service-account token volume to
    /// mount (the volume manager's 100 ms loops), `RunPodSandbox` (pause container) and CNI ADD.
    pub sandbox: Duration,
    /// A full image pull from a registry (`nginx` is ~70 MB over a good link: 2–3 s).
    pub image_pull: Duration,
    /// The jitter of a full pull, wider than the others: registries and links vary (±40%).
    pub image_pull_jitter: f64,
    /// A pull of an image already on the node (policy `Always`): only the manifest is fetched.
    pub image_repull: Duration,
    /// A pull that fails: the registry answers "not found" after one manifest round trip.
    pub image_pull_failure: Duration,
    /// `CreateContainer` (snapshot and config).
    pub container_create: Duration,
    /// `StartContainer` (the runc process starts).
    pub container_start: Duration,
    /// From the stop signal to the container's exit: nginx quits at once on SIGTERM/SIGQUIT.
    pub container_stop: Duration,
    /// After the containers stopped: `StopPodSandbox` (CNI DEL), volume unmount, and the pod
    /// worker reaching the terminated state, before the final status write.
    pub sandbox_teardown: Duration,
    /// PLEG relist period (`genericPLEG` relists every 1 s): how late the kubelet notices that
    /// a container started or exited, and so how late the status says so.
    pub pleg_relist_period: Duration,
    /// Pod worker requeue after a sync that failed (`backOffPeriod`, 10 s, jittered up to +50%).
    pub sync_error_backoff: Duration,
    /// The volume manager's reconciler pass (`reconcilerLoopSleepPeriod`, 100 ms): how soon a
    /// pod waiting for its volumes' ConfigMaps and Secrets to be listed looks again.
    pub volume_reconciler_period: Duration,
    /// A failed volume set-up is retried after 500 ms, doubling per failure up to 2 min 2 s
    /// (`initialDurationBeforeRetry` / `maxDurationBeforeRetry` of the operation executor's
    /// exponential back-off, pkg/volume/util/nestedpendingoperations).
    pub mount_backoff_initial: Duration,
    pub mount_backoff_max: Duration,
    /// Container restart back-off (`flowcontrol.NewBackOff(10s, 300s)`): first delay and cap.
    /// The entry resets when the container ran for twice the cap (10 min).
    pub crash_backoff_initial: Duration,
    pub crash_backoff_max: Duration,
    /// Image pull back-off: the same 10 s doubling to 300 s.
    pub image_backoff_initial: Duration,
    pub image_backoff_max: Duration,
    /// `NodeLease` renew interval (a quarter of the lease duration), jittered up to +4%.
    pub lease_renew_interval: Duration,
    pub lease_duration_seconds: i32,
    /// `nodeStatusUpdateFrequency`: how often the kubelet computes its node status (+4%).
    pub node_status_update_frequency: Duration,
    /// `nodeStatusReportFrequency`: how often an unchanged node status is posted anyway.
    pub node_status_report_frequency: Duration,
    /// Status manager retry of a failed pod status write (its `syncPeriod`).
    pub status_retry: Duration,
    /// Node registration retry: 100 ms doubling to 7 s (`registerWithAPIServer`).
    pub register_retry_initial: Duration,
    pub register_retry_max: Duration,
    /// Lease `backoffEnsureLease`: 200 ms doubling up to the renew interval.
    pub lease_retry_initial: Duration,
    /// Minimum grace a kill gets (`minimumGracePeriodInSeconds`), even for a force delete.
    pub minimum_grace: Duration,
    /// `serializeImagePulls` (default true): one pull at a time per node, in order.
    pub serialize_image_pulls: bool,
}

impl Default for KubeletTimings {
    fn default() -> Self {
        KubeletTimings {
            jitter: 0.25,
            sandbox: Duration::millis(400),
            image_pull: Duration::millis(2500),
            image_pull_jitter: 0.4,
            image_repull: Duration::millis(500),
            image_pull_failure: Duration::millis(800),
            container_create: Duration::millis(50),
            container_start: Duration::millis(100),
            container_stop: Duration::millis(200),
            sandbox_teardown: Duration::millis(300),
            pleg_relist_period: Duration::secs(1),
            sync_error_backoff: Duration::secs(10),
            volume_reconciler_period: Duration::millis(100),
            mount_backoff_initial: Duration::millis(500),
            mount_backoff_max: Duration::secs(122),
            crash_backoff_initial: Duration::secs(10),
            crash_backoff_max: Duration::secs(300),
            image_backoff_initial: Duration::secs(10),
            image_backoff_max: Duration::secs(300),
            lease_renew_interval: Duration::secs(10),
            lease_duration_seconds: 40,
            node_status_update_frequency: Duration::secs(10),
            node_status_report_frequency: Duration::mins(5),
            status_retry: Duration::secs(10),
            register_retry_initial: Duration::millis(100),
            register_retry_max: Duration::secs(7),
            lease_retry_initial: Duration::millis(200),
            minimum_grace: Duration::secs(2),
            serialize_image_pulls: true,
        }
    }
}

impl KubeletTimings {
    /// `base` jittered by the common fraction.
    pub fn draw(&self, rng: &mut Rng, base: Duration) -> Duration {
        Duration(rng.jitter(base.0, self.jitter))
    }
    /// `wait.Jitter(d, f)`: somewhere in `[d, d·(1+f)]`, as client-go's periodic loops wait.
    pub fn jitter_up(rng: &mut Rng, base: Duration, fraction: f64) -> Duration {
        let spread = (base.0 as f64 * fraction) as u64;
        Duration(base.0 + if spread == 0 { 0 } else { rng.below(spread + 1) })
    }
}

/// One entry of `flowcontrol.Backoff`: the current delay and when it was last stepped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackoffEntry {
    pub delay: Duration,
    pub last_update: Time,
}

/// client-go's per-item exponential back-off (k8s.io/client-go/util/flowcontrol/backoff.go),
/// without jitter, as the kubelet configures it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Backoff {
    /// `hasExpired`: an entry is forgotten when the event came more than twice the cap after
    /// its last step — the "reset after 10 minutes of running" of container restarts.
    fn expired(&self, entry: &BackoffEntry, event_time: Time) -> bool {
        event_time.0 > entry.last_update.0 && event_time.since(entry.last_update).0 > self.max.0 * 2
    }

    /// `IsInBackOffSince(id, eventTime)`: still within the delay counted from `event_time`.
    pub fn in_backoff_since(&self, entry: Option<&BackoffEntry>, event_time: Time, now: Time) -> bool {
        match entry {
            Some(e) if !self.expired(e, event_time) => now.since(event_time) < e.delay,
            _ => false,
        }
    }

    /// `IsInBackOffSinceUpdate(id, now)`: still within the delay counted from the last step.
    pub fn in_backoff_since_update(&self, entry: Option<&BackoffEntry>, now: Time) -> bool {
        match entry {
            Some(e) if !self.expired(e, now) => now.since(e.last_update) < e.delay,
            _ => false,
        }
    }

    /// `Next(id, eventTime)`: the first step sets the initial delay, each later one doubles it
    /// up to the cap; an expired entry starts over.
    pub fn next(&self, entry: Option<BackoffEntry>, event_time: Time, now: Time) -> BackoffEntry {
        let delay = match entry {
            Some(e) if !self.expired(&e, event_time) => Duration((e.delay.0 * 2).min(self.max.0)),
            _ => self.initial,
        };
        BackoffEntry { delay, last_update: now }
    }
}

/// Go's `time.Duration.String()` for whole milliseconds: `452ms`, `2.345s`, `1m20s`, `5m0s`.
/// Kubelet messages print durations this way ("back-off 5m0s restarting failed container").
pub fn go_duration(d: Duration) -> String {
    let ms = d.0;
    if ms == 0 {
        return "0s".into();
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let hours = ms / 3_600_000;
    let minutes = ms / 60_000 % 60;
    let secs = ms / 1000 % 60;
    let frac = ms % 1000;
    let mut seconds = secs.to_string();
    if frac != 0 {
        let digits = format!("{frac:03}");
        seconds.push('.');
        seconds.push_str(digits.trim_end_matches('0'));
    }
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

/// `metav1.Time` carries whole seconds: the status manager truncates every timestamp it
/// writes, so a condition's `lastTransitionTime` is what a client would read back.
pub fn whole_seconds(t: Time) -> Time {
    Time(t.0 / 1000 * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_print_like_go() {
        assert_eq!(go_duration(Duration::millis(452)), "452ms");
        assert_eq!(go_duration(Duration::millis(2345)), "2.345s");
        assert_eq!(go_duration(Duration::millis(2300)), "2.3s");
        assert_eq!(go_duration(Duration::secs(10)), "10s");
        assert_eq!(go_duration(Duration::secs(80)), "1m20s");
        assert_eq!(go_duration(Duration::secs(160)), "2m40s");
        assert_eq!(go_duration(Duration::secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::millis(62_500)), "1m2.5s");
        assert_eq!(go_duration(Duration::secs(3600)), "1h0m0s");
        assert_eq!(go_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn restart_backoff_doubles_from_10s_to_300s_and_resets_after_10_minutes() {
        let b = Backoff { initial: Duration::secs(10), max: Duration::secs(300) };
        let mut entry = None;
        let mut seen = Vec::new();
        let mut t = Time(0);
        for _ in 0..8 {
            let e = b.next(entry, t, t);
            seen.push(e.delay.0 / 1000);
            entry = Some(e);
            t = t + Duration::secs(1);
        }
        assert_eq!(seen, vec![10, 20, 40, 80, 160, 300, 300, 300]);
        let e = entry.unwrap();
        assert!(b.in_backoff_since(Some(&e), t, t + Duration::secs(299)));
        assert!(!b.in_backoff_since(Some(&e), t, t + Duration::secs(300)));
        // A crash more than 10 minutes after the last restart starts the back-off over.
        let late = e.last_update + Duration::millis(600_001);
        assert!(!b.in_backoff_since(Some(&e), late, late));
        assert_eq!(b.next(Some(e), late, late).delay, Duration::secs(10));
    }

    #[test]
    fn jitter_up_waits_at_least_the_period() {
        let mut rng = Rng::new(5);
        for _ in 0..200 {
            let d = KubeletTimings::jitter_up(&mut rng, Duration::secs(10), 0.5);
            assert!((10_000..=15_000).contains(&d.0));
        }
        assert_eq!(whole_seconds(Time(12_999)), Time(12_000));
    }
}
