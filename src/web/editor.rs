//! The manifest editor: a text area checked on every change by the API server's own dry run, a
//! library of the Kubernetes documentation's manifests to start from, and Apply.
//!
//! Validation is a synchronous call into the engine ([`Session::validate_manifest`]: decode,
//! default, validate, merge with the live object, store nothing), so the message under the text
//! is exactly what `kubectl apply --dry-run=server` would print. Apply sends the text as an
//! [`Action`], which runs `kubectl apply -f manifest.yaml` in the console.
//!
//! [`Session::validate_manifest`]: kubeloop::command::Session::validate_manifest

use web_sys::{HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

use kubeloop::command::kubectl::examples::EXAMPLES;
use kubeloop::play::Action;

#[derive(Properties, PartialEq)]
pub struct EditorProps {
    pub on_action: Callback<Action>,
    pub on_validate: Callback<String, Result<String, String>>,
}

/// The manifest the editor opens with: the Deployments page's nginx example.
fn first_example() -> String {
    EXAMPLES
        .iter()
        .find(|(p, _)| *p == "controllers/nginx-deployment.yaml")
        .or(EXAMPLES.first())
        .map(|(_, t)| t.to_string())
        .unwrap_or_default()
}

#[component]
pub fn Editor(props: &EditorProps) -> Html {
    let text = use_state(first_example);
    let verdict = use_state(|| None::<Result<String, String>>);

    {
        let (verdict, on_validate) = (verdict.clone(), props.on_validate.clone());
        use_effect_with((*text).clone(), move |text| {
            verdict.set(Some(on_validate.emit(text.clone())));
        });
    }

    let on_input = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| text.set(e.target_unchecked_into::<HtmlTextAreaElement>().value()))
    };
    let on_example = {
        let text = text.clone();
        Callback::from(move |e: Event| {
            let path = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some((_, t)) = EXAMPLES.iter().find(|(p, _)| *p == path) {
                text.set(t.to_string());
            }
        })
    };
    let on_apply = {
        let (text, cb) = (text.clone(), props.on_action.clone());
        Callback::from(move |_: MouseEvent| cb.emit(Action::ApplyManifest((*text).clone())))
    };

    let (class, message) = match &*verdict {
        None => ("pending", String::new()),
        Some(Ok(lines)) => ("valid", format!("Valid: {lines}")),
        Some(Err(e)) => ("invalid", e.clone()),
    };
    html! {
        <section class="panel editor" aria-labelledby="editor-title" data-testid="editor">
            <h2 id="editor-title" class="panel-title">{ "Manifest editor" }</h2>
            <label class="inline">
                { "Start from " }
                <select data-testid="editor-examples" onchange={on_example}>
                    { for EXAMPLES.iter().map(|(path, _)| html! {
                        <option value={*path} selected={*path == "controllers/nginx-deployment.yaml"}>{ format!("https://k8s.io/examples/{path}") }</option>
                    }) }
                </select>
            </label>
            <textarea
                class="manifest"
                data-testid="editor-text"
                aria-label="Manifest (YAML)"
                aria-describedby="editor-status"
                aria-invalid={(class == "invalid").to_string()}
                spellcheck="false"
                rows="16"
                value={(*text).clone()}
                oninput={on_input}
            />
            <p id="editor-status" class={classes!("editor-status", class)} role="status" data-testid="editor-status" data-state={class}>{ message }</p>
            <button type="button" class="primary" data-testid="editor-apply" onclick={on_apply}>{ "Apply" }</button>
        </section>
    }
}
