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
//!
//! The same component is the whole page and each `<kubeloop-sim>` widget: it is handed its
//! [`Shared`] state (engine, inbox, host) and each frame it handles what the host sent, moves
//! the engine, posts the engine's outbox and, when the content's height changed, a `resize`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::cluster_view::Stage;
use crate::console::{Completion, Console};
use crate::controls::Toolbar;
use crate::editor::Editor;
use crate::events_view::{CommandLog, EventsPanel};
use crate::header::header;
use crate::hints_view::HintsPanel;
use crate::host::{self, Incoming, Shared};
use crate::lesson_view::LessonPanel;
use crate::share_view::{ErrorBanner, SharePanel};
use crate::side::{GapPanel, PodPanel};
use kubeloop::play::{Action, Offscreen, Snapshot};
use kubeloop::view::embed::OutMessage;

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

/// Properties of [`App`]: the widget's shared state.
#[derive(Properties, PartialEq)]
pub struct AppProps {
    pub shared: Rc<Shared>,
    /// Whether this app is embedded (framed or an element): it sizes to its content.
    pub embedded: bool,
}

/// The whole page, or one widget.
#[component]
pub fn App(props: &AppProps) -> Html {
    let shared = props.shared.clone();
    let shown = use_reducer(|| Shown(shared.engine.borrow().snapshot()));
    let root = use_node_ref();
    let params = use_memo((), |_| shared.engine.borrow().params().clone());

    // The one way in for every control: run the action, show what changed.
    let on_action = {
        let shared = shared.clone();
        let dispatcher = shown.dispatcher();
        use_callback((), move |action: Action, _| {
            let next = shared.engine.borrow_mut().act(action);
            if let Some(next) = next {
                dispatcher.dispatch(next);
            }
            flush_outbox(&shared);
        })
    };

    // Tab completion and the editor's dry run answer at once, so they call the engine directly.
    let on_complete = {
        let shared = shared.clone();
        use_callback((), move |line: String, _| -> Completion { shared.engine.borrow().complete(&line) })
    };
    let on_validate = {
        let shared = shared.clone();
        use_callback((), move |text: String, _| shared.engine.borrow_mut().validate(&text))
    };

    {
        let shared = shared.clone();
        let dispatcher = shown.dispatcher();
        let root = root.clone();
        use_effect_with((), move |_| {
            mark_ready(&shared, &root);
            let listener = matches!(shared.host, host::Host::Page).then(|| host::listen(&shared)).flatten();
            let frames = start_frames(shared, root, move |next| dispatcher.dispatch(next));
            move || {
                frames.stop();
                if let Some(listener) = listener {
                    host::stop_listening(&listener);
                }
            }
        });
    }

    // Presentation mode is the page's own look, not the simulation's: the app keeps it.
    let presentation = use_state(|| params.presentation);
    let on_presentation = {
        let presentation = presentation.clone();
        use_callback(*presentation, move |_: (), on: &bool| presentation.set(!*on))
    };
    // The Operator panel: closed until asked for, and only then is its code (and Python) fetched.
    let operator = use_state(|| false);
    let on_operator = {
        let operator = operator.clone();
        use_callback(*operator, move |_: (), open: &bool| operator.set(!*open))
    };
    let on_shown = {
        let dispatcher = shown.dispatcher();
        use_callback((), move |next: Rc<Snapshot>, _| dispatcher.dispatch(next))
    };
    let lessons = use_memo(props.embedded, |embedded| (!embedded).then(|| Rc::new(kubeloop::view::stage::lesson_choices())));

    let s = &shown.0;
    {
        // A lesson that has the learner write an operator opens the Operator panel (and so starts
        // loading Python) as it begins, so that its operator step finds Python ready.
        let lesson_operator = s.lesson.as_ref().and_then(|l| l.operator.clone());
        let operator = operator.clone();
        use_effect_with(lesson_operator, move |name| {
            if name.is_some() {
                operator.set(true);
            }
        });
    }
    let p = &*params;
    let theme = (p.theme != kubeloop::view::page::Theme::Auto).then(|| p.theme.name());
    {
        let on_page = matches!(shared.host, host::Host::Page);
        use_effect_with((theme, *presentation), move |(theme, presentation)| {
            if on_page {
                mark_root(*theme, *presentation);
            }
        });
    }
    // Past teaching scale the panels below the cluster are skipped by the browser while off screen.
    let large = s.is_large();
    // A lesson asking which loop stopped hides every component's state, and the hints that
    // would name it, until it is answered.
    let conceal = s.lesson.as_ref().is_some_and(|l| l.conceal_components);
    let selected = s.selection.as_ref().map(|sel| format!("{}/{}", sel.namespace, sel.name));
    let stage = p.shows_panel("cluster") || p.shows_panel("loops") || p.shows_panel("flow");
    let workbench = (p.shows_panel("console") || p.shows_panel("editor")).then(|| {
        html! {
            <section class="workbench" aria-label="Console and editor">
                if p.shows_panel("console") {
                    <Console lines={s.console.clone()} on_action={on_action.clone()} on_complete={on_complete.clone()} />
                }
                if p.shows_panel("editor") {
                    <Editor on_action={on_action.clone()} on_validate={on_validate.clone()} />
                }
            </section>
        }
    });
    // A real cluster (`?cluster=`) is drawn by a page of its own, in the lazy part of the wasm.
    if let Some(a) = &s.attached {
        type Page = fn(&Rc<Snapshot>, &kubeloop::play::AttachedView, NodeRef, &Callback<Action>) -> Html;
        let page: Page = kubeloop::play::out_of_line(crate::attach_view::attached_page);
        return page(s, a, root, &on_action);
    }
    html! {
        <div ref={root} class={classes!("app", props.embedded.then_some("embedded"), large.then_some("large"), presentation.then_some("presentation"), s.lesson.is_some().then_some("with-lesson"))}
            data-theme={theme} data-sim-time={s.time_ms.to_string()} data-mode={s.mode.name()}>
            if p.shows_panel("header") {
                { header(kubeloop::VERSION) }
            }
            if p.controls.as_ref().is_none_or(|c| !c.is_empty()) {
                <Toolbar
                    time_ms={s.time_ms}
                    mode={s.mode}
                    speed={s.speed}
                    seed={s.seed}
                    lagging={s.lagging}
                    note={AttrValue::from(s.note.clone())}
                    scenario={AttrValue::from(s.scenario.clone())}
                    params={params.clone()}
                    story={s.story}
                    presentation={*presentation}
                    on_presentation={on_presentation}
                    operator={*operator}
                    on_operator={on_operator}
                    lessons={(*lessons).clone()}
                    on_action={on_action.clone()}
                />
            }
            <ErrorBanner errors={s.errors.clone()} on_action={on_action.clone()} />
            if let Some(share) = &s.share {
                <SharePanel share={share.clone()} on_action={on_action.clone()} />
            }
            <main class="content">
                if stage {
                    <Stage
                        cluster={s.cluster.clone()}
                        components={s.components.clone()}
                        hops={s.hops.clone()}
                        caption={s.caption.clone()}
                        replacements={s.replacements.clone()}
                        gap={s.gap.clone()}
                        services={s.services.clone()}
                        dots={s.dots.clone()}
                        selected={selected.map(AttrValue::from)}
                        show_plane={p.shows_panel("loops")}
                        show_tokens={p.shows_panel("flow")}
                        conceal={conceal}
                        keep_all={s.lesson.is_some()}
                        pins={s.pins.clone()}
                        on_action={on_action.clone()}
                    />
                }
                <aside class="side">
                    if *operator {
                        { operator_panel(&shared, s, &on_shown) }
                    }
                    if let Some(lesson) = &s.lesson {
                        if p.shows_panel("lesson") {
                            <LessonPanel view={lesson.clone()} problem={s.lesson_problem.clone().map(AttrValue::from)} on_action={on_action.clone()} />
                        }
                    }
                    if p.shows_panel("gap") {
                        <GapPanel gap={s.gap.clone()} chart={s.chart.clone()} commands={s.commands.clone()} on_action={on_action.clone()} />
                    }
                    if p.shows_panel("pod") {
                        <PodPanel selection={s.selection.clone()} on_action={on_action.clone()} />
                    }
                    if let Some(h) = s.hints.as_ref().filter(|_| !conceal) {
                        <HintsPanel open={h.open} hints={h.hints.clone()} on_action={on_action.clone()} />
                    }
                </aside>
                { workbench.unwrap_or_default() }
                if p.shows_panel("events") {
                    <EventsPanel events={s.events.clone()} filter={s.filter.clone()} on_action={on_action.clone()} />
                }
                if p.shows_panel("commands") {
                    <CommandLog commands={s.commands.clone()} />
                }
            </main>
        </div>
    }
}

