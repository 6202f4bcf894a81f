//! `ReplicaCalculator.GetResourceReplicas` (pkg/controller/podautoscaler/replica_calculator.go):
//! how many replicas would bring the pods' CPU use, as a share of their requests, to the target.
//!
//! Pure: pods, metrics and the time in; a replica count or upstream's error text out.

use crate::model::*;

/// `--horizontal-pod-autoscaler-tolerance`: a usage ratio within 10% of 1 changes nothing.
pub const TOLERANCE: f64 = 0.1;
/// `--horizontal-pod-autoscaler-cpu-initialization-period`.
pub const CPU_INITIALIZATION_PERIOD: Duration = Duration::mins(5);
/// `--horizontal-pod-autoscaler-initial-readiness-delay`.
pub const INITIAL_READINESS_DELAY: Duration = Duration::secs(30);

/// What the calculation found: the replicas it proposes and the utilization it measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proposal {
    pub replicas: i32,
    /// Average use as a percentage of requests, over the pods that had a metric.
    pub utilization: i32,
    /// Average use in millicores over the same pods.
    pub average_milli: i64,
}

/// Pods sorted as `groupPods` sorts them.
#[derive(Default)]
struct Groups<'a> {
    ready: usize,
    unready: Vec<&'a str>,
    missing: Vec<&'a str>,
    ignored: Vec<&'a str>,
}

fn group_pods<'a>(pods: &[&'a Pod], metrics: &[PodMetric], now: Time) -> Groups<'a> {
    let mut g = Groups::default();
    for pod in pods {
        let name = pod.metadata.name.as_str();
        if pod.metadata.is_deleting() || pod.phase() == PodPhase::Failed {
            g.ignored.push(name);
            continue;
        }
        if pod.phase() == PodPhase::Pending {
            g.unready.push(name);
            continue;
        }
        let Some(metric) = metrics.iter().find(|m| m.pod == name) else {
            g.missing.push(name);
            continue;
        };
        if is_unready_for_cpu(pod, metric, now) {
            g.unready.push(name);
            continue;
        }
        g.ready += 1;
    }
    g
}

/// Whether a pod's CPU sample must be ignored: unready, or just started and ready for less than
/// one metric window (its CPU burst at start-up would mislead).
fn is_unready_for_cpu(pod: &Pod, metric: &PodMetric, now: Time) -> bool {
    let (Some(ready), Some(start)) = (pod.condition("Ready"), pod.status.start_time) else { return true };
    let transition = ready.last_transition_time.unwrap_or(Time(0));
    if start + CPU_INITIALIZATION_PERIOD > now {
        ready.status == "False" || metric.timestamp < transition + metric.window
    } else {
        ready.status == "False" && start + INITIAL_READINESS_DELAY > transition
    }
}

/// `GetResourceUtilizationRatio`: (usage ratio, utilization %, average millicores) over the pods
/// that have a sample, or the error for a pod without a request.
fn utilization_ratio(samples: &[(&Pod, i64)], target: i32) -> Result<(f64, i32, i64), String> {
    let (mut used, mut requested) = (0i64, 0i64);
    for (pod, milli) in samples {
        used += milli;
        requested += pod.requests().0;
    }
    if requested == 0 {
        return Err("no metrics returned matched known pods".into());
    }
    let utilization = (used * 100 / requested) as i32;
    Ok((f64::from(utilization) / f64::from(target), utilization, used / samples.len().max(1) as i64))
}

/// `calculatePodRequests` for CPU: every container must request it.
fn check_requests(pods: &[&Pod]) -> Result<(), String> {
    for pod in pods {
        for c in &pod.spec.containers {
            if !c.resources.requests.contains_key("cpu") {
                return Err(format!("missing request for cpu in container {} of Pod {}", c.name, pod.metadata.name));
            }
        }
    }
    Ok(())
}

