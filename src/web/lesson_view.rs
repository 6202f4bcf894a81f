//! The lesson panel: the step's text, the prediction with its choices, the graded feedback, the
//! check's progress (with the simulated time waited, as a bar) and Next.
//!
//! It renders a [`LessonView`] (plain data from the library's [`kubeloop::lesson::LessonRun`],
//! which the engine owns) and sends the learner's answer and Next as [`Action`]s. While a
//! prediction is open the engine holds the clock, so the learner commits before seeing.

use std::rc::Rc;

use web_sys::HtmlInputElement;
use yew::prelude::*;

use kubeloop::lesson::run::{Phase, Waited};
use kubeloop::lesson::LessonView;
use kubeloop::play::lesson::{feedback, phase_name, status, waited_words};
use kubeloop::play::Action;

#[derive(Properties, PartialEq)]
pub struct LessonPanelProps {
    pub view: Rc<LessonView>,
    pub problem: Option<AttrValue>,
    pub on_action: Callback<Action>,
}

#[component]
pub fn LessonPanel(props: &LessonPanelProps) -> Html {
    let v = &props.view;
    let number = use_state(String::new);
    let answer = |choice: String| {
        let cb = props.on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(Action::LessonAnswer(choice.clone())))
    };
    let on_number = {
        let number = number.clone();
        Callback::from(move |e: InputEvent| number.set(e.target_unchecked_into::<HtmlInputElement>().value()))
    };
    let on_submit = {
        let (number, cb) = (number.clone(), props.on_action.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            cb.emit(Action::LessonAnswer((*number).clone()));
            number.set(String::new());
        })
    };
    let on_next = {
        let cb = props.on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(Action::LessonNext))
    };
    let finished = v.phase == Phase::Finished;
    let can_next = matches!(v.phase, Phase::Passed | Phase::TimedOut);
    html! {
        <section class="panel lesson" aria-labelledby="lesson-title" data-testid="lesson" data-phase={phase_name(v.phase)} data-step={v.index.to_string()}>
            <h2 id="lesson-title" class="panel-title">{ v.title.clone() }</h2>
            if !finished {
                <p class="muted step-count">{ format!("Step {} of {}", v.index + 1, v.steps) }
                    if !v.step_title.is_empty() { { format!(": {}", v.step_title) } }
                </p>
            }
            <div class="lesson-text" data-testid="lesson-text">
                { for v.text.split("\n\n").filter(|p| !p.trim().is_empty()).map(|p| html! { <p>{ p.trim().to_string() }</p> }) }
            </div>
            if !v.action.is_empty() && v.phase != Phase::Predict {
                <p class="lesson-action">{ "Ran for you: " }{ for v.action.iter().map(|a| html! { <code>{ a.clone() }</code> }) }</p>
            }
            if let Some(task) = &v.task {
                <p class="lesson-task" data-testid="lesson-task"><strong>{ "Your turn: " }</strong>{ task.clone() }</p>
            }
            if let Some(prompt) = &v.prompt {
                // A question asked after the check: its choices come when it opens, not while
                // the cluster is still being watched.
                if v.asking || v.graded.is_some() {
                    { question(v, prompt, &answer, &number, on_number, on_submit) }
                } else {
                    <p class="muted" data-testid="lesson-question-later">{ format!("Once the check is done: {prompt}") }</p>
                }
            }
            if !v.checks.is_empty() {
                <ul class="checks" aria-label="Check" data-testid="lesson-checks">
                    { for v.checks.iter().map(|c| html! {
                        <li class={classes!(c.met.then_some("met"))} data-met={c.met.to_string()}>
                            <span aria-hidden="true">{ if c.met { "✓ " } else { "… " } }</span>
                            { c.wants.clone() }<span class="muted">{ format!(" ({})", c.sees) }</span>
                        </li>
                    }) }
                </ul>
            }
            <p class="lesson-status" role="status" data-testid="lesson-status">{ status(v) }</p>
            if v.waited.is_some() {
                <p class="lesson-waited muted">
                    if let Some(Waited { so_far, limit: Some(limit), .. }) = v.waited {
                        <progress class="lesson-wait" data-testid="lesson-wait" max={limit.to_string()} value={so_far.min(limit).to_string()} aria-hidden="true" />
                    }
                    if let Some(words) = waited_words(v) {
                        <span data-testid="lesson-waited">{ words }</span>
                    }
                </p>
            }
            if let Some(problem) = &props.problem {
                <p class="error-banner" role="alert" data-testid="lesson-problem">{ problem.clone() }</p>
            }
            if !finished {
                <button type="button" class="primary" data-testid="lesson-next" disabled={!can_next} onclick={on_next}>
                    { if v.index + 1 == v.steps { "Finish" } else { "Next step" } }
                </button>
            }
        </section>
    }
}

fn question(
    v: &LessonView,
    prompt: &str,
    answer: &dyn Fn(String) -> Callback<MouseEvent>,
    number: &UseStateHandle<String>,
    on_number: Callback<InputEvent>,
    on_submit: Callback<SubmitEvent>,
) -> Html {
    let kind = if v.phase == Phase::Predict { "Predict" } else { "Question" };
    html! {
        <fieldset class="question" data-testid="lesson-question" disabled={!v.asking}>
            <legend>{ format!("{kind}: {prompt}") }</legend>
            if v.choices.is_empty() {
                <form onsubmit={on_submit}>
                    <label class="inline">{ "Your answer " }
                        <input type="number" step="any" data-testid="lesson-number" value={(**number).clone()} oninput={on_number} />
                    </label>
                    <button type="submit">{ "Answer" }</button>
                </form>
            } else {
                <div class="choices" role="group" aria-label="Choices">
                    { for v.choices.iter().map(|c| {
                        let chosen = v.graded.as_ref().is_some_and(|g| g.given == *c);
                        html! {
                            <button type="button" data-testid="lesson-choice" data-choice={c.clone()} aria-pressed={chosen.to_string()} onclick={answer(c.clone())}>{ c.clone() }</button>
                        }
                    }) }
                </div>
            }
            { feedback_view(v) }
        </fieldset>
    }
}

fn feedback_view(v: &LessonView) -> Html {
    let Some((class, text)) = feedback(v) else { return Html::default() };
    html! {
        <div class={classes!("feedback", class)} data-testid="lesson-feedback" data-graded={class} aria-live="polite">
            <p>{ text }</p>
            if !v.explain.is_empty() { <p class="explain">{ v.explain.clone() }</p> }
        </div>
    }
}
