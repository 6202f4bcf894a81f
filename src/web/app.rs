//! The root component: owns the [`Engine`], drives it from animation frames, lays out the page
//! and announces when it is ready.
//!
//! It exists to own the page-wide concerns that no single panel should: the animation-frame loop
//! (started when the page mounts, cancelled when it unmounts), the one callback every control
//! sends its [`Action`] through, the `data-sim-time` of the app root and the
//! `data-ready="true"` marker on `<body>` that tests and course scripts wait for.
//!
//! The snapshot lives in a reducer that keeps the same `Rc` when the engine reports no change, so
//! a quiet frame renders nothing.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::cluster_view::ClusterPanel;
use crate::controls::Toolbar;
use crate::engine::{Action, Engine, Snapshot};
use crate::events_view::{CommandLog, EventsPanel};
use crate::header::Header;
use crate::hints_view::HintsPanel;
use crate::loops_view::{FlowPanel, LoopsPanel};
use crate::side::{GapPanel, PodPanel};

/// The rendered snapshot; the reducer keeps the old one when handed the same `Rc`.
#[derive(PartialEq)]
struct Shown(Rc<Snapshot>);

impl Reducible for Shown {
    type Action = Rc<Snapshot>;
    fn reduce(self: Rc<Self>, next: Rc<Snapshot>) -> Rc<Self> {
        if Rc::ptr_eq(&self.0, &next) {
            self
        } else {
            Rc::new(Shown(next))
        }
    }
}

/// The wall clock, for the frame budget only (the simulation never reads it).
fn wall_clock() -> impl Fn() -> f64 {
    let performance = web_sys::window().and_then(|w| w.performance());
    move || performance.as_ref().map(|p| p.now()).unwrap_or(0.0)
}

fn query() -> String {
    web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default()
}

/// The whole page.
#[component]
pub fn App() -> Html {
    let engine = use_mut_ref(|| Engine::new(&query()));
    let shown = use_reducer(|| Shown(engine.borrow().snapshot()));

    // The one way in for every control: run the action, show what changed.
    let on_action = {
        let engine = engine.clone();
        let dispatcher = shown.dispatcher();
        use_callback((), move |action: Action, _| {
            let next = engine.borrow_mut().act(action);
            if let Some(next) = next {
                dispatcher.dispatch(next);
            }
        })
    };

    {
        let engine = engine.clone();
        let dispatcher = shown.dispatcher();
        use_effect_with((), move |_| {
            mark_ready();
            let frames = start_frames(engine, move |next| dispatcher.dispatch(next));
            move || frames.stop()
        });
    }

    let s = &shown.0;
    html! {
        <div class="app" data-sim-time={s.time_ms.to_string()} data-mode={mode_name(s)}>
            <Header version={kubeloop::VERSION} />
            <Toolbar
                time_ms={s.time_ms}
                mode={s.mode}
                speed={s.speed}
                seed={s.seed}
                lagging={s.lagging}
                note={AttrValue::from(s.note.clone())}
                scenario={AttrValue::from(s.scenario.clone())}
                on_action={on_action.clone()}
            />
            if let Some(error) = &s.error {
                <p class="error-banner" role="alert" data-testid="page-error">{ error.clone() }</p>
            }
            <main class="content">
                <ClusterPanel
                    cluster={s.cluster.clone()}
                    selected={s.selection.as_ref().map(|sel| AttrValue::from(format!("{}/{}", sel.namespace, sel.name)))}
                    on_action={on_action.clone()}
                />
                <aside class="side">
                    <GapPanel gap={s.gap.clone()} chart={s.chart.clone()} on_action={on_action.clone()} />
                    <PodPanel selection={s.selection.clone()} on_action={on_action.clone()} />
                    if let Some(h) = &s.hints {
                        <HintsPanel open={h.open} hints={h.hints.clone()} on_action={on_action.clone()} />
                    }
                </aside>
                <LoopsPanel components={s.components.clone()} on_action={on_action.clone()} />
                <FlowPanel layout={s.layout.clone()} hops={s.hops.clone()} selected={s.selection.as_ref().map(|sel| AttrValue::from(format!("pod/{}/{}", sel.namespace, sel.name)))} />
                <EventsPanel events={s.events.clone()} filter={s.filter.clone()} on_action={on_action.clone()} />
                <CommandLog commands={s.commands.clone()} />
            </main>
        </div>
    }
}

fn mode_name(s: &Snapshot) -> &'static str {
    match s.mode {
        crate::engine::Mode::Paused => "paused",
        crate::engine::Mode::Playing => "playing",
        crate::engine::Mode::FastForward => "fast-forward",
    }
}

/// The frame callback, shared with itself so it can ask for the next frame.
type FrameCallback = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

/// The running animation-frame loop; [`Frames::stop`] cancels it.
struct Frames {
    id: Rc<RefCell<Option<i32>>>,
    callback: FrameCallback,
}

impl Frames {
    fn stop(self) {
        if let (Some(window), Some(id)) = (web_sys::window(), self.id.borrow_mut().take()) {
            let _ = window.cancel_animation_frame(id);
        }
        // Dropping the closure breaks its reference to itself.
        self.callback.borrow_mut().take();
    }
}

/// Calls the engine on every animation frame and hands changed snapshots to `show`.
fn start_frames(engine: Rc<RefCell<Engine>>, show: impl Fn(Rc<Snapshot>) + 'static) -> Frames {
    let id = Rc::new(RefCell::new(None));
    let callback: FrameCallback = Rc::new(RefCell::new(None));
    let clock = wall_clock();
    let (id_in, callback_in) = (id.clone(), callback.clone());
    *callback.borrow_mut() = Some(Closure::new(move |ts: f64| {
        let next = engine.borrow_mut().frame(ts, &clock);
        if let Some(next) = next {
            show(next);
        }
        request(&id_in, &callback_in);
    }));
    request(&id, &callback);
    Frames { id, callback }
}

fn request(id: &Rc<RefCell<Option<i32>>>, callback: &FrameCallback) {
    let (Some(window), Some(cb)) =
        (web_sys::window(), callback.borrow().as_ref().map(|c| c.as_ref().unchecked_ref::<js_sys::Function>().clone()))
    else {
        return;
    };
    *id.borrow_mut() = window.request_animation_frame(&cb).ok();
}

/// Sets `data-ready="true"` on `<body>`: the first render has been committed to the DOM.
fn mark_ready() {
    let body = web_sys::window().and_then(|window| window.document()).and_then(|document| document.body());
    if let Some(body) = body {
        // Setting an attribute on <body> fails only for an invalid name, and this one is valid.
        let _ = body.set_attribute("data-ready", "true");
    }
}
