//! The page's side of embedding: who hosts this widget and how to talk to it.
//!
//! A widget is either the whole page (standalone, or in an iframe: it talks to `window.parent`
//! with `postMessage`, checking origins against the allow-list) or a `<kubeloop-sim>` element
//! (it calls the element's JS callback and is handed messages by `Handle::send`). Either way,
//! what arrives is queued in [`Shared::inbox`] and handled at the next animation frame, so a
//! host's handler that answers synchronously never re-enters the engine while it is busy.
//!
//! A framing page may post before the wasm has even loaded. `index.html` therefore keeps every
//! `message` event from its first script on (`window.kubeloopEarly`), and [`listen`] takes that
//! list over in order before it listens itself, so no message is lost; all of them are handled
//! at the first frame, after `ready`. An element's messages wait in `kubeloop-sim.js` instead.
//!
//! Only `js_sys::Reflect` is used to reach `postMessage`, `fetch`, the clipboard and
//! `location.ancestorOrigins`: each would otherwise cost a web-sys feature, and the page is
//! near its size ceiling.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use js_sys::{Function, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use kubeloop::play::Engine;
use kubeloop::view::embed::OutMessage;

/// Where a widget lives.
pub enum Host {
    /// The whole page: messages go to `window.parent` (when framed).
    Page,
    /// A `<kubeloop-sim>` element: messages go to this callback.
    Element(Function),
}

/// Something that arrived for the engine.
pub enum Incoming {
    /// A host message's JSON text.
    Message(String),
    /// A fetched scenario file (or why it failed).
    Fetched(String, Result<String, String>),
    /// A fetched lesson file (or why it failed).
    FetchedLesson(String, Result<String, String>),
}

/// One widget's state, shared by its Yew app, its frame loop and its JS handle.
pub struct Shared {
    pub engine: RefCell<Engine>,
    pub inbox: RefCell<Vec<Incoming>>,
    pub host: Host,
}

impl PartialEq for Shared {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Shared {
    pub fn new(engine: Engine, host: Host) -> Rc<Shared> {
        Rc::new(Shared { engine: RefCell::new(engine), inbox: RefCell::new(Vec::new()), host })
    }

    /// Whether a host can hear this widget: always for an element; for the whole page only when
    /// it is framed by an allowed origin. A standalone page has no one to tell, so it skips the
    /// event feed, the JSON of every message and the height checks (each forces a layout).
    pub fn listens(&self) -> bool {
        match &self.host {
            Host::Element(_) => true,
            Host::Page => parent_window().is_some() && self.engine.try_borrow().ok().and_then(|e| target_origin(&e)).is_some(),
        }
    }

