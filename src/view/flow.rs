//! The event flow: requests, responses, etcd writes and watch notifications as hops between the
//! components, laid out on a fixed diagram — writers on the left, kube-apiserver in the middle,
//! etcd beside it, the watchers around — so a learner can follow one change hop by hop.
//!
//! At high speed one frame can carry thousands of messages; then [`hops`] folds them into one
//! hop per (from, to, kind) with a count, so the picture stays readable and cheap. With many
//! nodes the kubelets share one lane.

use crate::sim::{Message, MessageKind};
use serde::Serialize;

/// Past this many kubelets, they share one lane.
pub const MAX_KUBELET_LANES: usize = 4;

/// A place on the diagram, in the diagram's own units (a 480 × 220 box).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LanePos {
    /// The component's name, or `kubelets` for the shared lane.
    pub id: String,
    pub label: String,
    pub x: i32,
    pub y: i32,
}

/// Where every lane sits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlowLayout {
    pub width: i32,
    pub height: i32,
    pub lanes: Vec<LanePos>,
    /// Kubelets share the `kubelets` lane.
    pub shared_kubelets: bool,
}

impl FlowLayout {
    /// The layout for a cluster with these kubelet (node) names, in order.
    pub fn new(nodes: &[String]) -> FlowLayout {
        let (width, height) = (480, 220);
        let lane = |id: &str, label: &str, x: i32, y: i32| LanePos { id: id.into(), label: label.into(), x, y };
        let mut lanes = vec![
            lane("kubectl", "kubectl", 60, 30),
            lane("kube-apiserver", "kube-apiserver", 240, 110),
            lane("etcd", "etcd", 240, 195),
            lane("kube-controller-manager", "controller-manager", 60, 110),
            lane("kube-scheduler", "scheduler", 60, 190),
        ];
        let shared = nodes.len() > MAX_KUBELET_LANES;
        if shared {
            lanes.push(lane("kubelets", &format!("{} kubelets", nodes.len()), 420, 110));
        } else {
            let n = nodes.len().max(1) as i32;
            // Lanes top to bottom in the order a person counts (node-2 above node-10).
            let mut nodes: Vec<&String> = nodes.iter().collect();
            crate::sort::sort_by(&mut nodes, |a, b| crate::sort::natural_cmp(a, b));
            for (i, node) in nodes.iter().enumerate() {
                let y = 30 + (160 * (2 * i as i32 + 1)) / (2 * n);
                lanes.push(lane(&format!("kubelet-{node}"), &format!("kubelet {node}"), 420, y));
                lanes.push(lane(&format!("kube-proxy-{node}"), &format!("kube-proxy {node}"), 460, y));
            }
        }
        FlowLayout { width, height, lanes, shared_kubelets: shared }
    }

    /// The layout with a lane for each operator (`operator/NAME`), beside the writers: a
    /// learner's loop's requests are drawn as the built-in loops' are.
    pub fn with_operators<'a>(mut self, names: impl IntoIterator<Item = &'a str>) -> FlowLayout {
        for (i, name) in names.into_iter().enumerate() {
            let id = format!("{}{name}", crate::sim::OPERATOR_PREFIX);
            self.lanes.push(LanePos { label: id.clone(), id, x: 150, y: 30 + 40 * i as i32 });
        }
        self
    }

    /// The lane a component's messages travel from or to.
    pub fn lane_of<'a>(&self, component: &'a str) -> &'a str {
        // A node's kube-proxy shares its node's place once the nodes share a lane.
        if self.shared_kubelets && (component.starts_with("kubelet-") || component.starts_with("kube-proxy-")) {
            "kubelets"
        } else {
            component
        }
    }

    pub fn position(&self, lane: &str) -> Option<&LanePos> {
        self.lanes.iter().find(|l| l.id == lane)
    }
}

