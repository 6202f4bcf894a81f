//! The stage: the whole cluster as one picture. The control plane across the top, the pods no
//! node has yet waiting in the middle under the caption strip, and the nodes below, each box
//! holding its kubelet and its pods; the messages between them travel across it as tokens.
//!
//! It is laid out by CSS grid only, so a new loop slots in where it belongs without a new
//! layout: another process on the control plane row is another box, another controller another
//! row in kube-controller-manager's box, a per-node process (kube-proxy) another row in every
//! node box (`kubeloop::view::stage` decides which is which).
//!
//! Each node box is its own component with an `Rc<NodeView>` prop: a frame that changes one node
//! re-renders one box. Pods are buttons (select one, then Kill it on the pod itself or in the
//! side panel), keyed by
//! name so a pod keeps its element while it lives; new pods, status colours and bars animate
//! with CSS, not with per-frame renders.

use std::rc::Rc;

use yew::prelude::*;

use crate::loops_view::{component_item, Room, TokenLayer};
use crate::services_view::{pod_anchor, ServicesBand, TrafficDots};
use kubeloop::play::Action;
use kubeloop::view::cluster::{ClusterView, NodeView, PodView, Usage};
use kubeloop::view::flow::Hop;
use kubeloop::view::gap::GapView;
use kubeloop::view::loops::ComponentView;
use kubeloop::view::page::{node_fault_command, node_fault_words, NODE_FAULTS};
use kubeloop::view::services::{Dot, ServiceView};
use kubeloop::view::stage::{anchor, caption_target, last_action, on_node, plane, trail, Trail, POD_LEGEND};
use kubeloop::view::story::{Caption, Replacement};

#[derive(Properties, PartialEq)]
pub struct StageProps {
    pub cluster: ClusterView,
    pub components: Rc<Vec<ComponentView>>,
    pub hops: Rc<Vec<Hop>>,
    pub caption: Option<Rc<Caption>>,
    /// Killed pods and the pods created in their place: each chip shows its end of the trail.
    pub replacements: Rc<Vec<Replacement>>,
    /// The followed Deployment's gap: its missing replicas are ghost slots in the pending area.
    pub gap: Rc<GapView>,
    /// The Services that select pods, and how many more there are.
    pub services: Rc<(Vec<ServiceView>, usize)>,
    /// `sim traffic`'s newest connections.
    pub dots: Rc<Vec<Dot>>,
    /// `namespace/name` of the selected pod.
    pub selected: Option<AttrValue>,
    /// Draw the control plane row (the `loops` panel) and the tokens (the `flow` panel).
    pub show_plane: bool,
    pub show_tokens: bool,
    /// Show no component's running or stopped state (a lesson asks which loop stopped).
    pub conceal: bool,
    /// A lesson is playing: no loop folds into its dial.
    pub keep_all: bool,
    /// The loops the learner unfolded by hand (`PROCESS/LOOP`).
    pub pins: Rc<Vec<String>>,
    pub on_action: Callback<Action>,
}

/// Past this many pods the cluster is drawn compactly: pods as small squares without text,
/// no entry animation, node boxes skipped by the browser while off screen.
const COMPACT_PODS: usize = kubeloop::play::LARGE_CLUSTER_PODS;
/// At most this many unscheduled pods are drawn; the rest are counted.
const UNSCHEDULED_SHOWN: usize = 60;

