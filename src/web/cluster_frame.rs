//! The cluster frame: the labelled region where the simulated cluster's nodes will be drawn.
//!
//! It exists now, empty, so that the page's layout, its accessible name and the tests that find
//! it are settled before the simulation has anything to draw in it.

use yew::prelude::*;

/// The region of the page that shows the cluster. Empty at this stage.
#[component]
pub fn ClusterFrame() -> Html {
    html! {
        <section class="cluster-frame" aria-labelledby="cluster-title" data-testid="cluster-frame">
            <h2 id="cluster-title" class="cluster-title">{ "Cluster" }</h2>
            <div class="cluster-nodes" role="list" aria-label="Nodes"></div>
            <p class="cluster-empty">{ "No nodes yet." }</p>
        </section>
    }
}
