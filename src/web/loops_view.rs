//! The loops on the stage and the messages between them.
//!
//! Every process is a box — kube-apiserver, etcd with its revision, kube-controller-manager with
//! its controllers, kube-scheduler on the control plane row, a kubelet and a kube-proxy in each
//! node's box. A loop at work (or just done, stopped, captioned, pinned) is a row with its words;
//! an idle one folds into a dial in its process's head (`kubeloop::view::focus` decides). Each
//! loop has a dial that lights observe, compare or act and turns a third for
//! every turn the loop takes (a CSS transition on `--turns`, so it is seen to turn even when a
//! turn lasts a simulated millisecond), with its queue depth and last action in words.
//!
//! Messages are tokens on the stage, each an element keyed by its hop's sequence number that
//! flies once from the sender's box to the receiver's (every box names itself with
//! `data-anchor`; `crate::flight` starts the flight), so the page never re-renders to move them.
//! What a token says and which boxes it joins is decided in `kubeloop::view::stage`.

use std::rc::Rc;

use yew::prelude::*;

use kubeloop::model::Time;
use kubeloop::play::{sim_time, Action};
use kubeloop::view::cluster::ClusterView;
use kubeloop::view::flow::Hop;
use kubeloop::view::focus::{fold, qualified, Focus, Why};
use kubeloop::view::loops::{ComponentView, LoopView};
use kubeloop::view::page::switch_command;
use kubeloop::view::stage::{anchor, labelled, role_words, tokens};
use kubeloop::view::story::Caption;

/// What every process box on the stage shares: the learner's pins, whether a lesson conceals
/// run states, whether one keeps every loop unfolded, and the two callbacks.
pub struct Room<'a> {
    /// Loops unfolded by hand (`PROCESS/LOOP`).
    pub pinned: &'a [String],
    pub conceal: bool,
    /// A lesson is playing: nothing folds (`kubeloop::view::focus::Focus::keep_all`).
    pub keep_all: bool,
    /// Every control's action, a pin's too (`Action::Pin`).
    pub on_action: &'a Callback<Action>,
}

/// One process with its loops: a box on the control plane row, or a row in its node's box.
/// `spotlight` is the caption's naming of it (`Some("")` for the process, `Some(LOOP)` for one
/// of its loops); `room.conceal` hides whether it runs (a lesson asks which loop stopped): no
/// switch, no stopped look. The loops at work are rows; the idle ones fold into dials in the
/// head (`kubeloop::view::focus` decides which). A plain function rather than a component: the
/// stage redraws it anyway, and a Yew component costs the page about 1 KB of wasm.
pub fn component_item(c: &ComponentView, spotlight: Option<&str>, room: &Room) -> Html {
    let conceal = room.conceal;
    let state = if conceal { "neutral" } else { c.state.as_str() };
    let class = format!("component {} {state} phase-{}{}", c.role, c.phase(), if spotlight.is_some() { " spotlight" } else { "" });
    let focus = Focus {
        pinned: room.pinned,
        lit: spotlight.map(|s| (c.name.as_str(), (!s.is_empty()).then_some(s))),
        keep_all: room.keep_all || conceal,
    };
    let folding = fold(c, &focus);
    html! {
        <li key={c.name.clone()} {class} data-anchor={anchor(&c.name)}
            data-testid="component" data-name={c.name.clone()} data-state={c.state.clone()} data-phase={c.phase().to_string()}
            title={format!("{}: {}", c.name, role_words(&c.role))}>
            { component_head(c, &folding.folded, room) }
            if !c.detail.is_empty() {
                <p class="detail" data-testid={format!("{}-detail", c.role)}>{ c.detail.clone() }</p>
            }
            if !folding.shown.is_empty() {
                <ul class="loops">
                    { for folding.shown.iter().map(|(l, why)| loop_row(l, c, spotlight == Some(l.name.as_str()), *why == Why::Pinned, room)) }
                </ul>
            }
        </li>
    }
}

// The small pieces below are plain functions too, redrawn with the box that holds them.

/// A process's name, its idle loops folded into dials, its state (unless concealed) and its
/// on/off switch.
pub fn component_head(c: &ComponentView, folded: &[&LoopView], room: &Room) -> Html {
    html! {
        <div class="component-head">
            <span class="component-name">{ c.name.clone() }</span>
            if !folded.is_empty() {
                <span class="folded">
                    { for folded.iter().map(|l| folded_dial(c, l, room.on_action)) }
                </span>
            }
            if !room.conceal {
                if c.state != "running" {
                    <span class={classes!("state", c.state.clone())}>{ c.state.clone() }</span>
                }
                { switch(&c.name, c.state == "running", room.on_action) }
            }
        </div>
    }
}

/// An idle loop folded into its dial: a button named for the loop (its name also shows beside
/// it on hover and focus) that unfolds it, pinned, until folded again.
fn folded_dial(c: &ComponentView, l: &LoopView, on_action: &Callback<Action>) -> Html {
    let qualified = qualified(&c.name, &l.name);
    let onclick = pin(&qualified, on_action);
    // Its name shows beside it on hover and focus from `data-loop` (style.css, `::after`).
    html! {
        <button type="button" class="fold-dial" data-testid="folded-loop" data-loop={l.name.clone()} aria-label={l.name.clone()} {onclick}>
            { dial(&l.phase, l.turns) }
        </button>
    }
}

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