/// The stage.
#[component]
pub fn Stage(props: &StageProps) -> Html {
    let selected = props.selected.as_deref();
    let pending = &props.cluster.unscheduled;
    let compact = props.cluster.pod_count > COMPACT_PODS;
    let shown: Rc<Vec<PodView>> =
        if pending.len() > UNSCHEDULED_SHOWN { Rc::new(pending[..UNSCHEDULED_SHOWN].to_vec()) } else { pending.clone() };
    let (lit_component, lit_loop) = props.caption.as_deref().map(caption_target).unzip();
    // The caption's pod, as the pods' keys name it (`pod/NAME` → `NAME`).
    let lit_pod = props.caption.as_ref().and_then(|c| c.object.strip_prefix("pod/")).map(AttrValue::from);
    let components = &props.components;
    let room = Room { pinned: &props.pins, conceal: props.conceal, keep_all: props.keep_all, on_action: &props.on_action };
    // Attached to a real cluster (`?cluster=`): its boxes are observed, not run here.
    let observed = components.iter().any(|c| c.state == "observed");
    html! {
        <section class={classes!("stage", compact.then_some("compact"))} aria-labelledby="stage-title" data-testid="cluster-frame">
            <h2 id="stage-title" class="panel-title stage-title">
                { if observed { "Real cluster, observed" } else { "Cluster" } }
                <span class="muted">{ format!(" · {} nodes · {} pods", props.cluster.nodes.len(), props.cluster.pod_count) }</span>
            </h2>
            if props.show_plane {
                <ul class="plane" aria-label="Control plane">
                    <li class="kubectl-box" data-anchor={anchor("kubectl")} title="kubectl: you, and every button on this page, send requests to kube-apiserver">
                        <span class="component-name">{ "kubectl" }</span>
                        <span class="detail">{ if observed { "you: your terminal, Kill and the replicas box" } else { "you: console and buttons" } }</span>
                    </li>
                    { for plane(components).into_iter().map(|c| {
                        let spotlight = (lit_component == Some(c.name.as_str())).then(|| lit_loop.flatten().unwrap_or_default());
                        component_item(c, spotlight, &room)
                    }) }
                </ul>
            }
            <div class="middle">
                { caption_strip(props.caption.as_deref(), components) }
                <div class="pending" role="group" aria-label="Pods waiting for a node" data-testid="pending">
                    <span class="pending-label">{ format!("Pending: no node yet ({})", pending.len()) }</span>
                    if pending.is_empty() && props.gap.missing() == 0 {
                        <span class="muted pending-empty">{ "A new pod waits here until kube-scheduler binds it to a node." }</span>
                    }
                    { ghosts(&props.gap) }
                    <PodList pods={Pods::Waiting(shown)} compact={compact} replacements={props.replacements.clone()} selected={selected.map(AttrValue::from)} spotlight={lit_pod.clone()} on_action={props.on_action.clone()} />
                    if pending.len() > UNSCHEDULED_SHOWN {
                        <span class="muted">{ format!("…and {} more", pending.len() - UNSCHEDULED_SHOWN) }</span>
                    }
                </div>
                { legend() }
            </div>
            <ServicesBand services={props.services.clone()} />
            if props.cluster.nodes.is_empty() {
                <p class="cluster-empty">{ "No nodes yet." }</p>
            }
            <ul class="nodes" aria-label="Nodes" data-anchor={anchor("kubelets")}>
                { for props.cluster.nodes.iter().map(|node| {
                    // Only the box holding the selected (or captioned) pod hears about it.
                    let holds = |key: &str| node.pods.iter().any(|p| p.name == key);
                    let here = selected.filter(|key| node.pods.iter().any(|p| p.is_key(key))).map(AttrValue::from);
                    let spot = lit_pod.clone().filter(|name| holds(name));
                    let lit = lit_component.filter(|c| c.ends_with(&format!("-{}", node.name))).map(AttrValue::from);
                    html! { <NodeBox key={node.name.clone()} node={node.clone()} procs={on_node(components, &node.name)} compact={compact} replacements={props.replacements.clone()}
                        selected={here} spotlight={spot} lit={lit} conceal={props.conceal} keep_all={props.keep_all}
                        pinned={props.pins.clone()} on_action={props.on_action.clone()} /> }
                }) }
            </ul>
            if props.show_tokens {
                <TokenLayer hops={props.hops.clone()} cluster={props.cluster.clone()}
                    selected={selected.map(|s| AttrValue::from(format!("pod/{s}")))} caption={props.caption.clone()} />
            }
            if !props.dots.is_empty() && !compact {
                <TrafficDots dots={props.dots.clone()} pods={drawn_pods(&props.cluster)} />
            }
        </section>
    }
}

/// The names of the pods on the stage, where a traffic dot can land.
fn drawn_pods(cluster: &ClusterView) -> Rc<Vec<String>> {
    Rc::new(cluster.nodes.iter().flat_map(|n| n.pods.iter()).chain(cluster.unscheduled.iter()).map(|p| p.name.clone()).collect())
}

