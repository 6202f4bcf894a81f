//! The page: a thin Yew shell over the simulation library.
//!
//! This binary exists so that the browser build has one entry point that Trunk compiles
//! (`index.html`: `data-bin="kubeloop-web"`, `data-cargo-features="web"`). It installs the panic
//! overlay first, so that even a failure during the first render shows a message and a way out
//! instead of a blank page. On the page itself (`index.html`, which has `#app`) it mounts
//! [`app::App`] configured by the address's query; on a host page the `<kubeloop-sim>` element
//! (`www/kubeloop-sim.js`) loads the same module and calls [`mount`] for each widget instead.
//! It may use only the public API of the `kubeloop` library; everything browser-specific stays
//! under `src/web/`.
//!
//! `index.html` arrives with the page's first picture already in `#app` (rendered at build time
//! by this same binary, built natively with the `ssr` feature: [`prerender`]) and marked
//! `aria-busy`. Mounting replaces that picture with the live app in one go, before the browser
//! paints again, so there is never an empty frame between the two. At the bare address both
//! start from the same [`play_opening`], so the live page goes on from the very picture shown.

// Natively the binary is the build's pre-renderer; what only the browser calls is unused there.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code, unused_imports))]

mod app;
mod attach;
mod attach_view;
mod cluster_view;
mod console;
mod controls;
mod editor;
mod events_view;
mod flight;
mod header;
mod hints_view;
mod host;
mod lesson_view;
mod loops_view;
mod operator_view;
mod panic_overlay;
#[cfg(not(target_arch = "wasm32"))]
mod prerender;
mod services_view;
mod share_view;
mod side;

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use host::{Host, Incoming, Shared};
use kubeloop::view::page;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    prerender::main()
}

#[cfg(target_arch = "wasm32")]
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
    if query.trim_start_matches('?').is_empty() {
        // Whole milliseconds, so the frames' intervals are exact and equal to the build's.
        let now = window.performance().map(|p| p.now().floor()).unwrap_or(0.0);
        play_opening(&mut engine, now);
    }
    let location = window.location();
    engine.set_page_base(format!("{}{}", location.origin().unwrap_or_default(), location.pathname().unwrap_or_default()));
    let framed = window.parent().ok().flatten().is_some_and(|parent| !JsValue::from(&parent).loose_eq(&JsValue::from(&window)));
    let shared = Shared::new(engine, Host::Page);
    // The pre-rendered picture goes and the app's first render takes its place before the
    // browser can paint (Yew renders in a microtask of this same task), so no empty frame shows.
    root.set_inner_html("");
    let _ = root.remove_attribute("aria-busy");
    yew::Renderer::<app::App>::with_root_and_props(root, app::AppProps { shared, embedded: framed }).render();
}

/// The interval of the opening's frames, in whole milliseconds (about 60 Hz).
const OPENING_FRAME_MS: f64 = 16.0;
/// At most this many opening frames (a second of simulated time at 1×), for a scenario that
/// never draws a node.
const OPENING_FRAMES_MAX: u32 = 60;

/// Plays the page's first frames, [`OPENING_FRAME_MS`] apart from `start_ms`, until the cluster
/// draws a node: at time 0 no kubelet has registered its Node yet, so the first frame is an
/// empty cluster, and that is not worth pre-rendering. The build pre-renders the state this
/// leaves (`prerender.rs`, `start_ms` 0) and the page at the bare address mounts from it, so
/// both show the same picture; the learner still sees every pod created, scheduled and started.
/// The clock the frames' work budget reads is held still, so the same frames do the same work
/// on any machine, natively or in a browser.
pub(crate) fn play_opening(engine: &mut kubeloop::play::Engine, start_ms: f64) {
    let still = || start_ms;
    // Unpaced: story mode would hold at the first Node's registration with one node drawn. It
    // is switched on again after, and tells the run from there.
    let story = engine.snapshot().story;
    if story {
        engine.act(kubeloop::play::Action::ToggleStory);
    }
    play_frames(engine, start_ms, &still);
    if story {
        engine.act(kubeloop::play::Action::ToggleStory);
    }
}

fn play_frames(engine: &mut kubeloop::play::Engine, start_ms: f64, still: &dyn Fn() -> f64) {
    for n in 0..OPENING_FRAMES_MAX {
        if !engine.snapshot().cluster.nodes.is_empty() {
            return;
        }
        engine.frame(start_ms + f64::from(n) * OPENING_FRAME_MS, still);
    }
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