/// The Operator panel, through a pointer: the app's render runs on the first load, and the
/// panel's code must stay out of it (`kubeloop::play::out_of_line`).
fn operator_panel(shared: &Rc<Shared>, s: &Snapshot, on_shown: &Callback<Rc<Snapshot>>) -> Html {
    let panel: fn(&Rc<Shared>, &Snapshot, &Callback<Rc<Snapshot>>) -> Html = kubeloop::play::out_of_line(crate::operator_view::panel);
    panel(shared, s, on_shown)
}

/// The frame callback, shared with itself so it can ask for the next frame.
type FrameCallback = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

/// The running animation-frame loop; [`Frames::stop`] cancels it.
struct Frames {
    id: Rc<RefCell<Option<i32>>>,
    callback: FrameCallback,
    skips: Option<SkipListener>,
}

impl Frames {
    fn stop(self) {
        if let (Some(window), Some(id)) = (web_sys::window(), self.id.borrow_mut().take()) {
            let _ = window.cancel_animation_frame(id);
        }
        // Dropping the closure breaks its reference to itself.
        self.callback.borrow_mut().take();
        if let Some((root, listener)) = self.skips {
            let _ = root.remove_event_listener_with_callback_and_bool(SKIP_EVENT, listener.as_ref().unchecked_ref(), true);
        }
    }
}

