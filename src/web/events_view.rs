//! The event log (`kubectl get events`, newest first, with filters and the selected pod's chain
//! marked) and the command log (every line the page's controls ran, with what it printed).

use std::rc::Rc;

use yew::prelude::*;

use kubeloop::play::{Action, CommandEntry};
use kubeloop::view::events::{EventFilter, EventTable};

#[derive(Properties, PartialEq)]
pub struct EventsPanelProps {
    pub events: Rc<EventTable>,
    pub filter: Rc<EventFilter>,
    pub on_action: Callback<Action>,
}

/// The events table with its two filters.
#[component]
pub fn EventsPanel(props: &EventsPanelProps) -> Html {
    let t = &props.events;
    let on_object = {
        let cb = props.on_action.clone();
        Callback::from(move |e: InputEvent| cb.emit(Action::FilterObject(e.target_unchecked_into::<web_sys::HtmlInputElement>().value())))
    };
    let on_component = {
        let cb = props.on_action.clone();
        Callback::from(move |e: Event| cb.emit(Action::FilterComponent(e.target_unchecked_into::<web_sys::HtmlSelectElement>().value())))
    };
    let shown = t.shown_words();
    html! {
        <section class="panel events-panel" aria-labelledby="events-title">
            <h2 id="events-title" class="panel-title">{ "Events" }<span class="muted">{ format!(" · {shown}") }</span></h2>
            <div class="filters">
                <label class="inline">{ "Object " }
                    <input type="search" placeholder="pod/web" data-testid="event-filter-object" value={props.filter.object.clone()} oninput={on_object} />
                </label>
                <label class="inline">{ "Component " }
                    <select data-testid="event-filter-component" onchange={on_component}>
                        <option value="" selected={props.filter.component.is_empty()}>{ "all" }</option>
                        { for t.components.iter().map(|c| html! {
                            <option value={c.clone()} selected={*c == props.filter.component}>{ c.clone() }</option>
                        }) }
                    </select>
                </label>
            </div>
            <div class="table-scroll" tabindex="0" role="region" aria-label="Event table">
                <table class="events">
                    <thead><tr>
                        <th scope="col">{ "LAST SEEN" }</th><th scope="col">{ "TYPE" }</th><th scope="col">{ "REASON" }</th>
                        <th scope="col">{ "OBJECT" }</th><th scope="col">{ "SOURCE" }</th><th scope="col">{ "MESSAGE" }</th>
                    </tr></thead>
                    <tbody>
                        { for t.rows.iter().map(|r| html! {
                            <tr key={r.key.clone()} class={classes!(r.type_.to_ascii_lowercase(), r.in_chain.then_some("chain"))}
                                data-testid="event-row" data-reason={r.reason.clone()} data-object={r.object.clone()} data-chain={r.in_chain.to_string()}>
                                <td>{ r.last_seen.clone() }</td>
                                <td>{ r.type_.clone() }</td>
                                <td>{ r.reason.clone() }</td>
                                <td>{ r.object.clone() }</td>
                                <td>{ r.source.clone() }</td>
                                <td>{ r.message_with_count() }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
                if t.rows.is_empty() {
                    <p class="muted">{ "No events." }</p>
                }
            </div>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct CommandLogProps {
    pub commands: Rc<Vec<CommandEntry>>,
}

/// The command lines the controls ran, newest first.
#[component]
pub fn CommandLog(props: &CommandLogProps) -> Html {
    html! {
        <section class="panel command-log" aria-labelledby="commands-title">
            <h2 id="commands-title" class="panel-title">{ "Commands" }</h2>
            <p class="muted">{ "Every control runs a command line, the same you could type." }</p>
            if props.commands.is_empty() {
                <p class="muted">{ "None yet." }</p>
            }
            <ol class="commands">
                { for props.commands.iter().map(|c| html! {
                    <li key={c.seq} class={classes!((!c.ok).then_some("failed"))} data-testid="command">
                        <code class="line">{ format!("$ {}", c.line) }</code>
                        if !c.output.is_empty() { <pre class="output">{ c.output.clone() }</pre> }
                    </li>
                }) }
            </ol>
        </section>
    }
}
