//! The toolbar: the page's clock (play, pause, step, fast-forward, speed, simulated time) and the
//! run's identity (scenario, seed, reset, add a node).
//!
//! A separate component because it re-renders on every frame the clock moves, and it is small:
//! the panels beside it keep their props and are skipped. Each control shows only if the page's
//! `controls` parameter names it (all by default).

use yew::prelude::*;

use kubeloop::model::Time;
use kubeloop::play::{sim_time, speed_label, Action, Mode};
use kubeloop::view::page::{PageParams, SPEEDS};
use std::rc::Rc;

#[derive(Properties, PartialEq)]
pub struct ToolbarProps {
    pub time_ms: u64,
    pub mode: Mode,
    pub speed: f64,
    pub seed: u64,
    pub lagging: bool,
    pub note: AttrValue,
    pub scenario: AttrValue,
    pub params: Rc<PageParams>,
    /// Story mode (`Snapshot::story`).
    pub story: bool,
    pub presentation: bool,
    pub on_presentation: Callback<()>,
    /// The Operator panel is open; the button opens or closes it.
    pub operator: bool,
    pub on_operator: Callback<()>,
    /// The built-in lessons (name, title) for the picker; None in a widget, which must not
    /// navigate its host page.
    pub lessons: Option<Rc<Vec<(&'static str, String)>>>,
    pub on_action: Callback<Action>,
}

/// Play/pause/step/fast-forward, speed, time, seed, reset and add-node.
#[component]
pub fn Toolbar(props: &ToolbarProps) -> Html {
    let act = |a: Action| {
        let cb = props.on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(a.clone()))
    };
    let on_speed = {
        let cb = props.on_action.clone();
        Callback::from(move |e: Event| {
            let value = e.target_unchecked_into::<web_sys::HtmlSelectElement>().value();
            if let Some(s) = kubeloop::model::parse_f64(&value) {
                cb.emit(Action::Speed(s));
            }
        })
    };
    let on_seed = {
        let cb = props.on_action.clone();
        Callback::from(move |e: Event| {
            let input = e.target_unchecked_into::<web_sys::HtmlInputElement>();
            if let Ok(seed) = input.value().trim().parse::<u64>() {
                cb.emit(Action::Seed(seed));
            }
        })
    };
    let on_lesson = Callback::from(|e: Event| {
        let name = e.target_unchecked_into::<web_sys::HtmlSelectElement>().value();
        if let (false, Some(window)) = (name.is_empty(), web_sys::window()) {
            let _ = window.location().set_search(&format!("lesson={}", kubeloop::view::page::percent_encode(&name)));
        }
    });
    let on_presentation = {
        let cb = props.on_presentation.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let on_operator = {
        let cb = props.on_operator.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let playing = props.mode == Mode::Playing;
    let show = |name: &str| props.params.shows_control(name);
    let status = props.mode.status(props.lagging);
    html! {
        <section class="toolbar" aria-label="Simulation controls">
            <div class="clock" role="group" aria-label="Clock">
                if show("play") {
                    <button type="button" class="primary" data-testid="play" onclick={act(Action::Play)} aria-pressed={playing.to_string()}>
                        <span aria-hidden="true">{ "▶ " }</span>{ "Play" }
                    </button>
                }
                if show("pause") {
                    <button type="button" data-testid="pause" onclick={act(Action::Pause)} aria-pressed={(props.mode == Mode::Paused).to_string()}>
                        <span aria-hidden="true">{ "❚❚ " }</span>{ "Pause" }
                    </button>
                }
                if show("step") {
                    <button type="button" data-testid="step" onclick={act(Action::Step)} title="Run to the next message">{ "Step" }</button>
                }
                if show("fast-forward") {
                    <button type="button" data-testid="fast-forward" onclick={act(Action::FastForward)} title="Run until every loop is idle">{ "Fast-forward" }</button>
                }
                if show("speed") {
                    <label class="inline">
                        { "Speed " }
                        <select data-testid="speed" onchange={on_speed}>
                            { for SPEEDS.iter().map(|s| html! {
                                <option value={s.to_string()} selected={*s == props.speed}>{ speed_label(*s) }</option>
                            }) }
                        </select>
                    </label>
                }
                if show("time") {
                    <span class="time" aria-live="off" title="Simulated time since the start">
                        { "t = " }<output data-testid="sim-time">{ sim_time(Time(props.time_ms)) }</output>
                    </span>
                    <span class={classes!("mode", props.lagging.then_some("lagging"))} data-testid="mode">{ status }</span>
                }
            </div>
            <div class="run" role="group" aria-label="Cluster">
                <span class="scenario" data-testid="scenario">{ format!("scenario {}", props.scenario) }</span>
                if show("seed") {
                    <label class="inline">
                        { "Seed " }
                        <input type="number" min="0" class="seed" data-testid="seed-input" value={props.seed.to_string()} onchange={on_seed} />
                    </label>
                }
                if show("reset") {
                    <button type="button" data-testid="reset" onclick={act(Action::Reset)} title="Restart the scenario with this seed">{ "Reset" }</button>
                }
                if show("add-node") {
                    <button type="button" data-testid="add-node" onclick={act(Action::AddNode)}>{ "Add node" }</button>
                }
                if props.params.controls.is_none() {
                    <button type="button" data-testid="story" aria-pressed={props.story.to_string()} onclick={act(Action::ToggleStory)}
                        title="Story mode: slow down around each meaningful message and say it in words">{ "Story" }</button>
                    <button type="button" data-testid="presentation" aria-pressed={props.presentation.to_string()} onclick={on_presentation}
                        title="Presentation mode: large labels for a projector">{ "Present" }</button>
                    <button type="button" data-testid="operator-open" aria-expanded={props.operator.to_string()} aria-controls="operator-panel" onclick={on_operator}
                        title="Write an operator of your own in Python and run it as a loop (loads Python, a few megabytes, the first time)">{ "Operator" }</button>
                }
                if let Some(lessons) = &props.lessons {
                    <label class="inline">
                        <span class="visually-hidden">{ "Lesson" }</span>
                        <select data-testid="lesson-picker" onchange={on_lesson} title="Start a guided lesson">
                            <option value="" selected={props.params.lesson.is_none()}>{ "Lessons…" }</option>
                            { for lessons.iter().map(|(name, title)| html! {
                                <option value={*name} selected={props.params.lesson.as_deref() == Some(*name)}>{ title.clone() }</option>
                            }) }
                        </select>
                    </label>
                }
                if show("share") {
                    <button type="button" data-testid="share" onclick={act(Action::Share)} title="Permalink, copy as kubectl, export or import a trace">{ "Share" }</button>
                }
            </div>
            if !props.note.is_empty() {
                <p class="note" role="status">{ props.note.clone() }</p>
            }
        </section>
    }
}