/// The caption strip: story mode's caption (with its test hook), or else, quietly, the last
/// thing any loop did.
fn caption_strip(caption: Option<&Caption>, components: &[ComponentView]) -> Html {
    match caption {
        Some(c) => html! {
            <p class="caption" role="status" data-testid="caption" data-component={c.component.clone()} data-object={c.object.clone()}>{ c.text.clone() }</p>
        },
        None => html! {
            <p class="caption placeholder">{ last_action(components).unwrap_or_else(|| "Every loop is idle.".to_string()) }</p>
        },
    }
}

/// The followed Deployment's missing replicas as ghost slots where they will appear (a new pod
/// waits here for a node). Pods past the claim need no mark of their own: once the ReplicaSet
/// controller deletes them they are drawn Terminating, and the gap panel says why they count in
/// no status.
fn ghosts(gap: &GapView) -> Html {
    let name = gap.deployment.split('/').nth(1).unwrap_or_default();
    let missing = gap.missing();
    html! {
        <>
            if missing > 0 {
                <ul class="ghosts" aria-label={format!("{missing} pods of {name} claimed and not yet created")}>
                    { for (0..missing).map(|i| html! { <li key={i} class="ghost" data-testid="ghost-pod">{ format!("{name}-…") }</li> }) }
                </ul>
            }

        </>
    }
}

/// What the pods' colours mean, in kubectl's STATUS words.
fn legend() -> Html {
    html! {
        <ul class="pod-legend" aria-label="Pod colours">
            { for POD_LEGEND.iter().map(|(tone, words)| html! {
                <li><span class={format!("swatch swatch-{tone}")} aria-hidden="true"></span>{ *words }</li>
            }) }
        </ul>
    }
}

#[derive(Properties, PartialEq)]
pub struct NodeBoxProps {
    pub node: Rc<NodeView>,
    /// The processes running on it (its kubelet).
    pub procs: Vec<ComponentView>,
    pub compact: bool,
    pub replacements: Rc<Vec<Replacement>>,
    pub selected: Option<AttrValue>,
    /// The caption's pod, if it is here.
    pub spotlight: Option<AttrValue>,
    /// The caption's component, if it runs here.
    pub lit: Option<AttrValue>,
    pub conceal: bool,
    pub keep_all: bool,
    /// The loops unfolded by hand.
    pub pinned: Rc<Vec<String>>,
    pub on_action: Callback<Action>,
}

