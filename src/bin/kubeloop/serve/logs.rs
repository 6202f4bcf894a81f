//! `pods/log`: a container's log as the kubelet serves it through kube-apiserver, from the
//! library's container model (`kubeloop::kubelet::logs`).
//!
//! `container`, `previous`, `tailLines` and `limitBytes` are served. The model knows what a
//! program wrote, not when each line was written, so `timestamps`, `sinceSeconds` and
//! `sinceTime` are refused rather than answered wrongly; `follow` gets the log so far (with a
//! warning that it ends there, since a simulated container's later lines are not streamed).

use super::api::{current, Query, Target};
use super::body::Body;
use super::status::failure;
use super::Cluster;
use hyper::Response;
use kubeloop::api::Reason;
use kubeloop::kubelet::logs::container_log;

pub(crate) fn answer(cluster: &mut Cluster, query: &Query, target: &Target, name: &str) -> Response<Body> {
    let pod = match current(cluster, target, name) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let Some(pod) = pod.as_pod() else { return failure(Reason::InternalError, "unexpected answer") };
    for unmodelled in ["timestamps", "sinceSeconds", "sinceTime"] {
        if query.get(unmodelled).is_some_and(|v| !v.is_empty() && v != "false") {
            return failure(
                Reason::BadRequest,
                &format!("kubeloop models what a container wrote, not when each line was written: {unmodelled} is not available"),
            );
        }
    }
    let previous = matches!(query.get("previous"), Some("true" | "1"));
    let log = match container_log(pod, query.get("container").filter(|c| !c.is_empty()), previous, cluster.session.sim().now()) {
        Ok(log) => log,
        Err(message) => return failure(Reason::BadRequest, &message),
    };
    let mut text = log.text;
    if let Some(n) = query.get("tailLines").and_then(|n| n.parse::<usize>().ok()) {
        let lines: Vec<&str> = text.lines().collect();
        text = lines[lines.len().saturating_sub(n)..].iter().map(|l| format!("{l}\n")).collect();
    }
    if let Some(n) = query.get("limitBytes").and_then(|n| n.parse::<usize>().ok()).filter(|n| *n > 0) {
        text.truncate(n.min(text.len()));
    }
    let mut warnings = Vec::new();
    if !log.complete {
        warnings.push("kubeloop does not know the contents of the files this container reads from its volumes: those lines are missing");
    }
    if matches!(query.get("follow"), Some("true" | "1")) {
        warnings.push("kubeloop sends a simulated container's log so far and does not follow it");
    }
    let mut response = Response::builder().header("Content-Type", "text/plain");
    for w in warnings {
        response = response.header("Warning", format!("299 - \"{w}\""));
    }
    response.body(Body::full(text)).unwrap_or_else(|_| Response::new(Body::full("")))
}
