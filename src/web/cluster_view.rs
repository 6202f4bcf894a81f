//! The cluster view: a box per node with its capacity bars and pods, and the pods no node has yet
//! waiting outside them.
//!
//! Each node box is its own component with an `Rc<NodeView>` prop: a frame that changes one node
//! re-renders one box. Pods are buttons (select one, then Kill it in the side panel), keyed by
//! name so a pod keeps its element while it lives; new pods, status colours and bars animate
//! with CSS, not with per-frame renders.

use std::rc::Rc;

use yew::prelude::*;

use kubeloop::play::Action;
use kubeloop::view::cluster::{ClusterView, NodeView, PodView, Usage};
use kubeloop::view::page::{node_fault_command, node_fault_words, NODE_FAULTS};

#[derive(Properties, PartialEq)]
pub struct ClusterPanelProps {
    pub cluster: ClusterView,
    /// `namespace/name` of the selected pod.
    pub selected: Option<AttrValue>,
    pub on_action: Callback<Action>,
}

/// Past this many pods the cluster is drawn compactly: pods as small squares without text,
/// no entry animation, node boxes skipped by the browser while off screen.
const COMPACT_PODS: usize = kubeloop::play::LARGE_CLUSTER_PODS;
/// At most this many unscheduled pods are drawn; the rest are counted.
const UNSCHEDULED_SHOWN: usize = 60;