/// One node: name, readiness, its kubelet, bars, pods.
#[component]
pub fn NodeBox(props: &NodeBoxProps) -> Html {
    let n = &props.node;
    let room = Room { pinned: &props.pinned, conceal: props.conceal, keep_all: props.keep_all, on_action: &props.on_action };
    let tone = match n.ready.as_str() {
        "True" => "ready",
        "False" => "not-ready",
        _ => "unknown",
    };
    html! {
        <li class={classes!("node", tone)} data-testid="node" data-name={n.name.clone()} data-ready={n.ready.clone()}
            title={format!("node {}: {} · {} pods", n.name, n.status, n.pods.len())}>
            <div class="node-head">
                <span class="node-name">{ n.name.clone() }</span>
                <span class="node-status">{ n.status.clone() }</span>
                // A node of a real cluster (its kubelet observed, not run here) takes no simulated fault.
                if !props.compact && !props.procs.iter().any(|c| c.state == "observed") {
                    { node_faults(&n.name, &props.on_action) }
                }
            </div>
            <ul class="procs">
                { for props.procs.iter().map(|c| component_item(c, (props.lit.as_deref() == Some(c.name.as_str())).then_some(""), &room)) }
            </ul>
            if !props.compact {
                <div class="bars">
                    { bar("cpu", n.cpu, n.cpu_label()) }
                    { bar("memory", n.memory, n.memory_label()) }
                    { bar("pods", n.pods_used, n.pods_label()) }
                </div>
            }
            <PodList pods={Pods::Node(n.clone())} compact={props.compact} replacements={props.replacements.clone()} selected={props.selected.clone()} spotlight={props.spotlight.clone()} on_action={props.on_action.clone()} />
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

/// A capacity bar; its fill is scaled, and the scale transitions in CSS (on the compositor: a
/// width would lay the stage out again on every frame of the transition). A plain function, not a component: it is
/// redrawn with its node box anyway, and a Yew component costs the page about 1 KB of wasm.
fn bar(label: &'static str, usage: Usage, text: String) -> Html {
    let pct = usage.percent();
    html! {
        <div class="bar" title={format!("{label} requested {text}")}>
            <span class="bar-label">{ label }</span>
            <span class="bar-track" role="meter" aria-label={format!("{label} requested")}
                aria-valuemin="0" aria-valuemax="100" aria-valuenow={pct.to_string()} aria-valuetext={text.clone()}>
                <span class="bar-fill" style={format!("scale:{pct}% 100%")}></span>
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
    pub replacements: Rc<Vec<Replacement>>,
    pub selected: Option<AttrValue>,
    /// The name of the pod the caption is about.
    pub spotlight: Option<AttrValue>,
    pub on_action: Callback<Action>,
}

/// Pods as a keyed list of buttons.
#[component]
pub fn PodList(props: &PodListProps) -> Html {
    html! {
        <ul class="pods" aria-label="Pods">
            { for props.pods.as_slice().iter().map(|p| {
                let selected = props.selected.as_deref().is_some_and(|key| p.is_key(key));
                let lit = props.spotlight.as_deref() == Some(p.name.as_str());
                // A large cluster draws no trail: its pods are squares without words.
                let end = if props.compact { None } else { trail(&props.replacements, &p.namespace, &p.name) };
                pod_chip(p, props.compact, selected, lit, end, &props.on_action)
            }) }
        </ul>
    }
}

/// The callback of a pod's Kill control: `Action::Kill` kills the selected pod.
fn kill(on_action: &Callback<Action>) -> Callback<MouseEvent> {
    let cb = on_action.clone();
    Callback::from(move |_: MouseEvent| cb.emit(Action::Kill))
}

/// One pod: a button showing kubectl's STATUS by colour and in its label, keyed by the pod.
/// Plain elements rather than a component: a large cluster creates pods by the thousand, and
/// the list they sit in is only redrawn when its node's box changed.
fn pod_chip(p: &PodView, compact: bool, selected: bool, lit: bool, trail: Option<Trail>, on_action: &Callback<Action>) -> Html {
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
    let label = match &trail {
        Some(t) => format!("{label}; {}", t.words),
        None => label,
    };
    html! {
        // A traffic dot lands on the chip it names (a compact square is never a dot's end).
        <li key={p.key()} class="pod-item" data-anchor={(!compact).then(|| pod_anchor(&p.name))}>
            <button type="button" class={classes!("pod", p.tone(), selected.then_some("selected"), lit.then_some("spotlight"))}
                data-testid="pod" data-name={p.name.clone()} data-node={p.node.clone()}
                data-phase={p.phase.clone()} data-status={p.status.clone()} data-ready={p.is_ready.to_string()}
                aria-pressed={selected.to_string()} aria-label={label.clone()} title={label} {onclick}>
                if !compact {
                    <span class="pod-dot" aria-hidden="true"></span>
                    <span class="pod-name">{ p.short_name().to_string() }</span>
                    if p.restarts > 0 {
                        <span class="pod-restarts" aria-hidden="true">{ format!("↻{}", p.restarts) }</span>
                    }
                }
            </button>
            // Kill on the pod itself: the selected pod carries the same DELETE the side panel's
            // Kill sends, so the first thing to try is where the eye already is.
            if selected {
                <button type="button" class="pod-kill danger" data-testid="pod-kill" aria-label={format!("Kill pod {}", p.name)} onclick={kill(on_action)}>{ "✕ Kill" }</button>
            }
            if let Some(t) = trail {
                <span class={format!("pod-trail {}", t.role)} data-testid="trail" data-role={t.role} data-other={t.other} aria-hidden="true">{ t.text }</span>
            }
        </li>
    }
}
