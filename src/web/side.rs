//! The side panels: the gap of the followed Deployment (with the replicas control), and the
//! selected pod (with Kill and the scheduler's reasons for its node).
//!
//! Both only render what the view module decided; the controls emit actions that the engine
//! turns into `kubectl scale` and `kubectl delete pod` lines.

use std::rc::Rc;

use yew::prelude::*;

use kubeloop::model::Time;
use kubeloop::play::{sim_time, Action, CommandEntry, Selection};
use kubeloop::view::gap::{GapChart, GapView};
use kubeloop::view::stage::typed_scale_command;

/// The most replicas the input accepts (a page, not a load test).
const MAX_REPLICAS: i64 = 5000;

#[derive(Properties, PartialEq)]
pub struct GapPanelProps {
    pub gap: Rc<GapView>,
    pub chart: Rc<GapChart>,
    /// The commands run lately, to show the replicas box's own error next to it.
    pub commands: Rc<Vec<CommandEntry>>,
    pub on_action: Callback<Action>,
}

/// Desired, current and ready, a chart of them, and the replicas control.
///
/// The box keeps what the learner types (its own state, so the frames that redraw the panel
/// do not put the old claim back) until Enter or leaving the box, then runs `kubectl scale`
/// with that text; a failure shows kubectl's error beside the box and changes nothing.
#[component]
pub fn GapPanel(props: &GapPanelProps) -> Html {
    let g = &props.gap;
    let c = &props.chart;
    // What is typed and not yet sent; and the line last sent from the box, with its text.
    let typed = use_state(|| None::<String>);
    let sent = use_state(|| None::<(String, String)>);
    let scale = |n: i64| {
        let (cb, typed, sent) = (props.on_action.clone(), typed.clone(), sent.clone());
        Callback::from(move |_: MouseEvent| {
            typed.set(None);
            sent.set(None);
            cb.emit(Action::Scale(n.clamp(0, MAX_REPLICAS)))
        })
    };
    let on_input = {
        let typed = typed.clone();
        Callback::from(move |e: InputEvent| typed.set(Some(e.target_unchecked_into::<web_sys::HtmlInputElement>().value())))
    };
    let on_change = {
        let (cb, typed, sent, deployment) = (props.on_action.clone(), typed.clone(), sent.clone(), g.deployment.clone());
        Callback::from(move |e: Event| {
            let text = e.target_unchecked_into::<web_sys::HtmlInputElement>().value();
            let line = typed_scale_command(&deployment, &text);
            typed.set(None);
            sent.set(Some((line.clone(), text)));
            cb.emit(Action::Command(line));
        })
    };
    // The box's own command's error, while it is the latest the box sent; the box keeps the
    // bad text beside it.
    let failed = sent.as_ref().and_then(|(line, text)| {
        let entry = props.commands.iter().find(|c| &c.line == line)?;
        (!entry.ok).then(|| (text.clone(), entry.output.trim().to_string()))
    });
    let value = match (&*typed, &failed) {
        (Some(t), _) => t.clone(),
        (None, Some((text, _))) => text.clone(),
        (None, None) => g.desired.to_string(),
    };
    let error = failed.map(|(_, e)| e);
    let desired = i64::from(g.desired);
    html! {
        <section class="panel gap" aria-labelledby="gap-title" data-testid="gap">
            <h2 id="gap-title" class="panel-title">
                { "The gap" }
                if !g.deployment.is_empty() {
                    <span class="muted">{ format!(" · deployment {}", g.deployment.split('/').nth(1).unwrap_or_default()) }</span>
                }
            </h2>
            if g.deployment.is_empty() {
                <p class="muted">{ "No Deployment to follow." }</p>
            } else {
                <dl class={classes!("gap-numbers", g.converged.then_some("converged"))}>
                    <div class="desired"><dt>{ "desired" }</dt><dd data-testid="desired">{ g.desired }</dd></div>
                    <div class="current"><dt>{ "current" }</dt><dd data-testid="current">{ g.current }</dd></div>
                    <div class="ready"><dt>{ "ready" }</dt><dd data-testid="ready">{ g.ready }</dd></div>
                </dl>
                if !g.stale.is_empty() {
                    <p class="gap-stale" data-testid="gap-stale">{ g.stale.clone() }</p>
                } else if !g.lag.is_empty() {
                    <p class="gap-lag" data-testid="gap-lag">{ g.lag.clone() }</p>
                }
                <svg class="gap-chart" viewBox={format!("0 0 {} {}", c.width, c.height)} role="img" preserveAspectRatio="none"
                    aria-label={format!("Desired, current and ready over the last {}; now {} desired, {} current, {} ready", sim_time(Time(c.span)), g.desired, g.current, g.ready)}>
                    <path class="line desired" d={c.desired.clone()} />
                    <path class="line current" d={c.current.clone()} />
                    <path class="line ready" d={c.ready.clone()} />
                </svg>
                <div class="chart-axis muted" aria-hidden="true"><span>{ format!("−{}", sim_time(Time(c.span))) }</span><span>{ format!("max {}", c.max) }</span><span>{ "now" }</span></div>
                <div class="replicas" role="group" aria-label="Desired replicas">
                    <button type="button" data-testid="replicas-minus" aria-label="One replica fewer" onclick={scale(desired - 1)} disabled={desired <= 0}>{ "−" }</button>
                    <label class="inline">
                        <span class="visually-hidden">{ "Desired replicas" }</span>
                        <input type="text" inputmode="numeric" size="5" data-testid="replicas-input"
                            aria-invalid={error.is_some().to_string()} aria-describedby={error.is_some().then_some("replicas-error")}
                            value={value} oninput={on_input} onchange={on_change} />
                    </label>
                    <button type="button" data-testid="replicas-plus" aria-label="One replica more" onclick={scale(desired + 1)}>{ "+" }</button>
                </div>
                if let Some(error) = error {
                    <p id="replicas-error" class="replicas-error" role="alert" data-testid="replicas-error">{ error }</p>
                }
            }
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct PodPanelProps {
    pub selection: Option<Rc<Selection>>,
    pub on_action: Callback<Action>,
}

/// The selected pod, Kill, and why the scheduler put it where it is.
#[component]
pub fn PodPanel(props: &PodPanelProps) -> Html {
    let kill = {
        let cb = props.on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(Action::Kill))
    };
    let body = match &props.selection {
        None => {
            html! { <p class="muted">{ "Select a pod in the cluster to see it here, kill it, and read why the scheduler chose its node." }</p> }
        }
        Some(sel) => html! {
            <>
                <p class="pod-title">
                    <strong>{ sel.name.clone() }</strong>
                    { match &sel.pod {
                        Some(p) => html! { <span class="muted">{ format!(" · {} · {} ready · {} restarts · node {} · {}", p.status, p.ready, p.restarts,
                            if p.node.is_empty() { "none yet" } else { p.node.as_str() }, if p.owner.is_empty() { "no owner" } else { p.owner.as_str() }) }</span> },
                        None => html! { <span class="muted">{ " · gone" }</span> },
                    } }
                </p>
                { explanation(sel) }
            </>
        },
    };
    let can_kill = props.selection.as_ref().is_some_and(|s| s.pod.is_some());
    html! {
        <section class="panel pod-panel" aria-labelledby="pod-title">
            <h2 id="pod-title" class="panel-title">{ "Selected pod" }</h2>
            { body }
            <button type="button" class="danger" data-testid="kill-pod" onclick={kill} disabled={!can_kill}
                title="kubectl delete pod: the same DELETE the API server gets from kubectl">{ "Kill pod" }</button>
        </section>
    }
}

fn explanation(sel: &Selection) -> Html {
    let Some(e) = &sel.explanation else {
        return html! { <p class="muted">{ "kube-scheduler has no decision for this pod (not scheduled yet, or bound by name)." }</p> };
    };
    let summary = match &e.chosen {
        Some(node) => format!(
            "Attempt {} at {}: {} of {} nodes examined, {} feasible; chose {node}.",
            e.attempt,
            sim_time(Time(e.at)),
            e.examined,
            e.nodes_in_cluster,
            e.feasible
        ),
        None => format!("Attempt {} at {}: {}", e.attempt, sim_time(Time(e.at)), e.message),
    };
    html! {
        <div class="explain" data-testid="explanation">
            <p>{ summary }</p>
            if !e.note.is_empty() { <p class="muted">{ e.note.clone() }</p> }
            <table class="explain-table">
                <caption class="visually-hidden">{ "The scheduler's verdict on each node" }</caption>
                <thead><tr><th scope="col">{ "node" }</th><th scope="col">{ "verdict" }</th><th scope="col">{ "why" }</th></tr></thead>
                <tbody>
                    { for e.rows.iter().map(|r| html! {
                        <tr class={r.outcome.clone()}>
                            <th scope="row">{ r.node.clone() }</th>
                            <td>{ r.outcome.clone() }</td>
                            <td>{
                                if r.outcome == "rejected" {
                                    format!("{}: {}", r.filter, r.reason)
                                } else if let Some(total) = r.total {
                                    let parts: Vec<String> = r.scores.iter().map(|(p, s, w)| match s {
                                        Some(s) => format!("{p} {s}×{w}"),
                                        None => format!("{p} skipped"),
                                    }).collect();
                                    format!("score {total} = {}", parts.join(" + "))
                                } else {
                                    "passed every filter".to_string()
                                }
                            }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
            if e.hidden > 0 { <p class="muted">{ format!("…and {} more nodes examined.", e.hidden) }</p> }
        </div>
    }
}
