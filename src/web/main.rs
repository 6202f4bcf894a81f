//! The page: a thin Yew shell over the simulation library.
//!
//! This binary exists so that the browser build has one entry point that Trunk compiles
//! (`index.html`: `data-bin="kubeloop-web"`, `data-cargo-features="web"`). It installs the panic
//! overlay first, so that even a failure during the first render shows a message and a way out
//! instead of a blank page. On the page itself (`index.html`, which has `#app`) it mounts
//! [`app::App`] configured by the address's query; on a host page the `<kubeloop-sim>` element
//! (`www/kubeloop-sim.js`) loads the same module and calls [`mount`] for each widget instead.
//! It may use only the public API of the `kubeloop` library, whose `play::Engine` decides
//! everything the page does; everything browser-specific stays under `src/web/`.

mod app;
mod cluster_view;
mod console;
mod controls;
mod editor;
mod events_view;
mod header;
mod hints_view;
mod host;
mod lesson_view;
mod loops_view;
mod panic_overlay;
mod share_view;
mod side;

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use host::{Host, Incoming, Shared};
use kubeloop::view::page;

fn main() {
    // Through Yew, not `std::panic::set_hook`: the Renderer replaces any hook not set this way.
    // The release profile aborts on panic; the hook still runs first, so the overlay appears.
    yew::set_custom_panic_hook(Box::new(|info| panic_overlay::show(&info.to_string())));

    let Some(window) = web_sys::window() else { return };
    // No `#app`: a host page loaded this module for its `<kubeloop-sim>` elements, which mount.
    let Some(root) = window.document().and_then(|document| document.get_element_by_id("app")) else { return };
    let query = window.location().search().unwrap_or_default();
    let (params, errors) = page::parse_query(&query);
    let mut engine = kubeloop::play::Engine::new(params, errors);
    let location = window.location();
    engine.set_page_base(format!("{}{}", location.origin().unwrap_or_default(), location.pathname().unwrap_or_default()));
    let framed = window.parent().ok().flatten().is_some_and(|parent| !JsValue::from(&parent).loose_eq(&JsValue::from(&window)));
    let shared = Shared::new(engine, Host::Page);
    yew::Renderer::<app::App>::with_root_and_props(root, app::AppProps { shared, embedded: framed }).render();
}

/// A mounted widget, returned to JavaScript by [`mount`].
#[wasm_bindgen]
pub struct Handle {
    shared: Rc<Shared>,
    app: Option<yew::AppHandle<app::App>>,
}

#[wasm_bindgen]
impl Handle {
    /// Delivers a host message (an object, or its JSON text), handled at the next frame.
    pub fn send(&self, message: JsValue) {
        self.shared.inbox.borrow_mut().push(Incoming::Message(host::json_text(&message)));
    }

    /// Unmounts the widget: its frame loop stops and its simulation is dropped.
    pub fn destroy(&mut self) {
        if let Some(app) = self.app.take() {
            app.destroy();
        }
    }
}

/// Mounts a widget into `root` (an element in the custom element's shadow root).
///
/// `options` is an object of the page parameters (`scenario`, `seed`, `speed`, `autoplay`,
/// `panels`, `controls`, `theme`, `lesson`, with the same values as in the address), plus
/// `base` (the widget page's URL, for permalinks) and `onmessage` (a function called with each
/// message for the host). Malformed options are shown in the widget's banner.
#[wasm_bindgen]
pub fn mount(root: web_sys::Element, options: JsValue) -> Handle {
    let mut pairs = Vec::new();
    let mut callback = None;
    let mut base = String::new();
    if options.is_object() {
        for entry in js_sys::Object::entries(&js_sys::Object::from(options)).iter() {
            let entry = js_sys::Array::from(&entry);
            let (Some(key), value) = (entry.get(0).as_string(), entry.get(1)) else { continue };
            match key.as_str() {
                "onmessage" => callback = value.dyn_into::<js_sys::Function>().ok(),
                "base" => base = value.as_string().unwrap_or_default(),
                _ => pairs.push((key, option_text(&value))),
            }
        }
    }
    let (params, errors) = page::parse_pairs(pairs);
    let mut engine = kubeloop::play::Engine::new(params, errors);
    engine.set_page_base(base);
    let host = callback.map(Host::Element).unwrap_or_else(|| Host::Element(js_sys::Function::new_no_args("")));
    let shared = Shared::new(engine, host);
    let app = yew::Renderer::<app::App>::with_root_and_props(root, app::AppProps { shared: shared.clone(), embedded: true }).render();
    Handle { shared, app: Some(app) }
}

/// An option's value as the text an attribute would have.
fn option_text(value: &JsValue) -> String {
    value
        .as_string()
        .or_else(|| value.as_f64().map(|n| n.to_string()))
        .or_else(|| value.as_bool().map(|b| b.to_string()))
        .unwrap_or_default()
}
