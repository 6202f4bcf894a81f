//! metrics-server, as far as the horizontal pod autoscaler needs it: each running pod's CPU use,
//! from a load the learner sets on a workload (`sim load deployment/web --cpu 300%`).
//!
//! A load is a total CPU demand, written as a share of one pod's CPU request (300% is three
//! pods' worth), spread evenly over the workload's running pods — so more replicas mean less
//! per pod, which is what lets an autoscaler settle. metrics-server scrapes every 15 s and needs
//! two scrapes to compute a rate, so a container has no metric until 15 s after it started, and
//! each metric is stamped with the last scrape.

use super::Sim;
use crate::model::*;

/// `--metric-resolution`: how often metrics-server scrapes the kubelets, and the window each
/// reported rate covers.
pub const METRIC_RESOLUTION: Duration = Duration::secs(15);

/// A CPU demand on the pods a selector picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Load {
    /// What the learner named (`deployment/web`), for listing.
    pub workload: String,
    pub namespace: String,
    pub selector: LabelSelector,
    /// Total demand, in percent of one pod's CPU request.
    pub percent: i64,
}

impl Sim {
    /// Sets (or, with 0%, removes) the load on a workload's pods.
    pub fn set_load(&mut self, load: Load) {
        self.loads.retain(|l| l.workload != load.workload || l.namespace != load.namespace);
        if load.percent > 0 {
            self.loads.push(load);
        }
    }

    pub fn loads(&self) -> &[Load] {
        &self.loads
    }

    /// What `pods.metrics.k8s.io` answers for the pods of `namespace` that `selector` picks.
    pub(super) fn pod_metrics(&self, namespace: &str, selector: &LabelSelector) -> Vec<PodMetric> {
        let scraped = Time(self.now.0 - self.now.0 % METRIC_RESOLUTION.0);
        let pods = self.api.items(Kind::Pod, Some(namespace)).filter_map(|o| o.as_pod());
        pods.filter(|p| selector.matches(&p.metadata.labels))
            .filter(|p| running_since(p).is_some_and(|since| since + METRIC_RESOLUTION <= scraped))
            .map(|p| PodMetric {
                pod: p.metadata.name.to_string(),
                cpu_milli: self.cpu_use(namespace, p),
                timestamp: scraped,
                window: METRIC_RESOLUTION,
            })
            .collect()
    }

    /// One pod's share of the loads on it, in millicores.
    fn cpu_use(&self, namespace: &str, pod: &Pod) -> i64 {
        self.loads
            .iter()
            .filter(|l| l.namespace == namespace && l.selector.matches(&pod.metadata.labels))
            .map(|l| {
                let sharing = self
                    .api
                    .items(Kind::Pod, Some(namespace))
                    .filter_map(|o| o.as_pod())
                    .filter(|p| l.selector.matches(&p.metadata.labels) && running_since(p).is_some())
                    .count()
                    .max(1) as i64;
                pod.requests().0 * l.percent / 100 / sharing
            })
            .sum()
    }
}

/// When the pod's containers were all running, if they are (and it is not going).
fn running_since(pod: &Pod) -> Option<Time> {
    if pod.phase() != PodPhase::Running || pod.metadata.is_deleting() || pod.status.container_statuses.is_empty() {
        return None;
    }
    pod.status
        .container_statuses
        .iter()
        .map(|c| c.state.running.as_ref().and_then(|r| r.started_at))
        .try_fold(Time(0), |latest, t| t.map(|t| latest.max(t)))
}
