//! The page: a thin Yew shell over the simulation library.
//!
//! This binary exists so that the browser build has one entry point that Trunk compiles
//! (`index.html`: `data-bin="kubeloop-web"`, `data-cargo-features="web"`). It installs the panic
//! overlay first, so that even a failure during the first render shows a message and a way out
//! instead of a blank page, then mounts [`app::App`] into `#app`. It may use only the public API
//! of the `kubeloop` library; everything browser-specific stays under `src/web/`.

mod app;
mod cluster_view;
mod controls;
mod engine;
mod events_view;
mod header;
mod hints_view;
mod loops_view;
mod panic_overlay;
mod side;

fn main() {
    // Through Yew, not `std::panic::set_hook`: the Renderer replaces any hook not set this way.
    // The release profile aborts on panic; the hook still runs first, so the overlay appears.
    yew::set_custom_panic_hook(Box::new(|info| panic_overlay::show(&info.to_string())));

    let root = web_sys::window().and_then(|window| window.document()).and_then(|document| document.get_element_by_id("app"));
    match root {
        Some(root) => yew::Renderer::<app::App>::with_root(root).render(),
        None => yew::Renderer::<app::App>::new().render(),
    };
}