/// The event the browser fires at a `content-visibility: auto` element when it starts or stops
/// skipping its rendering (off screen or back).
const SKIP_EVENT: &str = "contentvisibilityautostatechange";

/// The root the skip listener is on, and the listener.
type SkipListener = (web_sys::Element, Closure<dyn FnMut(web_sys::Event)>);

/// Listens at the app's root (capturing: the event does not bubble) for the browser skipping or
/// drawing again the panels below the stage, and keeps `skipped` up to date. No layout is
/// read: the browser says what it decided when it laid out the frame.
fn watch_skips(root: &NodeRef, skipped: Rc<Cell<Offscreen>>) -> Option<SkipListener> {
    let root = root.cast::<web_sys::Element>()?;
    let listener = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
        let Some(target) = event.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
        let now = js_sys::Reflect::get(&event, &"skipped".into()).ok().and_then(|v| v.as_bool()).unwrap_or(false);
        let classes = target.class_list();
        let mut state = skipped.get();
        // The loops and the flow are on the stage, which is always drawn.
        if classes.contains("events-panel") {
            state.events = now;
        }
        skipped.set(state);
    });
    root.add_event_listener_with_callback_and_bool(SKIP_EVENT, listener.as_ref().unchecked_ref(), true).ok()?;
    Some((root, listener))
}

/// Wall milliseconds between checks of the content's height.
const RESIZE_CHECK_MS: f64 = 200.0;

/// Calls the engine on every animation frame and hands changed snapshots to `show`; before
/// that, handles what arrived for it, and after, posts its outbox and any change of height.
fn start_frames(shared: Rc<Shared>, root: NodeRef, show: impl Fn(Rc<Snapshot>) + 'static) -> Frames {
    let id = Rc::new(RefCell::new(None));
    let callback: FrameCallback = Rc::new(RefCell::new(None));
    let clock = wall_clock();
    let (id_in, callback_in) = (id.clone(), callback.clone());
    let mut height = 0u32;
    let mut last_check = f64::NEG_INFINITY;
    let skipped = Rc::new(Cell::new(Offscreen::default()));
    let skips = watch_skips(&root, skipped.clone());
    // Only a host needs the outbox and the height; reading the height forces a layout.
    let listens = shared.listens();
    shared.engine.borrow_mut().set_host_listens(listens);
    let attached = shared.engine.borrow().is_attached();
    *callback.borrow_mut() = Some(Closure::new(move |ts: f64| {
        if attached {
            let pump: fn(&Rc<Shared>, f64) = kubeloop::play::out_of_line(crate::attach::pump);
            pump(&shared, ts);
        }
        if let Some(next) = handle_inbox(&shared) {
            show(next);
        }
        shared.engine.borrow_mut().set_offscreen(skipped.get());
        let next = shared.engine.borrow_mut().frame(ts, &clock);
        if let Some(next) = next {
            show(next);
        }
        flush_outbox(&shared);
        if listens && ts - last_check >= RESIZE_CHECK_MS {
            last_check = ts;
            let now = root.cast::<web_sys::HtmlElement>().map(|e| e.offset_height().max(0) as u32).unwrap_or(0);
            if now != height && now > 0 {
                height = now;
                shared.post(&OutMessage::Resize { height });
            }
        }
        request(&id_in, &callback_in);
    }));
    request(&id, &callback);
    Frames { id, callback, skips }
}