    /// Posts `message` to the host, if there is one that may hear it.
    pub fn post(&self, message: &OutMessage) {
        // The host is looked for first: a page nobody frames (the usual case, and the `ready`
        // message at start-up) writes no JSON at all.
        let value = || js_sys::JSON::parse(&message.to_json()).ok();
        match &self.host {
            Host::Element(callback) => {
                if let Some(value) = value() {
                    let _ = callback.call1(&JsValue::NULL, &value);
                }
            }
            Host::Page => {
                let Some(parent) = parent_window() else { return };
                let target = self.engine.try_borrow().ok().and_then(|e| target_origin(&e));
                if let (Some(target), Some(value)) = (target, value()) {
                    let _ = parent.post_message(&value, &target);
                }
            }
        }
    }
}

/// The parent window when this page is framed.
fn parent_window() -> Option<web_sys::Window> {
    let window = web_sys::window()?;
    let parent = window.parent().ok().flatten()?;
    (!JsValue::from(&parent).loose_eq(&JsValue::from(&window))).then_some(parent)
}

/// The page's own origin (`http://host:port`).
pub fn own_origin() -> String {
    web_sys::window().and_then(|w| w.location().origin().ok()).unwrap_or_default()
}

/// The origin of the framing page: `location.ancestorOrigins[0]` where the browser has it,
/// else the referrer's.
fn parent_origin() -> Option<String> {
    let window = web_sys::window()?;
    let ancestors = Reflect::get(&window.location(), &"ancestorOrigins".into()).ok().filter(|a| !a.is_undefined());
    if let Some(first) = ancestors.and_then(|a| Reflect::get(&a, &0.into()).ok()).and_then(|v| v.as_string()) {
        return Some(first);
    }
    let referrer = window.document()?.referrer();
    let (scheme, rest) = referrer.split_once("://")?;
    Some(format!("{scheme}://{}", rest.split('/').next()?))
}

/// Where to post: the framing page's origin if the allow-list has it (posting to an origin the
/// parent does not have makes the browser log an error, so we never guess).
fn target_origin(engine: &Engine) -> Option<String> {
    let params = engine.params();
    if params.origins.iter().any(|o| o == "*") {
        return Some("*".into());
    }
    let parent = parent_origin()?;
    params.allows_origin(&parent, &own_origin()).then_some(parent)
}

/// Listens for `message` events on the window and queues those from allowed origins, after
/// the ones `index.html` kept while the wasm loaded. Returns the listener, which must be kept
/// alive and passed to [`stop_listening`].
pub fn listen(shared: &Rc<Shared>) -> Option<Closure<dyn FnMut(JsValue)>> {
    let window = web_sys::window()?;
    let weak: Weak<Shared> = Rc::downgrade(shared);
    let own = own_origin();
    let receive = move |event: &JsValue| {
        let Some(shared) = weak.upgrade() else { return };
        let origin = Reflect::get(event, &"origin".into()).ok().and_then(|o| o.as_string()).unwrap_or_default();
        let allowed = shared.engine.try_borrow().map(|e| e.params().allows_origin(&origin, &own)).unwrap_or(false);
        if !allowed {
            return; // Another origin's message: not ours to read, not ours to complain about.
        }
        let data = Reflect::get(event, &"data".into()).unwrap_or(JsValue::UNDEFINED);
        shared.inbox.borrow_mut().push(Incoming::Message(json_text(&data)));
    };
    // Taken over and listened to in one go: no message can fall between the two.
    for event in take_early_messages(&window) {
        receive(&event);
    }
    let listener = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| receive(&event));
    window.add_event_listener_with_callback("message", listener.as_ref().unchecked_ref()).ok()?;
    Some(listener)
}

/// The `message` events `index.html`'s first script kept, oldest first; its listener is
/// removed, so from here on only [`listen`]'s hears them.
fn take_early_messages(window: &web_sys::Window) -> Vec<JsValue> {
    let key = JsValue::from("kubeloopEarly");
    let Some(early) = Reflect::get(window, &key).ok().filter(|e| e.is_object()) else { return Vec::new() };
    if let Some(keeper) = Reflect::get(&early, &"listener".into()).ok().and_then(|f| f.dyn_into::<Function>().ok()) {
        let _ = window.remove_event_listener_with_callback("message", &keeper);
    }
    let _ = Reflect::delete_property(window, &key);
    Reflect::get(&early, &"messages".into()).ok().map(|m| js_sys::Array::from(&m).iter().collect()).unwrap_or_default()
}

pub fn stop_listening(listener: &Closure<dyn FnMut(JsValue)>) {
    if let Some(window) = web_sys::window() {
        let _ = window.remove_event_listener_with_callback("message", listener.as_ref().unchecked_ref());
    }
}

/// A message's JSON text: a string is taken as JSON already; anything else is stringified.
pub fn json_text(data: &JsValue) -> String {
    data.as_string().unwrap_or_else(|| js_sys::JSON::stringify(data).ok().and_then(|s| s.as_string()).unwrap_or_default())
}

/// Fetches `url` as text and queues the result for the engine.
pub fn fetch_scenario(shared: &Rc<Shared>, url: String) {
    let weak = Rc::downgrade(shared);
    fetch_text(&url.clone(), move |result| {
        if let Some(shared) = weak.upgrade() {
            shared.inbox.borrow_mut().push(Incoming::Fetched(url, result));
        }
    });
}

