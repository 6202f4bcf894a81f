//! The Operator panel: the learner writes a controller in Python with kopf's shape, and Run
//! starts it as the loop `operator/NAME` on the stage, beside the built-in ones.
//!
//! Python is Pyodide (README, "Python in the page"), several megabytes, so nothing of it is in
//! the first load: opening the panel adds the `<script type="module">` of
//! `python/operator-python.js` (www/), which fetches Pyodide and kubeloop's operator runtime
//! from this build's own `python/` folder and sets `globalThis.kubeloopPython`. The templates
//! are fetched from `python/templates/` too, so their text is not in the wasm's data.
//!
//! [`PagePython`] is the page's `Interpreter`: each protocol message goes to the page's host
//! (src/operator/python/host_page.py) and its reply comes back synchronously; a handler call is
//! replayed from its start as its answers arrive, so the page never blocks. This panel's code
//! is reached only once it opens, so the wasm split keeps it in the lazy module.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Reflect};
use serde_json::{json, Value};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

use crate::host::{fetch_text, then, Shared};
use kubeloop::operator::Interpreter;
use kubeloop::play::Snapshot;
use kubeloop::view::loops::ComponentView;

/// The operators to start from, each fetched from this build when chosen (Trunk copies
/// `tests/python`'s two into `python/templates/` and `examples/operators/` into `operators/`;
/// index.html has their lines). The operator runs as `operator/NAME`; lesson 11's is the one
/// whose NAME its lesson names.
pub const TEMPLATES: &[Template] = &[
    Template {
        path: "python/templates/keep_deployment.py",
        file: "keep_deployment",
        name: "keep-deployment",
        title: "Keep a Deployment for each labelled ConfigMap",
    },
    Template { path: "python/templates/label_pods.py", file: "label_pods", name: "label-pods", title: "Label every Pod it sees" },
    Template {
        path: "operators/website_start.py",
        file: "website",
        name: "website",
        title: "Lesson 11: a Website's Deployment and Service (to complete)",
    },
    Template { path: "operators/config_copy.py", file: "config_copy", name: "config-copy", title: "Copy annotated ConfigMaps" },
    Template {
        path: "operators/scheduled_scaling.py",
        file: "scheduled_scaling",
        name: "scheduled-scaling",
        title: "Scale Deployments on a schedule",
    },
];

#[derive(Clone, Copy, PartialEq)]
pub struct Template {
    pub path: &'static str,
    pub file: &'static str,
    pub name: &'static str,
    pub title: &'static str,
}

/// Where the page's Python stands; one for the page, so reopening the panel loads nothing.
#[derive(Clone, PartialEq)]
enum Runtime {
    Absent,
    Loading,
    Ready,
    Failed(String),
}

/// A panel waiting for the runtime to finish loading.
type Waiter = Box<dyn FnOnce(Runtime)>;

thread_local! {
    static RUNTIME: RefCell<Runtime> = const { RefCell::new(Runtime::Absent) };
    /// The editor's code and the operator name it runs as: a lesson's operator step runs it.
    static EDITOR: RefCell<Option<(&'static str, String)>> = const { RefCell::new(None) };
    /// Who waits for the runtime to load (each panel that opened while it loaded).
    static WAITING: RefCell<Vec<Waiter>> = const { RefCell::new(Vec::new()) };
}

fn api() -> Result<JsValue, String> {
    let api = Reflect::get(&js_sys::global(), &"kubeloopPython".into()).map_err(|_| "Python is not loaded".to_string())?;
    if api.is_undefined() {
        return Err("Python is not loaded".into());
    }
    Ok(api)
}

fn call(api: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, String> {
    let f = Reflect::get(api, &method.into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| format!("kubeloopPython.{method} is missing"))?;
    let result = match args {
        [] => f.call0(api),
        [a] => f.call1(api, a),
        _ => return Err("one argument at most".into()),
    };
    result.map_err(|e| {
        let text = Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).or_else(|| e.as_string());
        text.unwrap_or_else(|| "Python raised an error".into())
    })
}

fn settle(state: Runtime) {
    RUNTIME.with(|r| *r.borrow_mut() = state.clone());
    for waiter in WAITING.with(|w| std::mem::take(&mut *w.borrow_mut())) {
        waiter(state.clone());
    }
}

/// Loads the page's Python once (from `base`, the page's or widget's address), calling `done`
/// with how it ended; at once if it already has.
fn ensure_loaded(base: &str, done: impl FnOnce(Runtime) + 'static) {
    let now = RUNTIME.with(|r| r.borrow().clone());
    match now {
        Runtime::Ready | Runtime::Failed(_) => return done(now),
        Runtime::Loading => return WAITING.with(|w| w.borrow_mut().push(Box::new(done))),
        Runtime::Absent => WAITING.with(|w| w.borrow_mut().push(Box::new(done))),
    }
    RUNTIME.with(|r| *r.borrow_mut() = Runtime::Loading);
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return settle(Runtime::Failed("no document".into())) };
    let src = web_sys::Url::new_with_base("python/operator-python.js", base)
        .map(|u| u.href())
        .unwrap_or_else(|_| "python/operator-python.js".into());
    let Ok(script) = document.create_element("script") else { return settle(Runtime::Failed("no script element".into())) };
    let _ = script.set_attribute("type", "module");
    let _ = script.set_attribute("src", &src);
    let on_load = Closure::once_into_js(move |_: JsValue| {
        let started = api().and_then(|api| call(&api, "start", &[]));
        match started {
            Ok(promise) => {
                let ok = Closure::once_into_js(move |_: JsValue| settle(Runtime::Ready));
                let fail = Closure::once_into_js(move |e: JsValue| {
                    let text =
                        Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| "it failed to start".into());
                    settle(Runtime::Failed(text))
                });
                then(&promise, &ok, &fail);
            }
            Err(e) => settle(Runtime::Failed(e)),
        }
    });
    let on_error = Closure::once_into_js(move |_: JsValue| settle(Runtime::Failed(format!("{src} could not be fetched"))));
    let _ = script.add_event_listener_with_callback("load", on_load.unchecked_ref());
    let _ = script.add_event_listener_with_callback("error", on_error.unchecked_ref());
    if let Some(body) = document.body() {
        let _ = body.append_child(&script);
    }
}