/// The proposal for `current` replicas at `target` percent CPU, or upstream's error.
pub fn resource_replicas(current: i32, target: i32, pods: &[&Pod], metrics: &[PodMetric], now: Time) -> Result<Proposal, String> {
    if metrics.is_empty() {
        return Err("unable to get metrics for resource cpu: no metrics returned from resource metrics API".into());
    }
    if pods.is_empty() {
        return Err("no pods returned by selector while calculating replica count".into());
    }
    let g = group_pods(pods, metrics, now);
    let skip = |name: &str| g.ignored.contains(&name) || g.unready.contains(&name);
    let mut samples: Vec<(&Pod, i64)> = Vec::new();
    for m in metrics.iter().filter(|m| !skip(&m.pod)) {
        if let Some(pod) = pods.iter().find(|p| p.metadata.name == m.pod) {
            samples.push((pod, m.cpu_milli));
        }
    }
    if samples.is_empty() {
        return Err("did not receive metrics for targeted pods (pods might be unready)".into());
    }
    check_requests(pods)?;
    let (ratio, utilization, average_milli) = utilization_ratio(&samples, target)?;
    let measured = Proposal { replicas: current, utilization, average_milli };
    let scale_up_with_unready = !g.unready.is_empty() && ratio > 1.0;
    if !scale_up_with_unready && g.missing.is_empty() {
        if (1.0 - ratio).abs() <= TOLERANCE {
            return Ok(measured);
        }
        return Ok(Proposal { replicas: (ratio * g.ready as f64).ceil() as i32, ..measured });
    }
    // Rebalance: missing pods count as 100% (or the target) on a way down and 0% on a way up;
    // unready pods as 0% on a way up.
    let by_name = |name: &str| pods.iter().copied().find(|p| p.metadata.name == name);
    if !g.missing.is_empty() {
        let fallback = if ratio < 1.0 { i64::from(target.max(100)) } else { 0 };
        for pod in g.missing.iter().filter_map(|n| by_name(n)) {
            if ratio != 1.0 {
                samples.push((pod, pod.requests().0 * fallback / 100));
            }
        }
    }
    if scale_up_with_unready {
        samples.extend(g.unready.iter().filter_map(|n| by_name(n)).map(|p| (p, 0)));
    }
    let (new_ratio, _, _) = utilization_ratio(&samples, target)?;
    if (1.0 - new_ratio).abs() <= TOLERANCE || (ratio < 1.0 && new_ratio > 1.0) || (ratio > 1.0 && new_ratio < 1.0) {
        return Ok(measured);
    }
    let replicas = (new_ratio * samples.len() as f64).ceil() as i32;
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return Ok(measured);
    }
    Ok(Proposal { replicas, ..measured })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, started: Time, ready_at: Option<Time>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        let mut c = Container { name: "c".into(), ..Default::default() };
        c.resources.requests.insert("cpu".into(), Quantity::new("200m"));
        p.spec.containers = vec![c].into();
        p.status.phase = Some(PodPhase::Running);
        p.status.start_time = Some(started);
        if let Some(t) = ready_at {
            crate::api::set_pod_condition(&mut p.status, "Ready", "True", None, None, t);
        }
        p
    }

    fn metric(name: &str, milli: i64, at: Time) -> PodMetric {
        PodMetric { pod: name.into(), cpu_milli: milli, timestamp: at, window: Duration::secs(15) }
    }

    #[test]
    fn the_proposal_is_the_usage_ratio_times_the_ready_pods_rounded_up() {
        let now = Time(3600 * 1000);
        let pods = [pod("a", Time(0), Some(Time(1000))), pod("b", Time(0), Some(Time(1000)))];
        let refs: Vec<&Pod> = pods.iter().collect();
        // 250m of 200m requested each: 125% against a 50% target: ratio 2.5 × 2 pods = 5.
        let m = [metric("a", 250, now), metric("b", 250, now)];
        let p = resource_replicas(2, 50, &refs, &m, now).unwrap();
        assert_eq!(p, Proposal { replicas: 5, utilization: 125, average_milli: 250 });
        // 108m: 54% against 50% is within the 10% tolerance: stay at 2.
        let m = [metric("a", 108, now), metric("b", 108, now)];
        assert_eq!(resource_replicas(2, 50, &refs, &m, now).unwrap().replicas, 2);
    }

    #[test]
    fn no_metrics_and_missing_requests_are_upstreams_errors() {
        let now = Time(3600 * 1000);
        let mut bare = pod("a", Time(0), Some(Time(1000)));
        assert_eq!(
            resource_replicas(1, 50, &[&bare], &[], now).unwrap_err(),
            "unable to get metrics for resource cpu: no metrics returned from resource metrics API"
        );
        bare.spec.containers[0].resources.requests.clear();
        assert_eq!(
            resource_replicas(1, 50, &[&bare], &[metric("a", 10, now)], now).unwrap_err(),
            "missing request for cpu in container c of Pod a"
        );
    }

    #[test]
    fn a_pod_ready_less_than_a_window_ago_in_its_first_minutes_is_not_counted() {
        let now = Time(100 * 1000);
        let fresh = pod("fresh", Time(80 * 1000), Some(Time(95 * 1000)));
        let old = pod("old", Time(0), Some(Time(5 * 1000)));
        let m = [metric("fresh", 400, now), metric("old", 200, now)];
        // Only "old" counts: 100% against 50%; the fresh pod is unready for CPU, so on the way up
        // it counts as 0%: (200 + 0) / 400 = 50% → ratio 1.0, within tolerance: no change.
        assert_eq!(resource_replicas(2, 50, &[&fresh, &old], &m, now).unwrap().replicas, 2);
    }
}
