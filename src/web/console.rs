//! The console: a terminal that speaks the command language, line by line, to the page's one
//! [`kubeloop::command::Session`].
//!
//! It keeps only what a terminal keeps (the line being typed, the history, the candidates of the
//! last Tab); the transcript (`kubeloop::play::console`) and every command's effect live in the
//! engine, which the console
//! reaches through an [`Action`] for each line and a synchronous callback for completion.
//! Keys: Enter runs, ↑/↓ walk the history, Tab completes (on a non-empty line; on an empty one it
//! moves focus as usual), Ctrl-C ends open watches (`kubectl get -w`), Escape clears the line.

use std::rc::Rc;

use web_sys::HtmlInputElement;
use yew::prelude::*;

use kubeloop::play::console::{walk_history, ConsoleLine};
use kubeloop::play::Action;

/// A line completed as far as is certain, and the candidates when there are several.
pub type Completion = (String, Vec<String>);

#[derive(Properties, PartialEq)]
pub struct ConsoleProps {
    pub lines: Rc<Vec<ConsoleLine>>,
    pub on_action: Callback<Action>,
    pub on_complete: Callback<String, Completion>,
}

#[component]
pub fn Console(props: &ConsoleProps) -> Html {
    let input = use_state(String::new);
    let history = use_mut_ref(Vec::<String>::new);
    let at = use_mut_ref(|| None::<usize>);
    let candidates = use_state(Vec::<String>::new);
    let transcript = use_node_ref();

    // Keep the newest line in view.
    {
        let transcript = transcript.clone();
        use_effect_with(props.lines.last().map(|l| l.seq), move |_| {
            if let Some(el) = transcript.cast::<web_sys::Element>() {
                el.set_scroll_top(el.scroll_height());
            }
        });
    }

    let on_input = {
        let input = input.clone();
        Callback::from(move |e: InputEvent| input.set(e.target_unchecked_into::<HtmlInputElement>().value()))
    };

    let on_keydown = {
        let (input, history, at, candidates) = (input.clone(), history.clone(), at.clone(), candidates.clone());
        let (on_action, on_complete) = (props.on_action.clone(), props.on_complete.clone());
        Callback::from(move |e: KeyboardEvent| {
            let line = (*input).clone();
            match e.key().as_str() {
                "Enter" => {
                    e.prevent_default();
                    if !line.trim().is_empty() {
                        let mut h = history.borrow_mut();
                        if h.last() != Some(&line) {
                            h.push(line.clone());
                        }
                    }
                    *at.borrow_mut() = None;
                    candidates.set(Vec::new());
                    input.set(String::new());
                    on_action.emit(Action::Console(line));
                }
                key @ ("ArrowUp" | "ArrowDown") => {
                    e.prevent_default();
                    let h = history.borrow();
                    let next = walk_history(h.len(), *at.borrow(), key == "ArrowUp");
                    *at.borrow_mut() = next;
                    input.set(next.and_then(|i| h.get(i).cloned()).unwrap_or_default());
                }
                "Tab" if !line.is_empty() && !e.shift_key() => {
                    e.prevent_default();
                    let (completed, all) = on_complete.emit(line);
                    candidates.set(if all.len() > 1 { all } else { Vec::new() });
                    input.set(completed);
                }
                "Escape" => {
                    candidates.set(Vec::new());
                    input.set(String::new());
                }
                "c" if e.ctrl_key() => {
                    e.prevent_default();
                    candidates.set(Vec::new());
                    input.set(String::new());
                    on_action.emit(Action::Interrupt);
                }
                _ => {}
            }
        })
    };

    html! {
        <section class="panel console" aria-labelledby="console-title" data-testid="console">
            <h2 id="console-title" class="panel-title">{ "Console" }</h2>
            <pre class="transcript" ref={transcript} role="log" aria-live="polite" aria-label="Console output" tabindex="0" data-testid="console-output">
                { for props.lines.iter().map(|l| html! {
                    <span key={l.seq} class={classes!("line", l.kind.class())}>{ format!("{}\n", l.text) }</span>
                }) }
            </pre>
            if !candidates.is_empty() {
                <p class="candidates" data-testid="console-candidates" role="status">{ candidates.join("  ") }</p>
            }
            <div class="prompt">
                <label for="console-input" class="prompt-sign">{ "$" }<span class="visually-hidden">{ " Command" }</span></label>
                <input
                    id="console-input"
                    type="text"
                    data-testid="console-input"
                    autocomplete="off"
                    autocapitalize="off"
                    spellcheck="false"
                    aria-describedby="console-keys"
                    value={(*input).clone()}
                    oninput={on_input}
                    onkeydown={on_keydown}
                />
            </div>
            <p id="console-keys" class="muted keys">{ "Enter runs · ↑/↓ history · Tab completes · Ctrl-C stops watches · try: kubectl get pods -w" }</p>
        </section>
    }
}