/// One hop to draw: one message, or several folded together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hop {
    /// The sequence number of its (first) message: a stable key.
    pub seq: u64,
    pub from: String,
    pub to: String,
    /// `request`, `response`, `etcd-write`, `watch`.
    pub kind: String,
    /// What it says (`delete pod/default/web-x`, `ADDED pod/default/web-y`), or a count.
    pub what: String,
    /// The object it concerns, for highlighting a pod's chain; empty when folded.
    pub object: String,
    /// How many messages it stands for.
    pub count: u32,
}

pub fn kind_name(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::Request => "request",
        MessageKind::Response => "response",
        MessageKind::EtcdWrite => "etcd-write",
        MessageKind::Watch => "watch",
    }
}

/// The hops for `messages` (in order), each on its lanes; folded by (from, to, kind) when there
/// are more than `max_single`. Messages between lanes the layout lacks are dropped.
pub fn hops<'a>(layout: &FlowLayout, messages: impl IntoIterator<Item = &'a Message>, max_single: usize) -> Vec<Hop> {
    let mut out: Vec<Hop> = Vec::new();
    let mut all: Vec<&Message> = messages.into_iter().collect();
    all.retain(|m| layout.position(layout.lane_of(&m.from)).is_some() && layout.position(layout.lane_of(&m.to)).is_some());
    if all.len() <= max_single {
        return all
            .into_iter()
            .map(|m| Hop {
                seq: m.seq,
                from: layout.lane_of(&m.from).to_string(),
                to: layout.lane_of(&m.to).to_string(),
                kind: kind_name(m.kind).into(),
                what: m.what.clone(),
                object: m.object.clone(),
                count: 1,
            })
            .collect();
    }
    for m in all {
        let (from, to, kind) = (layout.lane_of(&m.from), layout.lane_of(&m.to), kind_name(m.kind));
        match out.iter_mut().find(|h| h.from == from && h.to == to && h.kind == kind) {
            Some(h) => h.count += 1,
            None => out.push(Hop {
                seq: m.seq,
                from: from.into(),
                to: to.into(),
                kind: kind.into(),
                what: String::new(),
                object: String::new(),
                count: 1,
            }),
        }
    }
    for h in &mut out {
        h.what = counted(h.count, &h.kind.replace('-', " "));
    }
    out
}

