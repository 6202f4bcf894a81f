//! The page header: product name and version.
//!
//! A separate component so the name the tests look for and the version shown to people live in
//! one small place, apart from the cluster view that will grow large.

use yew::prelude::*;

/// Properties of [`Header`].
#[derive(Properties, PartialEq)]
pub struct HeaderProps {
    /// The version to show, normally `kubeloop::VERSION`.
    pub version: AttrValue,
}

/// The banner at the top of the page.
#[component]
pub fn Header(props: &HeaderProps) -> Html {
    html! {
        <header class="header">
            <h1 class="title">{ "kubeloop" }</h1>
            <span class="version" title="kubeloop version">{ format!("v{}", props.version) }</span>
            <p class="tagline">
                { "The Kubernetes control plane as a deterministic simulation." }
            </p>
        </header>
    }
}
