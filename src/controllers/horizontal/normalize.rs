//! From the metrics' proposal to the replicas the autoscaler writes: stabilization over recent
//! recommendations, then the limits on how fast and how far it may scale
//! (`normalizeDesiredReplicas` and `normalizeDesiredReplicasWithBehaviors`).
//!
//! Without `spec.behavior`, upstream's older rules apply: scale down only to the highest
//! recommendation of the last 5 minutes, scale up at most to max(2 × current, 4). With it, each
//! direction has its own stabilization window and rate policies over recent scale events.

use crate::model::*;

/// `--horizontal-pod-autoscaler-downscale-stabilization`.
pub const DOWNSCALE_STABILIZATION: Duration = Duration::mins(5);

/// One recommendation the autoscaler made, kept for stabilization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recommendation {
    pub replicas: i32,
    pub at: Time,
}

/// One scale change it made, kept for the rate policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleEvent {
    pub change: i32,
    pub at: Time,
}

/// A condition to set: (type, status, reason, message).
pub type Verdict = (&'static str, &'static str, &'static str, String);

/// The outcome of normalizing: the replicas, and the AbleToScale / ScalingLimited conditions.
pub struct Normalized {
    pub replicas: i32,
    pub able_to_scale: Verdict,
    pub scaling_limited: Verdict,
}

/// The inputs of one normalization.
pub struct Bounds {
    pub current: i32,
    pub min: i32,
    pub max: i32,
}

/// `normalizeDesiredReplicas` (no behavior): downscale stabilization, then min/max and the
/// 2×/4 scale-up limit.
pub fn legacy(history: &mut Vec<Recommendation>, proposed: i32, b: &Bounds, now: Time) -> Normalized {
    let cutoff = Time(now.0.saturating_sub(DOWNSCALE_STABILIZATION.0));
    let stabilized = history.iter().filter(|r| r.at >= cutoff).map(|r| r.replicas).fold(proposed, i32::max);
    record(history, proposed, now, |r| r.at < cutoff);
    let able_to_scale = if stabilized != proposed {
        stabilized_down()
    } else {
        ("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size".to_string())
    };
    let scale_up_limit = (2 * b.current).max(4);
    let (max, limited_reason, limited_message) = if b.max > scale_up_limit {
        (scale_up_limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
    } else {
        (b.max, "TooManyReplicas", "the desired replica count is more than the maximum replica count")
    };
    let (replicas, reason, message) = if stabilized < b.min {
        (b.min, "TooFewReplicas", "the desired replica count is less than the minimum replica count")
    } else if stabilized > max {
        (max, limited_reason, limited_message)
    } else {
        (stabilized, "DesiredWithinRange", "the desired count is within the acceptable range")
    };
    Normalized { replicas, able_to_scale, scaling_limited: limited(replicas != stabilized, reason, message) }
}

fn stabilized_down() -> Verdict {
    (
        "AbleToScale",
        "True",
        "ScaleDownStabilized",
        "recent recommendations were higher than current one, applying the highest recent recommendation".into(),
    )
}

fn limited(is: bool, reason: &'static str, message: &str) -> Verdict {
    ("ScalingLimited", if is { "True" } else { "False" }, reason, message.to_string())
}

/// Records a recommendation in place of the oldest one that has aged out, or appends it.
fn record(history: &mut Vec<Recommendation>, replicas: i32, now: Time, aged: impl Fn(&Recommendation) -> bool) {
    match history.iter().rposition(aged) {
        Some(i) => history[i] = Recommendation { replicas, at: now },
        None => history.push(Recommendation { replicas, at: now }),
    }
}

/// The scale events of the last `period`: (replicas added, replicas removed).
fn changes_in(events: &[ScaleEvent], period: i32, now: Time) -> i32 {
    let cutoff = Time(now.0.saturating_sub(period.max(0) as u64 * 1000));
    events.iter().filter(|e| e.at > cutoff).map(|e| e.change).sum()
}

/// The recent history a behavior's rate policies read.
pub struct History<'a> {
    pub recommendations: &'a mut Vec<Recommendation>,
    pub ups: &'a [ScaleEvent],
    pub downs: &'a [ScaleEvent],
}

/// `normalizeDesiredReplicasWithBehaviors`: per-direction stabilization windows, then the rate
/// policies (`selectPolicy` Max takes the policy allowing the biggest change, Min the smallest,
/// Disabled none).
pub fn with_behavior(h: History, behavior: &HorizontalPodAutoscalerBehavior, proposed: i32, b: &Bounds, now: Time) -> Normalized {
    let up = behavior.scale_up.clone().unwrap_or_default();
    let down = behavior.scale_down.clone().unwrap_or_default();
    let window = |r: &ScalingRules, default: Duration| r.stabilization_window_seconds.map_or(default, |s| Duration::secs(s.max(0) as u64));
    let (up_cutoff, down_cutoff) =
        (Time(now.0.saturating_sub(window(&up, Duration::ZERO).0)), Time(now.0.saturating_sub(window(&down, DOWNSCALE_STABILIZATION).0)));
    let (mut up_rec, mut down_rec) = (proposed, proposed);
    for r in h.recommendations.iter() {
        if r.at > up_cutoff {
            up_rec = up_rec.min(r.replicas);
        }
        if r.at > down_cutoff {
            down_rec = down_rec.max(r.replicas);
        }
    }
    let stabilized = b.current.max(up_rec).min(down_rec);
    record(h.recommendations, proposed, now, |r| r.at < up_cutoff && r.at < down_cutoff);
    let able_to_scale = match (stabilized != proposed, proposed >= b.current) {
        (false, _) => ("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size".to_string()),
        (true, true) => (
            "AbleToScale",
            "True",
            "ScaleUpStabilized",
            "recent recommendations were lower than current one, applying the lowest recent recommendation".into(),
        ),
        (true, false) => stabilized_down(),
    };
    let (replicas, reason, message) = rate_limited(stabilized, (&up, &down), &h, b, now);
    Normalized { replicas, able_to_scale, scaling_limited: limited(replicas != stabilized, reason, message) }
}

/// `convertDesiredReplicasWithBehaviorRate`.
fn rate_limited(
    desired: i32,
    (up, down): (&ScalingRules, &ScalingRules),
    h: &History,
    b: &Bounds,
    now: Time,
) -> (i32, &'static str, &'static str) {
    let period_start = |period: i32| b.current - changes_in(h.ups, period, now) + changes_in(h.downs, period, now);
    if desired > b.current {
        let limit = policy_limit(up, true, &period_start).max(b.current);
        let (max, reason, message) = if b.max > limit {
            (limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
        } else {
            (b.max, "TooManyReplicas", "the desired replica count is more than the maximum replica count")
        };
        if desired > max {
            return (max, reason, message);
        }
    } else if desired < b.current {
        let limit = policy_limit(down, false, &period_start).min(b.current);
        let (min, reason, message) = if b.min < limit {
            (limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")
        } else {
            (b.min, "TooFewReplicas", "the desired replica count is less than the minimum replica count")
        };
        if desired < min {
            return (min, reason, message);
        }
    }
    (desired, "DesiredWithinRange", "the desired count is within the acceptable range")
}

/// `calculateScale{Up,Down}Limit…`: the replicas the policies allow from each period's start.
fn policy_limit(rules: &ScalingRules, up: bool, period_start: &dyn Fn(i32) -> i32) -> i32 {
    let select = rules.select_policy.as_deref().unwrap_or("Max");
    if select == "Disabled" {
        return period_start(0);
    }
    // Scaling up, "Max" wants the largest proposal; scaling down, the smallest.
    let widest = (select == "Max") == up;
    let proposals = rules.policies.iter().map(|p| {
        let start = period_start(p.period_seconds);
        match (p.type_.as_str(), up) {
            ("Pods", true) => start + p.value,
            ("Pods", false) => start - p.value,
            (_, true) => (f64::from(start) * (1.0 + f64::from(p.value) / 100.0)).ceil() as i32,
            (_, false) => (f64::from(start) * (1.0 - f64::from(p.value) / 100.0)) as i32,
        }
    });
    if widest {
        proposals.max().unwrap_or(i32::MAX)
    } else {
        proposals.min().unwrap_or(i32::MIN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_behavior_scale_down_waits_for_the_highest_recommendation_of_five_minutes() {
        let mut history = Vec::new();
        let b = Bounds { current: 5, min: 1, max: 10 };
        assert_eq!(legacy(&mut history, 5, &b, Time(0)).replicas, 5);
        // Load gone: the proposal is 1, but 5 was recommended 4 minutes ago.
        let n = legacy(&mut history, 1, &b, Time(240 * 1000));
        assert_eq!((n.replicas, n.able_to_scale.2), (5, "ScaleDownStabilized"));
        // Past five minutes since the 5: down to the highest since, 1.
        let n = legacy(&mut history, 1, &b, Time(301 * 1000));
        assert_eq!((n.replicas, n.able_to_scale.2), (1, "ReadyForNewScale"));
    }

    #[test]
    fn without_behavior_scale_up_is_at_most_double_or_four() {
        let b = Bounds { current: 1, min: 1, max: 10 };
        let n = legacy(&mut Vec::new(), 9, &b, Time(0));
        assert_eq!((n.replicas, n.scaling_limited.1, n.scaling_limited.2), (4, "True", "ScaleUpLimit"));
        let b = Bounds { current: 4, min: 1, max: 6 };
        let n = legacy(&mut Vec::new(), 9, &b, Time(0));
        assert_eq!((n.replicas, n.scaling_limited.2), (6, "TooManyReplicas"));
    }

    #[test]
    fn the_default_behavior_scales_up_by_four_pods_or_double_per_15_seconds() {
        let behavior = HorizontalPodAutoscalerBehavior {
            scale_up: Some(ScalingRules {
                stabilization_window_seconds: Some(0),
                select_policy: Some("Max".into()),
                policies: vec![
                    ScalingPolicy { type_: "Pods".into(), value: 4, period_seconds: 15 },
                    ScalingPolicy { type_: "Percent".into(), value: 100, period_seconds: 15 },
                ],
            }),
            scale_down: None,
        };
        let mut recs = Vec::new();
        let h = History { recommendations: &mut recs, ups: &[], downs: &[] };
        // From 10: 100% allows 20, 4 pods allows 14; Max picks 20.
        let n = with_behavior(h, &behavior, 30, &Bounds { current: 10, min: 1, max: 50 }, Time(0));
        assert_eq!((n.replicas, n.scaling_limited.2), (20, "ScaleUpLimit"));
    }
}
