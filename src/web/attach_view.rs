//! What only an attached page shows (`?cluster=PATH`): the bar saying that this is a real
//! cluster observed through its API, not the simulation, with how it is read and the pacing
//! controls; and the list of changes seen, each with the loop it is attributed to and how that
//! is known.
//!
//! Plain functions, drawn by the app in place of the simulation's toolbar and panels.

use yew::prelude::*;

use kubeloop::play::{Action, AttachedView, Mode};

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
        n if story => format!(" · story mode shows the changes one at a time: {n} waiting"),
        n => format!(" · {n} changes waiting"),
    };
    html! {
        <section class="attached-bar" data-testid="attached" aria-label="Attached cluster">
            <p class="attached-title">
                <strong class="attached-badge">{ "Real cluster" }</strong>
                { " attached through the Kubernetes API at " }<code>{ view.cluster.clone() }</code>
                { ": what you see is what its API reports — nothing here is simulated. Loop internals (queues, dials, messages) are not visible from outside." }
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
                    title="Story mode shows the changes seen one at a time, each with its caption">{ "Story" }</button>
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
            <p class="told-note">{ "Each change names the loop that made it and how that is known: an Event the loop reported, the managedFields it wrote, or inferred from what changed." }</p>
            if view.told.is_empty() {
                <p class="told-empty">{ "Nothing has changed since the page listed the cluster. Delete a pod with kubectl and watch." }</p>
            } else {
                <ol data-testid="told">
                    { for view.told.iter().map(|t| html! { <li>{ t.clone() }</li> }) }
                </ol>
            }
        </section>
    }
}