/// The page's interpreter: the learner's file, run by Pyodide through the page's host.
pub struct PagePython {
    path: String,
    source: String,
}

impl Interpreter for PagePython {
    fn load(&mut self) -> Result<Value, String> {
        self.exchange(&json!({"op": "load", "path": self.path, "source": self.source}))
    }

    fn exchange(&mut self, message: &Value) -> Result<Value, String> {
        let reply = call(&api()?, "exchange", &[JsValue::from_str(&message.to_string())])?;
        let text = reply.as_string().ok_or("Python answered something other than text")?;
        serde_json::from_str(&text).map_err(|e| format!("unreadable reply from Python ({e}): {text}"))
    }
}

/// What runs a lesson's operator in the page: the editor's code when the panel holds that
/// operator's template, else the lesson's starting file, through the page's Python; while
/// Python is still loading, a refusal that says so (the step is tried again once it has).
fn lesson_maker() -> kubeloop::play::OperatorMaker {
    Rc::new(|operator: &kubeloop::lesson::LessonOperator| {
        if RUNTIME.with(|r| *r.borrow() != Runtime::Ready) {
            return Err(format!(
                "this step runs the operator operator/{} ({}) in the page's Python, which is still loading in the Operator panel; the step goes on once it has loaded",
                operator.name, operator.file
            ));
        }
        let edited = EDITOR.with(|e| e.borrow().as_ref().filter(|(name, _)| *name == operator.name).map(|(_, code)| code.clone()));
        let source = edited.unwrap_or_else(|| operator.start.clone());
        Ok(Box::new(PagePython { path: operator.file.clone(), source }) as Box<dyn Interpreter>)
    })
}

/// What the status line says: loading, running, stopped, or the error.
fn status(runtime: &Runtime, error: Option<&str>, running: Option<&str>, components: &[ComponentView]) -> (&'static str, String) {
    match runtime {
        Runtime::Absent | Runtime::Loading => ("loading", "loading Python…".into()),
        Runtime::Failed(e) => ("error", format!("error: Python did not load: {e}")),
        Runtime::Ready => {
            if let Some(e) = error {
                // A traceback keeps its lines (and its caret under the column it points at).
                let sep = if e.contains('\n') { "\n" } else { " " };
                return ("error", format!("error:{sep}{e}"));
            }
            let Some(name) = running else { return ("stopped", "stopped — Run starts it".into()) };
            let id = format!("{}{name}", kubeloop::sim::OPERATOR_PREFIX);
            match components.iter().find(|c| c.name == id) {
                None => ("stopped", "stopped".into()),
                Some(c) if c.state == "stopped" => ("stopped", format!("stopped: {id} (sim start {id})")),
                Some(c) => match c.loops.first().and_then(|l| l.last_action.strip_prefix("interpreter failed: ")) {
                    Some(e) => ("error", format!("error: {e}")),
                    None => ("running", format!("running as {id}")),
                },
            }
        }
    }
}

#[derive(Properties, PartialEq)]
pub struct OperatorPanelProps {
    pub shared: Rc<Shared>,
    pub components: Rc<Vec<ComponentView>>,
    /// The operator the running lesson has the learner write, if any.
    pub lesson_operator: Option<String>,
    /// Shows the snapshot a Run produced.
    pub on_shown: Callback<Rc<Snapshot>>,
}

