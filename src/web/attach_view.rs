//! What only an attached page shows (`?cluster=PATH`): the bar saying that this is a real
//! cluster observed through its API, not the simulation, with how it is read and the pacing
//! controls; and the list of changes seen, each with the loop it is attributed to and how that
//! is known.
//!
//! The whole attached page is drawn here ([`attached_page`]), not by branches through the
//! simulation's `App`: none of it is needed by a visitor of the simulation, so the wasm split
//! leaves it all in the lazy module and the first load does not grow. It reuses the stage and
//! the panels that mean the same thing on a real cluster (the gap and its replicas box, the
//! events, the commands the controls sent), and leaves out what only a simulation has (the
//! clock, the console and editor, lessons, faults, switches, sharing, kube-scheduler's reasons).

use std::rc::Rc;

use yew::prelude::*;

use crate::cluster_view::Stage;
use crate::events_view::{CommandLog, EventsPanel};
use crate::share_view::ErrorBanner;
use crate::side::GapPanel;
use kubeloop::play::{Action, AttachedView, Mode, Selection, Snapshot};

/// The attached page: its own bar, the stage with every switch hidden, the changes seen, the
/// gap, the selected pod, the events and the commands sent.
#[inline(never)]
pub fn attached_page(s: &Rc<Snapshot>, a: &AttachedView, root: NodeRef, on_action: &Callback<Action>) -> Html {
    let selected = s.selection.as_ref().map(|sel| AttrValue::from(format!("{}/{}", sel.namespace, sel.name)));
    html! {
        <div ref={root} class="app attached" data-sim-time={s.time_ms.to_string()} data-mode={s.mode.name()}>
            <header class="header">
                <h1 class="title">{ "kubeloop" }</h1>
                <span class="version">{ format!("v{}", kubeloop::VERSION) }</span>
                <p class="tagline">{ "A real Kubernetes cluster, drawn from what its API reports." }</p>
            </header>
            { attach_bar(a, s.mode, s.story, on_action) }
            <ErrorBanner errors={s.errors.clone()} on_action={on_action.clone()} />
            <main class="content">
                <Stage cluster={s.cluster.clone()} components={s.components.clone()} hops={s.hops.clone()} caption={s.caption.clone()}
                    replacements={s.replacements.clone()} gap={s.gap.clone()} services={s.services.clone()} dots={s.dots.clone()}
                    {selected} show_plane={true} show_tokens={false} conceal={true} keep_all={false} pins={s.pins.clone()} on_action={on_action.clone()} />
                <aside class="side">
                    { told_panel(a) }
                    <GapPanel gap={s.gap.clone()} chart={s.chart.clone()} commands={s.commands.clone()} on_action={on_action.clone()} />
                    { pod_panel(s.selection.as_deref(), on_action) }
                </aside>
                <EventsPanel events={s.events.clone()} filter={s.filter.clone()} on_action={on_action.clone()} />
                <CommandLog commands={s.commands.clone()} />
            </main>
        </div>
    }
}

/// The selected pod and its Kill button (`DELETE`, as `kubectl delete pod`).
fn pod_panel(selection: Option<&Selection>, on_action: &Callback<Action>) -> Html {
    let kill = {
        let cb = on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(Action::Kill))
    };
    let body = match selection {
        None => html! { <p class="muted">{ "Select a pod on the stage." }</p> },
        Some(sel) => html! {
            <p class="pod-title">
                <strong>{ sel.name.clone() }</strong>
                { match &sel.pod {
                    Some(p) => html! { <span class="muted">{ format!(" · {} · {} ready · node {}", p.status, p.ready, if p.node.is_empty() { "none yet" } else { p.node.as_str() }) }</span> },
                    None => html! { <span class="muted">{ " · gone" }</span> },
                } }
            </p>
        },
    };
    html! {
        <section class="panel pod-panel" aria-labelledby="pod-title">
            <h2 id="pod-title" class="panel-title">{ "Selected pod" }</h2>
            { body }
            <button type="button" class="danger" data-testid="kill-pod" onclick={kill} disabled={selection.is_none_or(|s| s.pod.is_none())}>{ "Kill pod" }</button>
        </section>
    }
}

/// The bar across the top of an attached page. Never inlined into the app, so that the wasm
/// split can leave it out of the first load.
#[inline(never)]
pub fn attach_bar(view: &AttachedView, mode: Mode, story: bool, on_action: &Callback<Action>) -> Html {
    let act = |action: Action| {
        let cb = on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(action.clone()))
    };
    let paused = mode == Mode::Paused;
    let behind = match view.behind {
        0 => String::new(),
        n => format!(" · {n} waiting"),
    };
    html! {
        <section class="attached-bar" data-testid="attached" aria-label="Attached cluster">
            <p class="attached-title">
                <strong class="attached-badge">{ "Real cluster" }</strong>
                { " attached through the Kubernetes API at " }<code>{ view.cluster.clone() }</code>
                { ": drawn from what its API reports, nothing simulated. Queues, dials and messages are not visible from outside." }
            </p>
            <p class="attached-status" data-testid="attached-status">{ format!("{}{behind}", view.status) }</p>
            <div class="attached-controls">
                if paused {
                    <button type="button" class="primary" data-testid="play" onclick={act(Action::Play)}>{ "Show changes" }</button>
                    <button type="button" data-testid="step" onclick={act(Action::Step)}>{ "Next change" }</button>
                } else {
                    <button type="button" data-testid="pause" onclick={act(Action::Pause)}>{ "Hold the picture" }</button>
                }
                <button type="button" data-testid="story" aria-pressed={story.to_string()} onclick={act(Action::ToggleStory)}
                    >{ "Story" }</button>
            </div>
        </section>
    }
}

/// The changes told, newest first.
#[inline(never)]
pub fn told_panel(view: &AttachedView) -> Html {
    html! {
        <section class="panel told" aria-labelledby="told-title">
            <h2 id="told-title" class="panel-title">{ "Seen on the cluster" }</h2>
            <p class="told-note">{ "Each names its loop and how that is known: an Event it reported, managedFields, or inferred." }</p>
            if view.told.is_empty() {
                <p class="told-empty">{ "No change yet: delete a pod with kubectl and watch." }</p>
            } else {
                <ol data-testid="told">
                    { for view.told.iter().map(|t| html! { <li>{ t.clone() }</li> }) }
                </ol>
            }
        </section>
    }
}