/// `1 watch`, `4 watches`, `2 etcd writes`: English adds `es` after a hissing end (s, x, z, ch, sh).
fn counted(n: u32, noun: &str) -> String {
    let suffix = match n {
        1 => "",
        _ if ["s", "x", "z", "ch", "sh"].iter().any(|end| noun.ends_with(end)) => "es",
        _ => "s",
    };
    format!("{n} {noun}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::{Duration, Kind};

    fn two_nodes() -> FlowLayout {
        FlowLayout::new(&["node-1".to_string(), "node-2".to_string()])
    }

    #[test]
    fn folded_hops_count_in_plurals_that_read_right() {
        assert_eq!(counted(4, "watch"), "4 watches");
        assert_eq!(counted(1, "watch"), "1 watch");
        assert_eq!(counted(2, "etcd write"), "2 etcd writes");
        assert_eq!(counted(3, "request"), "3 requests");
        assert_eq!(counted(0, "response"), "0 responses");
        assert_eq!(counted(2, "box"), "2 boxes");
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let all: Vec<Message> = s.sim().trace().recent().cloned().collect();
        let h = hops(&two_nodes(), &all, 10);
        let w = h.iter().find(|h| h.kind == "watch" && h.count > 1).expect("folded watch notifications");
        assert_eq!(w.what, format!("{} watches", w.count));
    }

    #[test]
    fn an_operators_messages_have_a_lane_of_their_own() {
        let message = |from: &str, to: &str| Message {
            seq: 1,
            from: from.into(),
            to: to.into(),
            kind: MessageKind::Request,
            what: "list configmaps".into(),
            object: String::new(),
            sent: crate::model::Time(0),
            arrives: crate::model::Time(1),
        };
        let sent = [message("operator/website", "kube-apiserver")];
        assert!(hops(&two_nodes(), &sent, 10).is_empty(), "without a lane the hop is dropped");
        let layout = two_nodes().with_operators(["website"]);
        let h = hops(&layout, &sent, 10);
        assert_eq!((h[0].from.as_str(), h[0].to.as_str(), h.len()), ("operator/website", "kube-apiserver", 1));
    }

    #[test]
    fn kubelet_lanes_run_in_counting_order() {
        let names: Vec<String> = ["node-10", "node-2", "node-1"].iter().map(|n| n.to_string()).collect();
        let l = FlowLayout::new(&names);
        let lanes: Vec<&str> = l.lanes.iter().filter(|p| p.id.starts_with("kubelet-")).map(|p| p.id.as_str()).collect();
        assert_eq!(lanes, ["kubelet-node-1", "kubelet-node-2", "kubelet-node-10"]);
    }

    #[test]
    fn a_small_cluster_gives_every_kubelet_a_lane_and_a_big_one_shares_it() {
        let l = two_nodes();
        assert!(l.position("kubelet-node-1").is_some() && l.position("kubelet-node-2").is_some());
        assert_eq!(l.lane_of("kubelet-node-2"), "kubelet-node-2");
        let ys: Vec<i32> = l.lanes.iter().filter(|p| p.id.starts_with("kubelet-")).map(|p| p.y).collect();
        assert_eq!(ys, [70, 150]);
        let names: Vec<String> = (1..=100).map(|i| format!("node-{i}")).collect();
        let big = FlowLayout::new(&names);
        assert_eq!(big.lane_of("kubelet-node-77"), "kubelets");
        assert_eq!(big.position("kubelets").map(|p| p.label.as_str()), Some("100 kubelets"));
        assert!(big.lanes.iter().all(|p| p.x >= 0 && p.x <= big.width && p.y >= 0 && p.y <= big.height));
    }

    #[test]
    fn a_kill_travels_kubectl_to_apiserver_to_etcd_then_out_to_the_watchers() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let seen = s.sim().trace().count();
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.clone();
        s.execute(&format!("kubectl delete pod {victim}"));
        s.advance(Duration::millis(30));
        let h = hops(&two_nodes(), s.sim().trace().since(seen), 1000);
        let key = format!("pod/default/{victim}");
        assert_eq!((h[0].from.as_str(), h[0].to.as_str(), h[0].kind.as_str()), ("kubectl", "kube-apiserver", "request"));
        assert_eq!(h[0].what, format!("delete {key}"));
        assert_eq!((h[1].from.as_str(), h[1].to.as_str(), h[1].kind.as_str()), ("kube-apiserver", "etcd", "etcd-write"));
        let watchers: Vec<&str> = h.iter().filter(|h| h.kind == "watch" && h.object == key).map(|h| h.to.as_str()).collect();
        assert!(watchers.contains(&"kube-controller-manager"), "{watchers:?}");
        assert!(h.iter().all(|h| h.count == 1));
    }

    #[test]
    fn many_messages_fold_into_counted_hops() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let all: Vec<Message> = s.sim().trace().recent().cloned().collect();
        let h = hops(&two_nodes(), &all, 10);
        let total: u32 = h.iter().map(|h| h.count).sum();
        assert_eq!(total as usize, all.len(), "every message counted once");
        let mut keys: Vec<(&str, &str, &str)> = h.iter().map(|h| (h.from.as_str(), h.to.as_str(), h.kind.as_str())).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "one hop per (from, to, kind)");
        let w = h.iter().find(|h| h.kind == "etcd-write").unwrap();
        assert_eq!(w.what, format!("{} etcd writes", w.count));
        assert!(h.windows(2).all(|p| p[0].seq < p[1].seq), "in order of first message");
    }
}
