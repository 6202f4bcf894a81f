//! The root component: lays out the page and announces when it is ready.
//!
//! It exists to own the page-wide concerns that no single piece of the view should: the layout
//! of header and cluster frame, and the `data-ready="true"` marker on `<body>` that the
//! end-to-end tests (and anyone scripting the page) wait for before looking at anything.

use yew::prelude::*;

use crate::cluster_frame::ClusterFrame;
use crate::header::Header;

/// The whole page.
#[component]
pub fn App() -> Html {
    use_effect_with((), |_| {
        mark_ready();
    });

    html! {
        <div class="page">
            <Header version={kubeloop::VERSION} />
            <main class="content">
                <ClusterFrame />
            </main>
        </div>
    }
}

/// Sets `data-ready="true"` on `<body>`: the first render has been committed to the DOM.
fn mark_ready() {
    let body = web_sys::window().and_then(|window| window.document()).and_then(|document| document.body());
    if let Some(body) = body {
        // Setting an attribute on <body> fails only for an invalid name, and this one is valid.
        let _ = body.set_attribute("data-ready", "true");
    }
}
