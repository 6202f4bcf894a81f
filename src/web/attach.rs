//! The page's side of `?cluster=PATH`: it makes the HTTP requests the engine asks for
//! (`Engine::attach_requests`) with the browser's `fetch`, on the page's own origin, and queues
//! what comes back for the engine — a whole answer, or a watch's lines as they stream (the
//! response body read chunk by chunk and cut at newlines), then the stream's end.
//!
//! It exists only as glue: which requests, when, and what the answers mean are decided in the
//! library (`kubeloop::play::attach`, tested natively). Only `js_sys::Reflect` reaches `fetch`,
//! the response and its body's reader, as `host.rs` does, so no web-sys feature is added. None
//! of this runs unless the page is attached, so the wasm split moves it to the lazy module.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use js_sys::{Function, Object, Reflect, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::host::Shared;
use kubeloop::play::Request;

/// What came back for a page's engine, kept here until its next frame (not in the app's inbox,
/// whose handling is on every page's first load).
enum Came {
    /// A request answered whole: id, status, content type, body.
    Answer(u64, u16, String, String),
    /// A line of a watch.
    Line(u64, String),
    /// A watch ended (with why, if it failed).
    Ended(u64, Option<String>),
}

thread_local! {
    /// Per page (its `Shared`, by address) what came back since its last frame.
    static CAME: RefCell<Vec<(usize, Came)>> = const { RefCell::new(Vec::new()) };
}

/// At each frame of an attached page: hands the engine what came back, then starts every
/// request it wants made now.
#[inline(never)]
pub fn pump(shared: &Rc<Shared>, ts: f64) {
    let me = Rc::as_ptr(shared) as usize;
    let came: Vec<Came> = CAME.with(|c| {
        let mut all = c.borrow_mut();
        let (mine, others): (Vec<_>, Vec<_>) = all.drain(..).partition(|(who, _)| *who == me);
        *all = others;
        mine.into_iter().map(|(_, item)| item).collect()
    });
    let requests = {
        let mut engine = shared.engine.borrow_mut();
        for item in came {
            match item {
                Came::Answer(id, code, content_type, body) => engine.attach_answer(id, code, &content_type, &body),
                Came::Line(id, line) => engine.attach_line(id, &line),
                Came::Ended(id, failure) => engine.attach_ended(id, failure),
            }
        }
        engine.attach_requests(ts)
    };
    for request in requests {
        start(shared, request);
    }
}

/// `fetch(url, {method, headers, body})`.
fn start(shared: &Rc<Shared>, request: Request) {
    let weak = Rc::downgrade(shared);
    let Some(window) = web_sys::window() else { return };
    let init = Object::new();
    let headers = Object::new();
    let _ = Reflect::set(&headers, &"Accept".into(), &"application/json".into());
    if let Some(t) = request.content_type {
        let _ = Reflect::set(&headers, &"Content-Type".into(), &t.into());
    }
    let _ = Reflect::set(&init, &"method".into(), &request.method.into());
    let _ = Reflect::set(&init, &"headers".into(), &headers);
    if let Some(body) = &request.body {
        let _ = Reflect::set(&init, &"body".into(), &body.as_str().into());
    }
    let Some(fetch) = Reflect::get(&window, &"fetch".into()).ok().and_then(|f| f.dyn_into::<Function>().ok()) else { return };
    let Ok(promise) = fetch.call2(&window, &request.url.as_str().into(), &init) else { return };
    let (id, stream) = (request.id, request.stream);
    let on_response = {
        let weak = weak.clone();
        Closure::once_into_js(move |response: JsValue| {
            let status = Reflect::get(&response, &"status".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as u16;
            if stream && (200..300).contains(&status) {
                read_stream(weak, id, &response);
            } else {
                read_whole(weak, id, status, &response);
            }
        })
    };
    let on_error = Closure::once_into_js(move |e: JsValue| {
        let message = Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| "the request failed".into());
        if stream {
            queue(&weak, Came::Ended(id, Some(message)));
        } else {
            queue(&weak, Came::Answer(id, 0, String::new(), message));
        }
    });
    then(&promise, &on_response, &on_error);
}

fn queue(weak: &Weak<Shared>, item: Came) {
    if weak.strong_count() > 0 {
        let who = weak.as_ptr() as usize;
        CAME.with(|c| c.borrow_mut().push((who, item)));
    }
}

/// The answer's text, with its status and content type.
fn read_whole(weak: Weak<Shared>, id: u64, status: u16, response: &JsValue) {
    let content_type = Reflect::get(response, &"headers".into())
        .ok()
        .and_then(|h| {
            let get = Reflect::get(&h, &"get".into()).ok()?.dyn_into::<Function>().ok()?;
            get.call1(&h, &"content-type".into()).ok()?.as_string()
        })
        .unwrap_or_default();
    let text = Reflect::get(response, &"text".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
    let Some(promise) = text.and_then(|f| f.call0(response).ok()) else { return };
    let weak_fail = weak.clone();
    let ok = {
        let content_type = content_type.clone();
        Closure::once_into_js(move |t: JsValue| queue(&weak, Came::Answer(id, status, content_type, t.as_string().unwrap_or_default())))
    };
    let fail = Closure::once_into_js(move |_: JsValue| queue(&weak_fail, Came::Answer(id, status, content_type, String::new())));
    then(&promise, &ok, &fail);
}

/// Reads a watch's body as it streams: every complete line is queued as it arrives.
fn read_stream(weak: Weak<Shared>, id: u64, response: &JsValue) {
    let reader = Reflect::get(response, &"body".into())
        .ok()
        .and_then(|body| Reflect::get(&body, &"getReader".into()).ok()?.dyn_into::<Function>().ok()?.call0(&body).ok());
    match reader {
        Some(reader) => next_chunk(weak, id, reader, Rc::new(RefCell::new(Vec::new()))),
        None => queue(&weak, Came::Ended(id, Some("the watch cannot be read as a stream".into()))),
    }
}

fn next_chunk(weak: Weak<Shared>, id: u64, reader: JsValue, pending: Rc<RefCell<Vec<u8>>>) {
    let Some(read) = Reflect::get(&reader, &"read".into()).ok().and_then(|f| f.dyn_into::<Function>().ok()) else { return };
    let Ok(promise) = read.call0(&reader) else { return };
    let weak_fail = weak.clone();
    let ok = Closure::once_into_js(move |chunk: JsValue| {
        if weak.upgrade().is_none() {
            return;
        }
        let done = Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true);
        if done {
            return queue(&weak, Came::Ended(id, None));
        }
        if let Ok(value) = Reflect::get(&chunk, &"value".into()) {
            let bytes = Uint8Array::new(&value).to_vec();
            let mut buffer = pending.borrow_mut();
            buffer.extend_from_slice(&bytes);
            while let Some(end) = buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=end).collect();
                queue(&weak, Came::Line(id, String::from_utf8_lossy(&line).into_owned()));
            }
        }
        next_chunk(weak, id, reader, pending);
    });
    let fail = Closure::once_into_js(move |_: JsValue| queue(&weak_fail, Came::Ended(id, Some("the watch's connection broke".into()))));
    then(&promise, &ok, &fail);
}

/// `promise.then(ok, fail)`.
fn then(promise: &JsValue, ok: &JsValue, fail: &JsValue) {
    if let Some(f) = Reflect::get(promise, &"then".into()).ok().and_then(|f| f.dyn_into::<Function>().ok()) {
        let _ = f.call2(promise, ok, fail);
    }
}
