//! The room of loops and the event flow.
//!
//! The room shows every process as a card — kube-apiserver, etcd with its revision,
//! kube-controller-manager with a row per controller, kube-scheduler, a kubelet per node — each
//! loop with a dial that lights observe, compare or act, its queue depth and its last action in
//! words. With many nodes the kubelets shrink to a grid of dials.
//!
//! The flow draws the messages of the last frames travelling between fixed places on a small
//! diagram. Each hop is an element keyed by its sequence number that plays one CSS animation
//! from sender to receiver, so the page never re-renders to move it.

use std::rc::Rc;

use yew::prelude::*;

use kubeloop::model::Time;
use kubeloop::play::{sim_time, Action};
use kubeloop::view::flow::{FlowLayout, Hop};
use kubeloop::view::loops::{ComponentView, LoopView};
use kubeloop::view::page::switch_command;

/// Up to this many kubelets get a full card; more become a grid of dials.
const KUBELET_CARDS: usize = 6;

#[derive(Properties, PartialEq)]
pub struct LoopsPanelProps {
    pub components: Rc<Vec<ComponentView>>,
    pub on_action: Callback<Action>,
}

/// Every component and its loops.
#[component]
pub fn LoopsPanel(props: &LoopsPanelProps) -> Html {
    let (kubelets, plane): (Vec<&ComponentView>, Vec<&ComponentView>) = props.components.iter().partition(|c| c.role == "kubelet");
    let compact = kubelets.len() > KUBELET_CARDS;
    html! {
        <section class="panel loops-panel" aria-labelledby="loops-title">
            <h2 id="loops-title" class="panel-title">{ "The room of loops" }</h2>
            <p class="muted legend-line">
                { "Each loop observes (its informer hears of a change), compares (the claim with what is), acts (sends writes), or idles." }
            </p>
            <ul class="components">
                { for plane.iter().map(|c| html! { <ComponentCard key={c.name.clone()} component={(*c).clone()} on_action={props.on_action.clone()} /> }) }
                if !compact {
                    { for kubelets.iter().map(|c| html! { <ComponentCard key={c.name.clone()} component={(*c).clone()} on_action={props.on_action.clone()} /> }) }
                }
            </ul>
            if compact {
                <h3 class="sub-title">{ format!("{} kubelets", kubelets.len()) }</h3>
                <ul class="kubelet-grid">
                    { for kubelets.iter().map(|c| html! { <KubeletDial key={c.name.clone()} component={(*c).clone()} on_action={props.on_action.clone()} /> }) }
                </ul>
            }
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct ComponentProps {
    pub component: ComponentView,
    pub on_action: Callback<Action>,
}

/// One process with its loops.
#[component]
pub fn ComponentCard(props: &ComponentProps) -> Html {
    let c = &props.component;
    html! {
        <li class={classes!("component", c.role.clone(), c.state.clone(), format!("phase-{}", c.phase()))}
            data-testid="component" data-name={c.name.clone()} data-state={c.state.clone()} data-phase={c.phase().to_string()}>
            <div class="component-head">
                <span class="component-name">{ c.name.clone() }</span>
                <span class={classes!("state", c.state.clone())}>{ c.state.clone() }</span>
                { switch(&c.name, c.state == "running", &props.on_action) }
            </div>
            if !c.detail.is_empty() {
                <p class="detail" data-testid={format!("{}-detail", c.role)}>{ c.detail.clone() }</p>
            }
            if c.loops.is_empty() {
                <p class="detail muted">{ role_words(&c.role) }</p>
            }
            if !c.loops.is_empty() {
                <ul class="loops">
                    { for c.loops.iter().map(loop_row) }
                </ul>
            }
        </li>
    }
}

// The small pieces below (switch, loop row, dial) are plain functions, not components: a Yew
// component costs the page about 1 KB of wasm for its lifecycle alone, and these are redrawn with
// the card or row that holds them anyway.

/// A process's on/off switch: runs `sim stop NAME` or `sim start NAME`, as typed in the console.
fn switch(name: &str, running: bool, on_action: &Callback<Action>) -> Html {
    let onclick = {
        let (name, on_action) = (name.to_string(), on_action.clone());
        Callback::from(move |_| on_action.emit(Action::Command(switch_command(&name, running))))
    };
    let label = format!("{} {}", if running { "Stop" } else { "Start" }, name);
    html! {
        <button type="button" class="switch" role="switch" aria-checked={running.to_string()} aria-label={label.clone()} title={label}
            data-testid="component-switch" data-name={name.to_string()} {onclick}>
            <span class="switch-knob" aria-hidden="true"></span>
        </button>
    }
}

fn role_words(role: &str) -> &'static str {
    match role {
        "apiserver" => "The front door: validates, stores in etcd, tells every watcher.",
        "etcd" => "The memory: every write bumps the revision.",
        _ => "",
    }
}

/// One loop: dial, name, queue, last action.
fn loop_row(l: &LoopView) -> Html {
    let last = match (&l.last_action, l.last_action_at) {
        (a, _) if a.is_empty() => "nothing yet".to_string(),
        (a, Some(t)) => format!("{a} (at {})", sim_time(Time(t))),
        (a, None) => a.clone(),
    };
    html! {
        <li key={l.name.clone()} class={classes!("loop", format!("phase-{}", l.phase))} data-loop={l.name.clone()} data-phase={l.phase.clone()}>
            { dial(&l.phase) }
            <span class="loop-name">{ l.name.clone() }</span>
            <span class="loop-phase">{ l.phase.clone() }</span>
            <span class="loop-queue" title="work queue depth">{ format!("queue {}", l.queue_depth) }</span>
            <span class="loop-last">{ last }</span>
        </li>
    }
}

/// Three arcs — observe, compare, act — with the current one lit.
fn dial(phase: &str) -> Html {
    let on = |p: &str| if phase == p { "arc on" } else { "arc" };
    html! {
        <svg class="dial" viewBox="0 0 20 20" aria-hidden="true">
            <path class={classes!(on("observe"), "observe")} d="M10 2 A8 8 0 0 1 16.93 14" />
            <path class={classes!(on("compare"), "compare")} d="M16.93 14 A8 8 0 0 1 3.07 14" />
            <path class={classes!(on("act"), "act")} d="M3.07 14 A8 8 0 0 1 10 2" />
        </svg>
    }
}

/// A kubelet in the compact grid.
#[component]
pub fn KubeletDial(props: &ComponentProps) -> Html {
    let c = &props.component;
    let last = c.loops.first().map(|l| l.last_action.clone()).unwrap_or_default();
    html! {
        <li class={classes!("kubelet-dial", c.state.clone())} data-testid="component" data-name={c.name.clone()} data-state={c.state.clone()}
            title={format!("{} ({}): {}", c.name, c.state, if last.is_empty() { "nothing yet" } else { last.as_str() })}>
            { dial(c.phase()) }
            <span class="visually-hidden">{ format!("{} {} {}", c.name, c.state, c.phase()) }</span>
        </li>
    }
}

#[derive(Properties, PartialEq)]
pub struct FlowPanelProps {
    pub layout: Rc<FlowLayout>,
    pub hops: Rc<Vec<Hop>>,
    /// The selected pod's object key (`pod/default/web-x`): its hops are marked.
    pub selected: Option<AttrValue>,
}

/// The event flow diagram with its legend.
#[component]
pub fn FlowPanel(props: &FlowPanelProps) -> Html {
    let l = &props.layout;
    let api = l.position("kube-apiserver").map(|p| (p.x, p.y)).unwrap_or((240, 110));
    let recent: Vec<&Hop> = props.hops.iter().rev().take(6).collect();
    html! {
        <section class="panel flow-panel" aria-labelledby="flow-title">
            <h2 id="flow-title" class="panel-title">{ "Event flow" }</h2>
            <svg class="flow" viewBox={format!("0 0 {} {}", l.width, l.height)} role="img"
                aria-label="Messages travelling between the components; the list below names the latest">
                { for l.lanes.iter().filter(|p| p.id != "kube-apiserver").map(|p| html! {
                    <line class="wire" x1={api.0.to_string()} y1={api.1.to_string()} x2={p.x.to_string()} y2={p.y.to_string()} />
                }) }
                { for l.lanes.iter().map(|p| html! {
                    <g class={classes!("lane", p.id.clone())}>
                        <rect x={(p.x - 54).to_string()} y={(p.y - 10).to_string()} width="108" height="20" rx="5" />
                        <text x={p.x.to_string()} y={(p.y + 4).to_string()} text-anchor="middle">{ p.label.clone() }</text>
                    </g>
                }) }
                { for props.hops.iter().filter_map(|h| hop_shape(l, h, props.selected.as_deref())) }
            </svg>
            <ul class="legend" aria-label="Legend">
                <li><svg viewBox="0 0 12 12" aria-hidden="true"><circle class="hop request" cx="6" cy="6" r="5" /></svg>{ "request to kube-apiserver" }</li>
                <li><svg viewBox="0 0 12 12" aria-hidden="true"><circle class="hop response" cx="6" cy="6" r="3.5" /></svg>{ "response" }</li>
                <li><svg viewBox="0 0 12 12" aria-hidden="true"><rect class="hop etcd-write" x="1" y="1" width="10" height="10" /></svg>{ "write committed to etcd" }</li>
                <li><svg viewBox="0 0 12 12" aria-hidden="true"><path class="hop watch" d="M6 0 L12 6 L6 12 L0 6 Z" /></svg>{ "watch notification" }</li>
                <li><span class="fold-sample" aria-hidden="true">{ "×12" }</span>{ "many messages folded into one" }</li>
            </ul>
            <ol class="hop-list" aria-label="Latest messages, newest first">
                { for recent.iter().map(|h| html! {
                    <li key={h.seq} class={classes!(h.kind.clone(), is_chain(h, props.selected.as_deref()).then_some("chain"))}>
                        <span class="hop-route">{ format!("{} → {}", h.from, h.to) }</span>
                        <span class="hop-what">{ h.what.clone() }</span>
                    </li>
                }) }
            </ol>
        </section>
    }
}

fn is_chain(h: &Hop, selected: Option<&str>) -> bool {
    selected.is_some_and(|s| !h.object.is_empty() && h.object == s)
}

/// One hop: a shape that travels from sender to receiver once (CSS animation, custom properties
/// for the ends). None for a hop with an end off the diagram: every hop drawn is keyed, so Yew
/// moves hops rather than rewriting them in place (which would restart their animations).
fn hop_shape(l: &FlowLayout, h: &Hop, selected: Option<&str>) -> Option<Html> {
    let (from, to) = (l.position(&h.from)?, l.position(&h.to)?);
    let style = format!("--x1:{}px;--y1:{}px;--x2:{}px;--y2:{}px", from.x, from.y, to.x, to.y);
    let class = classes!("hop", h.kind.clone(), is_chain(h, selected).then_some("chain"));
    let shape = match h.kind.as_str() {
        "etcd-write" => html! { <rect x="-5" y="-5" width="10" height="10" /> },
        "watch" => html! { <path d="M0 -6 L6 0 L0 6 L-6 0 Z" /> },
        "response" => html! { <circle r="3.5" /> },
        _ => html! { <circle r="5" /> },
    };
    Some(html! {
        <g key={h.seq} class={class} style={style}>
            { shape }
            if h.count > 1 {
                <text y="-8" text-anchor="middle" class="fold">{ format!("×{}", h.count) }</text>
            }
        </g>
    })
}
