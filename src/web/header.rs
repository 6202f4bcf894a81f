//! The page header: product name and version.
//!
//! A separate file so the name the tests look for and the version shown to people live in one
//! small place, apart from the cluster view that will grow large. A plain function, not a
//! component: a Yew component costs the page about 1 KB of wasm, and this one has no state.

use yew::prelude::*;

/// The banner at the top of the page, showing `version` (normally `kubeloop::VERSION`).
pub fn header(version: &str) -> Html {
    html! {
        <header class="header">
            <h1 class="title">{ "kubeloop" }</h1>
            <span class="version" title="kubeloop version">{ format!("v{version}") }</span>
            <p class="tagline">
                { "The Kubernetes control plane as a deterministic simulation." }
            </p>
        </header>
    }
}