#[component]
pub fn OperatorPanel(props: &OperatorPanelProps) -> Html {
    let runtime = use_state(|| RUNTIME.with(|r| r.borrow().clone()));
    {
        let runtime = runtime.clone();
        let (shared, on_shown) = (props.shared.clone(), props.on_shown.clone());
        let base = props.shared.engine.borrow().page_base().to_string();
        use_effect_with((), move |_| {
            // A lesson's operator step runs through this panel's Python: once it has loaded, a
            // step refused while it loaded is tried again.
            shared.engine.borrow_mut().set_operator_maker(lesson_maker());
            ensure_loaded(&base, move |state| {
                let ready = state == Runtime::Ready;
                runtime.set(state);
                if ready {
                    if let Some(shown) = shared.engine.borrow_mut().retry_lesson_operator() {
                        on_shown.emit(shown);
                    }
                }
            })
        });
    }
    // A lesson's own operator opens on its template.
    let lesson_operator = props.lesson_operator.clone();
    let template = use_state(move || TEMPLATES.iter().position(|t| Some(t.name) == lesson_operator.as_deref()).unwrap_or(0));
    let code = use_state(|| None::<String>);
    let error = use_state(|| None::<String>);
    let running = use_state(|| None::<&'static str>);
    {
        let (code, error) = (code.clone(), error.clone());
        let base = props.shared.engine.borrow().page_base().to_string();
        use_effect_with(*template, move |index| {
            let t = TEMPLATES[*index];
            code.set(None);
            let url = web_sys::Url::new_with_base(t.path, &base).map(|u| u.href()).unwrap_or_default();
            fetch_text(&url, move |text| match text {
                Ok(text) => {
                    EDITOR.with(|e| *e.borrow_mut() = Some((t.name, text.clone())));
                    code.set(Some(text))
                }
                Err(e) => error.set(Some(format!("template {}: {e}", t.path))),
            });
        });
    }
    let on_template = {
        let template = template.clone();
        Callback::from(move |e: Event| {
            let file = e.target_unchecked_into::<HtmlSelectElement>().value();
            if let Some(i) = TEMPLATES.iter().position(|t| t.file == file) {
                template.set(i);
            }
        })
    };
    let on_input = {
        let (code, template) = (code.clone(), template.clone());
        Callback::from(move |e: InputEvent| {
            let text = e.target_unchecked_into::<HtmlTextAreaElement>().value();
            EDITOR.with(|e| *e.borrow_mut() = Some((TEMPLATES[*template].name, text.clone())));
            code.set(Some(text))
        })
    };
    let on_run = {
        let (shared, on_shown) = (props.shared.clone(), props.on_shown.clone());
        let (code, template, error, running) = (code.clone(), template.clone(), error.clone(), running.clone());
        Callback::from(move |_: MouseEvent| {
            let Some(source) = (*code).clone() else { return };
            let t = TEMPLATES[*template];
            let interpreter = PagePython { path: format!("{}.py", t.file), source };
            let (result, shown) = shared.engine.borrow_mut().run_operator(t.name, Box::new(interpreter));
            match result {
                Ok(()) => {
                    error.set(None);
                    running.set(Some(t.name));
                }
                Err(e) => error.set(Some(e)),
            }
            if let Some(shown) = shown {
                on_shown.emit(shown);
            }
        })
    };
    let ready = *runtime == Runtime::Ready && code.is_some();
    // What runs under this template's name, whoever started it (Run, or a lesson's step).
    let shown_name = (*running).or_else(|| {
        let name = TEMPLATES[*template].name;
        let id = format!("{}{name}", kubeloop::sim::OPERATOR_PREFIX);
        props.components.iter().any(|c| c.name == id).then_some(name)
    });
    let (state, text) = status(&runtime, error.as_deref(), shown_name, &props.components);
    html! {
        <section id="operator-panel" class="panel operator" aria-labelledby="operator-title" data-testid="operator-panel">
            <h2 id="operator-title" class="panel-title">{ "Your operator" }<span class="muted">{ " · a loop of your own, in Python" }</span></h2>
            <p class="operator-help">
                { "Handlers with kopf's decorators, reading and writing through the kubernetes client. Run starts the file as one more loop on the stage; " }
                <code>{ "sim stop operator/NAME" }</code>{ " in the console stops it." }
            </p>
            <label class="inline">
                { "Start from " }
                <select data-testid="operator-template" onchange={on_template}>
                    { for TEMPLATES.iter().enumerate().map(|(i, t)| html! {
                        <option value={t.file} selected={i == *template}>{ t.title }</option>
                    }) }
                </select>
            </label>
            <textarea
                class="operator-code"
                data-testid="operator-editor"
                aria-label="Operator code (Python)"
                aria-describedby="operator-status"
                spellcheck="false"
                wrap="off"
                rows="18"
                value={(*code).clone().unwrap_or_default()}
                oninput={on_input}
            />
            <div class="operator-actions">
                <button type="button" class="primary" data-testid="operator-run" disabled={!ready} onclick={on_run}>{ "Run" }</button>
                <p id="operator-status" class={classes!("operator-status", state)} role="status" data-testid="operator-status" data-state={state}>{ text }</p>
            </div>
        </section>
    }
}

/// The panel for the app (called through `kubeloop::play::out_of_line`).
pub fn panel(shared: &Rc<Shared>, s: &Snapshot, on_shown: &Callback<Rc<Snapshot>>) -> Html {
    let lesson_operator = s.lesson.as_ref().and_then(|l| l.operator.clone());
    html! { <OperatorPanel shared={shared.clone()} components={s.components.clone()} {lesson_operator} on_shown={on_shown.clone()} /> }
}