/// One loop: dial, name (unless it is its process's, as kube-scheduler's is), phase, queue,
/// last action. A loop of kube-controller-manager can be switched on its own: its dial is the
/// switch (no room for another control in a row of fifteen), unless a lesson conceals it.
fn loop_row(l: &LoopView, owner: &ComponentView, lit: bool, pinned: bool, room: &Room) -> Html {
    let (conceal, on_action) = (room.conceal, room.on_action);
    let stopped = l.stopped && !conceal;
    let last = match (&l.last_action, l.last_action_at) {
        _ if stopped => "stopped: it neither observes nor acts".to_string(),
        (a, _) if a.is_empty() => "nothing yet".to_string(),
        (a, Some(t)) => format!("{a} (at {})", sim_time(Time(t))),
        (a, None) => a.clone(),
    };
    let phase = if stopped { "stopped".to_string() } else { l.phase.clone() };
    let switchable = owner.role == "controller-manager" && !conceal;
    html! {
        <li key={l.name.clone()} class={format!("loop phase-{phase}{}{}{}", if lit { " spotlight" } else { "" }, if l.name == owner.name { " solo" } else { "" }, if pinned { " pinned" } else { "" })} data-loop={l.name.clone()} data-phase={phase.clone()}
            title={format!("{} (queue {}): {last}", l.name, l.queue_depth)}>
            if switchable {
                { loop_switch(&format!("{}/{}", owner.name, l.name), !l.stopped, dial(&l.phase, l.turns), on_action) }
            } else {
                { dial(&l.phase, l.turns) }
            }
            if l.name != owner.name {
                <span class="loop-name">{ l.name.trim_end_matches("-controller").to_string() }</span>
            }
            <span class="loop-phase">{ phase }</span>
            <span class={if l.queue_depth > 0 { "loop-queue busy" } else { "loop-queue" }}>{ format!("queue {}", l.queue_depth) }</span>
            <span class="loop-last">{ last }</span>
            if pinned {
                { fold_button(&qualified(&owner.name, &l.name), room.on_action) }
            }
        </li>
    }
}

/// A click that pins or unpins loop `qualified` (`PROCESS/LOOP`).
fn pin(qualified: &str, on_action: &Callback<Action>) -> Callback<MouseEvent> {
    let (on_action, qualified) = (on_action.clone(), qualified.to_string());
    Callback::from(move |_: MouseEvent| on_action.emit(Action::Pin(qualified.clone())))
}

/// Folds a loop the learner unfolded back into its dial.
fn fold_button(qualified: &str, on_action: &Callback<Action>) -> Html {
    let onclick = pin(qualified, on_action);
    html! {
        <button type="button" class="fold" data-testid="fold-loop" aria-label={format!("Fold {qualified} into its dial")} {onclick}>{ "▴" }</button>
    }
}

/// One loop's switch, drawn as its dial: runs `sim stop|start kube-controller-manager/NAME`.
fn loop_switch(qualified: &str, running: bool, dial: Html, on_action: &Callback<Action>) -> Html {
    let onclick = {
        let (name, on_action) = (qualified.to_string(), on_action.clone());
        Callback::from(move |_| on_action.emit(Action::Command(switch_command(&name, running))))
    };
    let label = format!("{} {qualified}", if running { "Stop" } else { "Start" });
    html! {
        <button type="button" class="loop-switch" role="switch" aria-checked={running.to_string()} aria-label={label.clone()} title={label}
            data-testid="loop-switch" data-name={qualified.to_string()} {onclick}>
            { dial }
        </button>
    }
}

/// Three arcs — observe, compare, act — with the current one lit, turned a third per turn.
fn dial(phase: &str, turns: u64) -> Html {
    let on = |p: &str| if phase == p { "arc on" } else { "arc" };
    html! {
        <svg class="dial" viewBox="0 0 20 20" aria-hidden="true" style={format!("--turns:{}", turns % 100_000)}>
            <path class={classes!(on("observe"), "observe")} d="M10 2 A8 8 0 0 1 16.93 14" />
            <path class={classes!(on("compare"), "compare")} d="M16.93 14 A8 8 0 0 1 3.07 14" />
            <path class={classes!(on("act"), "act")} d="M3.07 14 A8 8 0 0 1 10 2" />
        </svg>
    }
}

#[derive(Properties, PartialEq)]
pub struct TokenLayerProps {
    pub hops: Rc<Vec<Hop>>,
    /// Where bound pods went (for `bind → node-2`).
    pub cluster: ClusterView,
    /// The selected pod's object key (`pod/default/web-x`): its tokens are marked.
    pub selected: Option<AttrValue>,
    /// Story mode's caption: only its hop's tokens carry words (`kubeloop::view::stage::labelled`).
    pub caption: Option<Rc<Caption>>,
}

/// The messages in flight, each travelling from its sender's box to its receiver's.
#[component]
pub fn TokenLayer(props: &TokenLayerProps) -> Html {
    let selected = props.selected.as_deref();
    let all = tokens(&props.hops, &props.cluster);
    let layer = use_node_ref();
    crate::flight::use_flights(&layer);
    html! {
        // Hidden from assistive technology: the events table and the caption say the same in words.
        <div class="tokens" aria-hidden="true" ref={layer}>
            { for all.into_iter().enumerate().map(|(i, t)| {
                let chain = selected.is_some_and(|s| props.hops.get(i).is_some_and(|h| !h.object.is_empty() && h.object == s));
                let dot = !labelled(&t, props.caption.as_deref());
                html! {
                    <span key={t.key} class={format!("token {}{}{}{}", t.kind, if t.quiet { " quiet" } else { "" }, if chain { " chain" } else { "" }, if dot { " dot" } else { "" })}
                        style={format!("--from:{};--to:{};--lane:{}", t.from_anchor, t.to_anchor, t.key % 4)}
                        data-testid="token" data-from={t.from} data-to={t.to} data-object={t.object} title={t.title}>
                        // A dot carries no words (its title still says what it is).
                        if !dot { { t.label } }
                    </span>
                }
            }) }
        </div>
    }
}
