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

/// The group version of metrics-server's API, served through kube-apiserver's aggregation layer.
pub const API_GROUP: &str = "metrics.k8s.io";
pub const API_VERSION: &str = "v1beta1";

/// The resources metrics-server's API serves, read only (`get`, `list`): plural, singular, kind,
/// and whether namespaced. Discovery (over HTTP and the console's `api-resources`) lists these.
/// metrics-server gives no singular name (so that `pod` stays the core group's), and kubectl
/// then names them by their kinds too: `kubectl get podmetrics`.
pub const RESOURCES: [(&str, &str, &str, bool); 2] = [("nodes", "", "NodeMetrics", false), ("pods", "", "PodMetrics", true)];

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

    /// What metrics-server's own API (`metrics.k8s.io`) reports for every pod it has a metric
    /// for, in `namespace` or in all: the same CPU use the autoscaler reads, split over the
    /// containers by their CPU requests (what a load is a share of), the first taking what
    /// rounding leaves so that the containers add up to the pod.
    pub fn pod_usage(&self, namespace: Option<&str>) -> Vec<PodUsage> {
        let scraped = Time(self.now.0 - self.now.0 % METRIC_RESOLUTION.0);
        let pods = self.api.etcd.list(Kind::Pod, namespace).filter_map(|o| o.as_pod());
        pods.filter(|p| running_since(p).is_some_and(|since| since + METRIC_RESOLUTION <= scraped))
            .map(|p| {
                let cpu = self.cpu_use(&p.metadata.namespace, p);
                PodUsage {
                    namespace: p.metadata.namespace.to_string(),
                    name: p.metadata.name.to_string(),
                    labels: (*p.metadata.labels).clone(),
                    node: p.spec.node_name.clone().unwrap_or_default(),
                    timestamp: scraped,
                    window: METRIC_RESOLUTION,
                    containers: split_by_requests(p, cpu),
                }
            })
            .collect()
    }

    /// What metrics-server reports for each node: the CPU use of the pods it has a metric for
    /// on that node (kubeloop's machines spend nothing beyond their pods), once the node has
    /// been Ready for a scrape.
    pub fn node_usage(&self) -> Vec<NodeUsage> {
        let scraped = Time(self.now.0 - self.now.0 % METRIC_RESOLUTION.0);
        let pods = self.pod_usage(None);
        let ready_since = |n: &Node| n.condition("Ready").filter(|c| c.status == "True").and_then(|c| c.last_transition_time);
        self.api
            .etcd
            .list(Kind::Node, None)
            .filter_map(|o| o.as_node())
            .filter(|n| ready_since(n).is_some_and(|since| since + METRIC_RESOLUTION <= scraped))
            .map(|n| NodeUsage {
                name: n.metadata.name.to_string(),
                labels: (*n.metadata.labels).clone(),
                cpu_milli: pods.iter().filter(|u| u.node == *n.metadata.name).flat_map(|u| u.containers.iter().map(|(_, c)| c)).sum(),
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

/// A pod's CPU use as metrics-server's API reports it (`PodMetrics`), per container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodUsage {
    pub namespace: String,
    pub name: String,
    /// The pod's labels, which metrics-server copies onto its metrics.
    pub labels: StringMap,
    /// The node it runs on (not in the API's answer; what a node's use adds up).
    pub node: String,
    pub timestamp: Time,
    pub window: Duration,
    /// Each container's name and CPU use in millicores. kubeloop models no memory use.
    pub containers: Vec<(String, i64)>,
}

/// A node's CPU use as metrics-server's API reports it (`NodeMetrics`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeUsage {
    pub name: String,
    pub labels: StringMap,
    pub cpu_milli: i64,
    pub timestamp: Time,
    pub window: Duration,
}

/// `cpu` millicores over the pod's containers in proportion to their CPU requests.
fn split_by_requests(pod: &Pod, cpu: i64) -> Vec<(String, i64)> {
    let requests: Vec<i64> =
        pod.spec.containers.iter().map(|c| c.resources.requests.get("cpu").and_then(|q| q.milli_value()).unwrap_or(0)).collect();
    let total: i64 = requests.iter().sum();
    let mut shares: Vec<i64> = requests.iter().map(|r| if total > 0 { cpu * r / total } else { 0 }).collect();
    if let Some(first) = shares.first_mut() {
        *first += cpu - requests.iter().map(|r| if total > 0 { cpu * r / total } else { 0 }).sum::<i64>();
    }
    pod.spec.containers.iter().map(|c| c.name.to_string()).zip(shares).collect()
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