/// Hands what arrived to the engine, and starts any fetch it asks for. Returns the latest
/// snapshot if anything changed.
fn handle_inbox(shared: &Rc<Shared>) -> Option<Rc<Snapshot>> {
    let incoming: Vec<Incoming> = std::mem::take(&mut *shared.inbox.borrow_mut());
    let mut latest = None;
    for item in incoming {
        let mut engine = shared.engine.borrow_mut();
        let next = match item {
            Incoming::Message(json) => engine.receive(&json),
            Incoming::Fetched(url, text) => engine.fetched(&url, text),
            Incoming::FetchedLesson(url, text) => engine.lesson_fetched(&url, text),
        };
        latest = next.or(latest);
    }
    let fetch = shared.engine.borrow_mut().take_fetch();
    if let Some(url) = fetch {
        match kubeloop::view::page::check_scenario_url(&url, &host::own_origin()) {
            Ok(()) => host::fetch_scenario(shared, url),
            Err(e) => {
                let mut engine = shared.engine.borrow_mut();
                engine.report(e);
                latest = engine.refresh().or(latest);
            }
        }
    }
    let lesson = shared.engine.borrow_mut().take_lesson_fetch();
    if let Some(url) = lesson {
        match kubeloop::view::page::check_file_url("lesson", &url, &host::own_origin()) {
            Ok(()) => host::fetch_lesson(shared, url),
            Err(e) => {
                let mut engine = shared.engine.borrow_mut();
                engine.report(e);
                latest = engine.refresh().or(latest);
            }
        }
    }
    latest
}

/// Posts the engine's outbox to the host, outside any borrow of the engine (a host may answer
/// at once).
fn flush_outbox(shared: &Shared) {
    let out = shared.engine.borrow_mut().take_outbox();
    for message in &out {
        shared.post(message);
    }
}

fn request(id: &Rc<RefCell<Option<i32>>>, callback: &FrameCallback) {
    let (Some(window), Some(cb)) =
        (web_sys::window(), callback.borrow().as_ref().map(|c| c.as_ref().unchecked_ref::<js_sys::Function>().clone()))
    else {
        return;
    };
    *id.borrow_mut() = window.request_animation_frame(&cb).ok();
}

/// Marks the widget ready: `data-ready="true"` on `<body>` for the whole page (on the app's
/// root for an element), and a `ready` message to the host.
fn mark_ready(shared: &Shared, root: &NodeRef) {
    let target = match shared.host {
        host::Host::Page => {
            web_sys::window().and_then(|window| window.document()).and_then(|document| document.body()).map(web_sys::Element::from)
        }
        host::Host::Element(_) => root.cast::<web_sys::Element>(),
    };
    if let Some(target) = target {
        // Setting an attribute fails only for an invalid name, and this one is valid.
        let _ = target.set_attribute("data-ready", "true");
    }
    let ready = {
        let engine = shared.engine.borrow();
        let s = engine.snapshot();
        OutMessage::Ready { version: kubeloop::VERSION.into(), scenario: s.scenario.clone(), seed: s.seed, time_ms: s.time_ms }
    };
    shared.post(&ready);
}

/// Marks the document's root with a forced theme and presentation mode, for the rules that size
/// and colour the page around the app (`style.css`). Only the page's own app does: a widget on a
/// host page leaves the host's root alone.
fn mark_root(theme: Option<&'static str>, presentation: bool) {
    let Some(root) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) else { return };
    let _ = match theme {
        Some(t) => root.set_attribute("data-theme", t),
        None => root.remove_attribute("data-theme"),
    };
    let _ = root.class_list().toggle_with_force("presentation", presentation);
}
