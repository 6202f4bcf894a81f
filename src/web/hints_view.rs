//! The "what is wrong?" panel: lasting symptoms, each with the question that leads to the loop
//! that stopped turning. Closed until asked for, so an exercise is not given away; an exercise
//! can remove it altogether with `?hints=off`.

use std::rc::Rc;

use yew::prelude::*;

use kubeloop::model::Time;
use kubeloop::play::{sim_time, Action};
use kubeloop::view::hints::Hint;

#[derive(Properties, PartialEq)]
pub struct HintsPanelProps {
    pub open: bool,
    pub hints: Rc<Vec<Hint>>,
    pub on_action: Callback<Action>,
}

#[component]
pub fn HintsPanel(props: &HintsPanelProps) -> Html {
    let toggle = {
        let on_action = props.on_action.clone();
        Callback::from(move |_| on_action.emit(Action::ToggleHints))
    };
    html! {
        <section class="panel hints-panel" aria-labelledby="hints-title" data-testid="hints">
            <h2 id="hints-title" class="panel-title">
                <button type="button" class="disclosure" aria-expanded={props.open.to_string()} aria-controls="hints-body"
                    data-testid="hints-toggle" onclick={toggle}>
                    { "What is wrong?" }
                </button>
            </h2>
            if props.open {
                <div id="hints-body">
                    if props.hints.is_empty() {
                        <p class="muted">{ "No lasting symptom: every gap so far closed within seconds." }</p>
                    } else {
                        <ul class="hints">
                            { for props.hints.iter().map(|h| html! {
                                <li key={h.key.clone()} class="hint" data-testid="hint" data-suspect={h.suspect.clone()}>
                                    <p class="hint-symptom">{ h.symptom.clone() }<span class="muted">{ format!(" (for {})", sim_time(Time(h.since))) }</span></p>
                                    <p class="hint-question">{ h.question.clone() }</p>
                                </li>
                            }) }
                        </ul>
                    }
                </div>
            }
        </section>
    }
}