/// The labelled region holding every node and the unscheduled pods.
#[component]
pub fn ClusterPanel(props: &ClusterPanelProps) -> Html {
    let selected = props.selected.as_deref();
    let pending = &props.cluster.unscheduled;
    let compact = props.cluster.pod_count > COMPACT_PODS;
    let shown: Rc<Vec<PodView>> =
        if pending.len() > UNSCHEDULED_SHOWN { Rc::new(pending[..UNSCHEDULED_SHOWN].to_vec()) } else { pending.clone() };
    html! {
        <section class={classes!("panel", "cluster-frame", compact.then_some("compact"))} aria-labelledby="cluster-title" data-testid="cluster-frame">
            <h2 id="cluster-title" class="panel-title">
                { "Cluster" }
                <span class="muted">{ format!(" · {} nodes · {} pods", props.cluster.nodes.len(), props.cluster.pod_count) }</span>
            </h2>
            <div class="unscheduled" role="group" aria-label="Pods waiting for a node" data-testid="unscheduled">
                <span class="unscheduled-label">{ format!("Unscheduled ({})", pending.len()) }</span>
                <PodList pods={Pods::Waiting(shown)} compact={compact} selected={selected.map(AttrValue::from)} on_action={props.on_action.clone()} />
                if pending.len() > UNSCHEDULED_SHOWN {
                    <span class="muted">{ format!("…and {} more", pending.len() - UNSCHEDULED_SHOWN) }</span>
                }
            </div>
            if props.cluster.nodes.is_empty() {
                <p class="cluster-empty">{ "No nodes yet." }</p>
            }
            <ul class="cluster-nodes" aria-label="Nodes">
                { for props.cluster.nodes.iter().map(|node| {
                    // Only the box holding the selected pod hears about the selection.
                    let here = selected.filter(|key| node.pods.iter().any(|p| p.is_key(key))).map(AttrValue::from);
                    html! { <NodeBox key={node.name.clone()} node={node.clone()} compact={compact} selected={here} on_action={props.on_action.clone()} /> }
                }) }
            </ul>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct NodeBoxProps {
    pub node: Rc<NodeView>,
    pub compact: bool,
    pub selected: Option<AttrValue>,
    pub on_action: Callback<Action>,
}

/// One node: name, readiness, bars, pods.
#[component]
pub fn NodeBox(props: &NodeBoxProps) -> Html {
    let n = &props.node;
    let tone = match n.ready.as_str() {
        "True" => "ready",
        "False" => "not-ready",
        _ => "unknown",
    };
    html! {
        <li class={classes!("node", tone)} data-testid="node" data-name={n.name.clone()} data-ready={n.ready.clone()}>
            <div class="node-head">
                <span class="node-name">{ n.name.clone() }</span>
                <span class="node-status">{ n.status.clone() }</span>
            </div>
            if !props.compact {
                { node_faults(&n.name, &props.on_action) }
            }
            { bar("cpu", n.cpu, n.cpu_label()) }
            { bar("memory", n.memory, n.memory_label()) }
            { bar("pods", n.pods_used, n.pods_label()) }
            <PodList pods={Pods::Node(n.clone())} compact={props.compact} selected={props.selected.clone()} on_action={props.on_action.clone()} />
        </li>
    }
}

/// What can happen to a machine: power off, cut from the network, come back. A plain function,
/// not a component: it is redrawn with its node box anyway, and a Yew component costs the page
/// about 1 KB of wasm.
fn node_faults(node: &str, on_action: &Callback<Action>) -> Html {
    html! {
        <div class="node-faults" role="group" aria-label={format!("Faults for {node}")}>
            { for NODE_FAULTS.iter().map(|verb| {
                let line = node_fault_command(verb, node);
                let on_action = on_action.clone();
                html! {
                    <button type="button" class="small" data-testid={format!("node-{verb}")} data-node={node.to_string()}
                        title={line.clone()} aria-label={format!("{verb} {node}: {}", node_fault_words(verb))}
                        onclick={Callback::from(move |_| on_action.emit(Action::Command(line.clone())))}>
                        { *verb }
                    </button>
                }
            }) }
        </div>
    }
}

/// A capacity bar; its width transitions in CSS. A plain function, not a component: it is
/// redrawn with its node box anyway, and a Yew component costs the page about 1 KB of wasm.
fn bar(label: &'static str, usage: Usage, text: String) -> Html {
    let pct = usage.percent();
    html! {
        <div class="bar" title={format!("{label} requested {text}")}>
            <span class="bar-label">{ label }</span>
            <span class="bar-track" role="meter" aria-label={format!("{label} requested")}
                aria-valuemin="0" aria-valuemax="100" aria-valuenow={pct.to_string()} aria-valuetext={text.clone()}>
                <span class="bar-fill" style={format!("width:{pct}%")}></span>
            </span>
            <span class="bar-text">{ text }</span>
        </div>
    }
}

/// The pods a list shows: a node's own (shared with its box, not copied each time the box is
/// redrawn) or the ones waiting for a node.
#[derive(Clone, PartialEq)]
pub enum Pods {
    Node(Rc<NodeView>),
    Waiting(Rc<Vec<PodView>>),
}

impl Pods {
    fn as_slice(&self) -> &[PodView] {
        match self {
            Pods::Node(node) => &node.pods,
            Pods::Waiting(pods) => pods,
        }
    }
}

#[derive(Properties, PartialEq)]
pub struct PodListProps {
    pub pods: Pods,
    pub compact: bool,
    pub selected: Option<AttrValue>,
    pub on_action: Callback<Action>,
}

/// Pods as a keyed list of buttons.
#[component]
pub fn PodList(props: &PodListProps) -> Html {
    html! {
        <ul class="pods" aria-label="Pods">
            { for props.pods.as_slice().iter().map(|p| {
                let selected = props.selected.as_deref().is_some_and(|key| p.is_key(key));
                pod_chip(p, props.compact, selected, &props.on_action)
            }) }
        </ul>
    }
}

/// One pod: a button showing kubectl's STATUS by colour and in its label, keyed by the pod.
/// Plain elements rather than a component: a large cluster creates pods by the thousand, and
/// the list they sit in is only redrawn when its node's box changed.
fn pod_chip(p: &PodView, compact: bool, selected: bool, on_action: &Callback<Action>) -> Html {
    let onclick = {
        let (cb, ns, name) = (on_action.clone(), p.namespace.clone(), p.name.clone());
        Callback::from(move |_: MouseEvent| cb.emit(if selected { Action::Deselect } else { Action::Select(ns.clone(), name.clone()) }))
    };
    let label = format!(
        "{}: {}, {} ready, {} restarts{}",
        p.name,
        p.status,
        p.ready,
        p.restarts,
        if p.owner.is_empty() { String::new() } else { format!(", owned by {}", p.owner) }
    );
    html! {
        <li key={p.key()} class="pod-item">
            <button type="button" class={classes!("pod", p.tone(), selected.then_some("selected"))}
                data-testid="pod" data-name={p.name.clone()} data-node={p.node.clone()}
                data-phase={p.phase.clone()} data-status={p.status.clone()} data-ready={p.is_ready.to_string()}
                aria-pressed={selected.to_string()} aria-label={label.clone()} title={(!compact).then_some(label)} {onclick}>
                if !compact {
                    <span class="pod-dot" aria-hidden="true"></span>
                    <span class="pod-name">{ p.short_name().to_string() }</span>
                    if p.restarts > 0 {
                        <span class="pod-restarts" aria-hidden="true">{ format!("↻{}", p.restarts) }</span>
                    }
                }
            </button>
        </li>
    }
}
