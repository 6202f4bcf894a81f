//! The error banner and the share panel.
//!
//! The banner is where every refused parameter, message, scenario file or trace file says what
//! was wrong, in kubectl's words, while the page goes on running with the defaults. The share
//! panel offers what a learner hands on: the permalink, the kubectl lines they ran (with a
//! copy button), the trace file to download, and a box to import one.

use std::rc::Rc;

use yew::prelude::*;

use crate::host;
use kubeloop::play::{Action, ShareView};
use kubeloop::view::page::percent_encode;

#[derive(Properties, PartialEq)]
pub struct ErrorBannerProps {
    pub errors: Rc<Vec<String>>,
    pub on_action: Callback<Action>,
}

/// The errors, newest last, with a way to dismiss them.
#[component]
pub fn ErrorBanner(props: &ErrorBannerProps) -> Html {
    if props.errors.is_empty() {
        return html! {};
    }
    let dismiss = {
        let cb = props.on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(Action::DismissErrors))
    };
    html! {
        <div class="error-banner" role="alert" data-testid="page-error">
            { for props.errors.iter().map(|e| html! { <p class="error-line">{ e.clone() }</p> }) }
            <button type="button" class="dismiss" onclick={dismiss} aria-label="Dismiss the errors">{ "×" }</button>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct SharePanelProps {
    pub share: Rc<ShareView>,
    pub on_action: Callback<Action>,
}

/// Permalink, copy as kubectl, export and import of a trace.
#[component]
pub fn SharePanel(props: &SharePanelProps) -> Html {
    let import = use_node_ref();
    let copy = {
        let text = props.share.kubectl.clone();
        Callback::from(move |_: MouseEvent| host::copy_to_clipboard(&text))
    };
    let on_import = {
        let cb = props.on_action.clone();
        let import = import.clone();
        Callback::from(move |_: MouseEvent| {
            // Through Reflect: the textarea's `value` without another web-sys feature.
            let text = import.get().and_then(|area| js_sys::Reflect::get(&area, &"value".into()).ok()).and_then(|v| v.as_string());
            if let Some(text) = text {
                cb.emit(Action::ImportTrace(text));
            }
        })
    };
    let on_file = {
        let cb = props.on_action.clone();
        Callback::from(move |e: Event| {
            // The chosen file, through Reflect (no web-sys File features needed).
            let file = e
                .target()
                .and_then(|input| js_sys::Reflect::get(&input, &"files".into()).ok())
                .and_then(|files| js_sys::Reflect::get(&files, &0.into()).ok());
            if let Some(file) = file.filter(|f| f.is_object()) {
                let cb = cb.clone();
                host::read_file(&file, move |text| cb.emit(Action::ImportTrace(text)));
            }
        })
    };
    let close = {
        let cb = props.on_action.clone();
        Callback::from(move |_: MouseEvent| cb.emit(Action::Share))
    };
    let download = format!("data:application/json;charset=utf-8,{}", percent_encode(&props.share.trace));
    html! {
        <section class="panel share-panel" aria-labelledby="share-title" data-testid="share-panel">
            <h2 id="share-title" class="panel-title">{ "Share" }</h2>
            if !props.share.omits.is_empty() {
                <p class="share-omits" data-testid="share-omits">{ props.share.omits.clone() }</p>
            }
            <label class="share-row">{ "Permalink (scenario, seed, and every command at its simulated time)" }
                <input type="text" readonly=true data-testid="permalink" value={props.share.permalink.clone()} />
            </label>
            <label class="share-row">{ "Copy as kubectl" }
                <textarea readonly=true rows="4" data-testid="share-kubectl" value={props.share.kubectl.clone()} />
            </label>
            <div class="share-actions">
                <button type="button" data-testid="copy-kubectl" onclick={copy}>{ "Copy kubectl" }</button>
                <a class="button" data-testid="export-trace" href={download} download="kubeloop-trace.json">{ "Export trace (JSON)" }</a>
                <button type="button" onclick={close}>{ "Close" }</button>
            </div>
            <label class="share-row">{ "Import a trace file" }
                <input type="file" accept=".json,application/json" data-testid="import-trace-file" onchange={on_file} />
            </label>
            <label class="share-row">{ "…or paste its JSON" }
                <textarea ref={import} rows="3" data-testid="import-trace" />
            </label>
            <button type="button" data-testid="import-trace-button" onclick={on_import}>{ "Import and replay" }</button>
        </section>
    }
}