/// Fetches a lesson file named by `?lesson=URL` and queues it for the engine.
pub fn fetch_lesson(shared: &Rc<Shared>, url: String) {
    let weak = Rc::downgrade(shared);
    fetch_text(&url.clone(), move |result| {
        if let Some(shared) = weak.upgrade() {
            shared.inbox.borrow_mut().push(Incoming::FetchedLesson(url, result));
        }
    });
}

/// `fetch(url)` then `.text()`, calling `done` once with the text or an error. Also for the
/// lesson engine's files.
pub fn fetch_text(url: &str, done: impl FnOnce(Result<String, String>) + 'static) {
    let Some(window) = web_sys::window() else { return done(Err("no window".into())) };
    let done = Rc::new(RefCell::new(Some(done)));
    let finish = {
        let done = done.clone();
        move |r: Result<String, String>| {
            if let Some(f) = done.borrow_mut().take() {
                f(r)
            }
        }
    };
    let finish = Rc::new(finish);
    let on_response = {
        let finish = finish.clone();
        Closure::once_into_js(move |response: JsValue| {
            let ok = Reflect::get(&response, &"ok".into()).ok().and_then(|v| v.as_bool()).unwrap_or(false);
            if !ok {
                let status = Reflect::get(&response, &"status".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
                return finish(Err(format!("the server answered {status}")));
            }
            let text = Reflect::get(&response, &"text".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
            match text.and_then(|f| f.call0(&response).ok()) {
                Some(promise) => {
                    let ok = {
                        let finish = finish.clone();
                        Closure::once_into_js(move |t: JsValue| finish(Ok(t.as_string().unwrap_or_default())))
                    };
                    let fail = {
                        let finish = finish.clone();
                        Closure::once_into_js(move |_: JsValue| finish(Err("the response could not be read".into())))
                    };
                    then(&promise, &ok, &fail);
                }
                None => finish(Err("the response could not be read".into())),
            }
        })
    };
    let on_error = {
        let finish = finish.clone();
        Closure::once_into_js(move |_: JsValue| finish(Err("the request failed".into())))
    };
    then(&window.fetch_with_str(url), &on_response, &on_error);
}

/// `promise.then(ok, fail)`.
pub(crate) fn then(promise: &JsValue, ok: &JsValue, fail: &JsValue) {
    if let Some(f) = Reflect::get(promise, &"then".into()).ok().and_then(|f| f.dyn_into::<Function>().ok()) {
        let _ = f.call2(promise, ok, fail);
    }
}

/// Writes `text` to the clipboard where the browser allows it; a refusal is ignored (the text
/// is on screen to copy by hand).
pub fn copy_to_clipboard(text: &str) {
    let Some(window) = web_sys::window() else { return };
    let clipboard = Reflect::get(&window, &"navigator".into()).and_then(|n| Reflect::get(&n, &"clipboard".into()));
    let Ok(clipboard) = clipboard else { return };
    let write = Reflect::get(&clipboard, &"writeText".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
    if let Some(promise) = write.and_then(|f| f.call1(&clipboard, &text.into()).ok()) {
        let ignore = Closure::once_into_js(|_: JsValue| {});
        then(&promise, &JsValue::UNDEFINED, &ignore);
    }
}

/// Reads a `File` (from an `<input type="file">`) as text and calls `done` with it; an
/// unreadable file is reported as an error text the trace parser will refuse.
pub fn read_file(file: &JsValue, done: impl FnOnce(String) + 'static) {
    let text = Reflect::get(file, &"text".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
    let Some(promise) = text.and_then(|f| f.call0(file).ok()) else { return };
    let done = Rc::new(RefCell::new(Some(done)));
    let finish = move |text: String| {
        if let Some(f) = done.borrow_mut().take() {
            f(text)
        }
    };
    let finish = Rc::new(finish);
    let ok = {
        let finish = finish.clone();
        Closure::once_into_js(move |t: JsValue| finish(t.as_string().unwrap_or_default()))
    };
    let fail = Closure::once_into_js(move |_: JsValue| finish(String::new()));
    then(&promise, &ok, &fail);
}
