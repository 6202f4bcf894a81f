//! The Kubernetes API's paths and verbs, turned into the simulation's requests.
//!
//! Every request is read whole (at most 3 MiB, as kube-apiserver reads one), checked — media
//! type, body, kind, name and namespace against the path, query — and only then handed to the
//! simulated kube-apiserver through `Sim::submit`, so a bad request changes nothing. Answers are
//! written as kube-apiserver writes them: objects with `apiVersion` and `kind`, lists whose items
//! carry neither, `meta.k8s.io/v1` Tables when asked, and `metav1.Status` for every failure.

// A refusal is carried as the answer itself (`Err(Response)`): one per request, built once and
// sent, so its size next to a `Result`'s happy path costs nothing that matters.
#![allow(clippy::result_large_err)]

use super::body::Body;
use super::discovery;
use super::fields::{self, managers};
use super::filter::Filter;
use super::metrics;
use super::openapi;
use super::patch::{self, PatchType};
use super::proto;
use super::status::{self, api_error, failure, json_response, json_text_response};
use super::table::{self, Include};
use super::watch::Watcher;
use super::Cluster;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::http::request::Parts;
use hyper::{Method, Request, Response};
use kubeloop::api::{ApiError, ApiRequest, ApiResponse, DeleteRequest, ListRequest, Reason};
use kubeloop::command::kubectl::unmodelled;
use kubeloop::command::printers;
use kubeloop::command::sim_verbs::format_sim_time;
use kubeloop::model::{Kind, Object, ObjectKey};
use kubeloop::view::page::percent_decode;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// kube-apiserver's limit on a request body (`MaxRequestBodyBytes`).
pub(crate) const MAX_BODY: usize = 3 * 1024 * 1024;

/// Answers one request.
pub(crate) async fn handle(cluster: Rc<RefCell<Cluster>>, request: Request<Incoming>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let declared = parts.headers.get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY) {
        return too_large();
    }
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => return too_large(),
        Err(e) => return failure(Reason::BadRequest, &format!("error reading the request body: {e}")),
    };
    let mut cluster = cluster.borrow_mut();
    respond(&mut cluster, &parts, &bytes)
}

fn too_large() -> Response<Body> {
    status::status(413, "RequestEntityTooLarge", &format!("Request entity too large: limit is {MAX_BODY}"), None)
}

/// The request's query, decoded.
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(text: Option<&str>) -> Query {
        let pairs = text
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        Query(pairs)
    }
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    pub(crate) fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some("true" | "1"))
    }
}

/// What a resource path names.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) kind: Kind,
    /// The group version the path names (`autoscaling/v1` for an HPA read in the older version).
    pub(crate) api_version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

/// Where a path leads.
#[derive(Debug)]
enum Route {
    Version,
    Health,
    ApiVersions,
    GroupList,
    Group(String),
    Resources(String, String),
    OpenApiV2,
    OpenApiV3(String),
    /// `metrics.k8s.io/v1beta1`'s resources: what follows the group version.
    Metrics(Vec<String>),
    /// kubeloop's own: a `sim` verb from outside (`POST /kubeloop/sim`, the line as the body).
    Sim,
    Resource(Target),
    /// A group version kubeloop serves, with a resource it does not.
    UnknownResource,
    NotFound,
}

fn route(path: &str) -> Route {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["api"] => Route::ApiVersions,
        ["apis"] => Route::GroupList,
        ["apis", group] => Route::Group(group.to_string()),
        ["api", "v1"] => Route::Resources(String::new(), "v1".into()),
        ["apis", group, version] => Route::Resources(group.to_string(), version.to_string()),
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3", rest @ ..] => Route::OpenApiV3(rest.join("/")),
        ["kubeloop", "sim"] => Route::Sim,
        ["apis", discovery::METRICS_GROUP, discovery::METRICS_VERSION, rest @ ..] => {
            Route::Metrics(rest.iter().map(|s| s.to_string()).collect())
        }
        ["api", "v1", rest @ ..] => resource_route("", "v1", rest),
        ["apis", group, version, rest @ ..] => resource_route(group, version, rest),
        _ => Route::NotFound,
    }
}

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Route {
    if !discovery::serves(group, version) {
        return Route::NotFound;
    }
    // `namespaces/NS/RESOURCE…` is inside a namespace; `namespaces/NAME[/SUB]` is the namespace.
    let namespaced = rest.len() >= 3 && rest[0] == "namespaces" && !matches!(rest[2], "status" | "finalize");
    let (namespace, rest) = if namespaced { (Some(rest[1].to_string()), &rest[2..]) } else { (None, rest) };
    let Some(kind) = rest.first().and_then(|plural| discovery::kind_of(group, version, plural)) else {
        return Route::UnknownResource;
    };
    if rest.len() > 3 || (namespace.is_some() && !kind.namespaced()) {
        return Route::UnknownResource;
    }
    let api_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Route::Resource(Target {
        kind,
        api_version,
        namespace,
        name: rest.get(1).map(|s| s.to_string()),
        subresource: rest.get(2).map(|s| s.to_string()),
    })
}

fn respond(cluster: &mut Cluster, parts: &Parts, body: &[u8]) -> Response<Body> {
    let query = Query::parse(parts.uri.query());
    let get = parts.method == Method::GET;
    // The resources CustomResourceDefinitions serve, looked up in the cluster as it is now.
    let defs = cluster.session.sim().api().definitions();
    if let Some(target) = super::custom::route(defs, parts.uri.path()) {
        return super::custom::respond(cluster, parts, &query, &target, body);
    }
    // Discovery is written from the built-in resources and those the definitions serve now.
    let custom = super::custom::resources(defs);
    match route(parts.uri.path()) {
        Route::ApiVersions | Route::GroupList if get && discovery::aggregated_version(header(parts, "accept")).is_some() => {
            aggregated_discovery(parts, &custom)
        }
        Route::GroupList if get => json_response(200, &discovery::group_list(&custom)),
        Route::Group(g) if get => discovery::group(&g, &custom).map_or_else(page_not_found, |v| json_response(200, &v)),
        Route::Resources(g, v) if get => discovery::resource_list(&g, &v, &custom).map_or_else(page_not_found, |v| json_response(200, &v)),
        other => respond_route(cluster, parts, &query, body, other),
    }
}

fn respond_route(cluster: &mut Cluster, parts: &Parts, query: &Query, body: &[u8], route: Route) -> Response<Body> {
    let get = parts.method == Method::GET;
    match route {
        Route::Version if get => json_response(200, &discovery::version()),
        Route::Health => Response::new(Body::full("ok")),
        Route::ApiVersions if get => json_response(200, &discovery::api_versions(&cluster.address)),
        Route::Metrics(rest) if get => {
            let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
            metrics::answer(cluster, &rest, query, header(parts, "accept"))
        }
        Route::OpenApiV2 if get => openapi_v2(header(parts, "accept"), &super::custom::schemas(cluster.session.sim().api())),
        Route::OpenApiV3(path) if get => {
            openapi::v3(&path, &super::custom::schemas(cluster.session.sim().api())).map_or_else(page_not_found, |v| json_response(200, &v))
        }
        Route::Sim if parts.method == Method::POST => sim(cluster, body),
        Route::Resource(target) => {
            // Whatever this request writes is written by its field manager.
            let writer = request_writer(parts, query, &target, managers::Operation::Update);
            cluster.fields.borrow_mut().begin(writer);
            let response = resource(cluster, parts, query, &target, body);
            cluster.fields.borrow_mut().end();
            response
        }
        Route::UnknownResource => failure(Reason::NotFound, "the server could not find the requested resource"),
        Route::NotFound => page_not_found(),
        _ => method_not_allowed(&parts.method),
    }
}

/// `/openapi/v2`: in protobuf when the client prefers it (kubectl does), else in JSON.
fn openapi_v2(accept: &str, custom: &[openapi::CustomSchema]) -> Response<Body> {
    let document = openapi::v2(custom);
    let first = accept.split(',').next().unwrap_or_default().split(';').next().unwrap_or_default().trim();
    if first != super::openapi_proto::ACCEPT {
        return json_response(200, &document);
    }
    Response::builder()
        .header("Content-Type", super::openapi_proto::CONTENT_TYPE)
        .body(Body::full(super::openapi_proto::document(&document)))
        .unwrap_or_else(|_| Response::new(Body::full("")))
}

/// `/api` or `/apis` as an `APIGroupDiscoveryList`, in the version the client prefers.
fn aggregated_discovery(parts: &Parts, custom: &[discovery::Resource]) -> Response<Body> {
    let version = discovery::aggregated_version(header(parts, "accept")).unwrap_or("v2");
    let value = discovery::aggregated(parts.uri.path().trim_end_matches('/') == "/api", version, custom);
    let mut response = json_response(200, &value);
    if let Ok(media) = discovery::aggregated_media_type(version).parse() {
        response.headers_mut().insert("Content-Type", media);
    }
    if let Ok(vary) = "Accept".parse() {
        response.headers_mut().insert("Vary", vary);
    }
    response
}

/// Runs one `sim` line (`sim advance 30s`, `sim stop kube-scheduler` …) as the console would, and
/// answers with what it printed: 200 when it succeeded, 400 when it did not. Only `sim` verbs:
/// kubectl's own requests come through the API.
fn sim(cluster: &mut Cluster, body: &[u8]) -> Response<Body> {
    let line = String::from_utf8_lossy(body).trim().to_string();
    let line = if line.starts_with("sim ") || line == "sim" { line } else { format!("sim {line}") };
    // The clock's own verbs, which the console's page keeps in its engine rather than the session.
    let words: Vec<&str> = line.split_whitespace().collect();
    let speed = match words.as_slice() {
        ["sim", "pause"] => Some(Ok(0.0)),
        ["sim", "resume"] => Some(Ok(1.0)),
        ["sim", "speed", x] => Some(
            x.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or(format!("error: invalid speed {x:?}: must be a number, 0 or more\n")),
        ),
        _ => None,
    };
    if let Some(speed) = speed {
        cluster.rebase_clock();
        return match speed {
            Ok(x) => {
                cluster.clock.speed = x;
                text_response(200, format!("speed {x}\n"))
            }
            Err(e) => text_response(400, e),
        };
    }
    // `advance` steps as the clock does, so that watches hear each change when it happens.
    if let ["sim", "advance", d] = words.as_slice() {
        if let Ok(d) = kubeloop::model::Duration::parse(d) {
            let target = cluster.session.sim().now() + d;
            cluster.advance_to(target);
            cluster.rebase_clock();
            let now = kubeloop::model::Duration(cluster.session.sim().now().0);
            let (d, now) = (format_sim_time(d), format_sim_time(now));
            return text_response(200, format!("advanced {d} to {now}\n"));
        }
    }
    let out = cluster.session.execute(&line);
    if !cluster.session.sim().observes_writes() {
        // `sim seed` started a new simulation: its writes are tracked afresh.
        cluster.fields = fields::track(cluster.session.sim_mut());
    }
    cluster.rebase_clock();
    text_response(if out.ok { 200 } else { 400 }, format!("{}{}", out.stdout, out.stderr))
}

fn text_response(code: u16, text: String) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("Content-Type", "text/plain; charset=utf-8")
        .body(Body::full(text))
        .unwrap_or_else(|_| Response::new(Body::full("")))
}

/// What Go's HTTP mux answers for a path nothing serves.
fn page_not_found() -> Response<Body> {
    Response::builder()
        .status(404)
        .header("Content-Type", "text/plain; charset=utf-8")
        .body(Body::full("404 page not found\n"))
        .unwrap_or_else(|_| Response::new(Body::full("")))
}

fn method_not_allowed(method: &Method) -> Response<Body> {
    status::status(405, "MethodNotAllowed", &format!("the server does not allow this method on the requested resource ({method})"), None)
}

fn resource(cluster: &mut Cluster, parts: &Parts, query: &Query, target: &Target, body: &[u8]) -> Response<Body> {
    if query.get("dryRun").is_some_and(|d| !d.is_empty()) {
        return failure(Reason::BadRequest, "dryRun is not modelled by kubeloop: the request would change the simulated cluster");
    }
    let method = &parts.method;
    let accept = header(parts, "accept");
    if let Some(sub) = target.subresource.as_deref() {
        return subresource(cluster, parts, query, target, sub, body);
    }
    match (method, &target.name) {
        (&Method::GET, None) if query.flag("watch") => watch(cluster, query, target, accept),
        (&Method::GET, None) => list(cluster, query, target, accept),
        (&Method::GET, Some(name)) => get(cluster, query, target, name, accept),
        (&Method::POST, None) => create(cluster, parts, target, body),
        (&Method::PUT, Some(name)) => update(cluster, parts, target, name, body, false),
        (&Method::PATCH, Some(name)) if is_apply(parts) => server_side_apply(cluster, parts, query, target, name, body),
        (&Method::PATCH, Some(name)) => patch_object(cluster, parts, target, name, body),
        (&Method::DELETE, Some(name)) => delete(cluster, parts, query, target, name, body),
        (&Method::DELETE, None) => delete_collection(cluster, query, target),
        _ => method_not_allowed(method),
    }
}

fn header<'a>(parts: &'a Parts, name: &str) -> &'a str {
    parts.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

/// An object as kube-apiserver writes it.
fn wire(object: &Object) -> Value {
    printers::object_json(object)
}

/// An object as kube-apiserver writes it in the version the path names, with its
/// `managedFields`.
pub(crate) fn wire_for(cluster: &Cluster, target: &Target, object: &Object) -> Value {
    let mut value = wire(object);
    cluster.fields.borrow().annotate(object, &mut value);
    as_version(value, &target.api_version)
}

/// The stored version's JSON converted to the one asked for (an older version still served).
pub(crate) fn as_version(value: Value, api_version: &str) -> Value {
    if api_version == kubeloop::model::autoscaling::V1 && value["kind"] == "HorizontalPodAutoscaler" {
        return kubeloop::model::autoscaling::to_v1(value);
    }
    value
}

fn object_response(code: u16, object: &Object, cluster: &Cluster, target: &Target, accept: &str, query: &Query) -> Response<Body> {
    if table::wants_table(accept) {
        let include = match Include::parse(query.get("includeObject")) {
            Ok(i) => i,
            Err(e) => return failure(Reason::BadRequest, &e),
        };
        let meta = json!({"resourceVersion": object.meta().resource_version.to_string()});
        let t = table::table(object.kind(), &[object], cluster.session.sim().now(), include, &meta);
        return json_text_response(code, t);
    }
    json_response(code, &wire_for(cluster, target, object))
}

fn get(cluster: &mut Cluster, query: &Query, target: &Target, name: &str, accept: &str) -> Response<Body> {
    let key = ObjectKey::new(target.kind, target.namespace.as_deref().unwrap_or_default(), name);
    match cluster.session.sim_mut().submit(ApiRequest::Get(key)) {
        Ok(ApiResponse::Object(o)) => object_response(200, &o, cluster, target, accept, query),
        Ok(_) => failure(Reason::InternalError, "unexpected answer"),
        Err(e) => api_error(&e, Some(target.kind), name),
    }
}

fn filter(target: &Target, query: &Query) -> Result<Filter, Response<Body>> {
    Filter::parse(target.kind, target.namespace.clone(), query.get("labelSelector"), query.get("fieldSelector"))
        .map_err(|e| failure(Reason::BadRequest, &e))
}

fn list(cluster: &mut Cluster, query: &Query, target: &Target, accept: &str) -> Response<Body> {
    let filter = match filter(target, query) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let include = match Include::parse(query.get("includeObject")) {
        Ok(i) => i,
        Err(e) => return failure(Reason::BadRequest, &e),
    };
    let request = ListRequest { kind: Some(target.kind), namespace: filter.namespace.clone(), ..Default::default() };
    let (items, revision) = match cluster.session.sim_mut().submit(ApiRequest::List(request)) {
        Ok(ApiResponse::List { items, resource_version }) => (items, resource_version),
        Ok(_) => return failure(Reason::InternalError, "unexpected answer"),
        Err(e) => return api_error(&e, Some(target.kind), ""),
    };
    let admitted: Vec<&Rc<Object>> = items.iter().filter(|o| filter.admits(o)).collect();
    // limit/continue: the continue token is the offset of the next item.
    let start: usize = match query.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => match token.parse() {
            Ok(n) => n,
            Err(_) => {
                return failure(
                    Reason::BadRequest,
                    "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
                )
            }
        },
        None => 0,
    };
    let limit = query.get("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0);
    let end = limit.map_or(admitted.len(), |l| (start + l).min(admitted.len()));
    let page = &admitted[start.min(admitted.len())..end];
    let mut meta = json!({"resourceVersion": revision.to_string()});
    if end < admitted.len() {
        meta["continue"] = end.to_string().into();
        meta["remainingItemCount"] = (admitted.len() - end).into();
    }
    if table::wants_table(accept) {
        let rows: Vec<&Object> = page.iter().map(|o| o.as_ref()).collect();
        return json_text_response(200, table::table(target.kind, &rows, cluster.session.sim().now(), include, &meta));
    }
    let items: Vec<Value> = page
        .iter()
        .map(|o| {
            let mut v = wire_for(cluster, target, o);
            if let Some(m) = v.as_object_mut() {
                m.remove("apiVersion");
                m.remove("kind");
            }
            v
        })
        .collect();
    let info = target.kind.info();
    json_response(200, &json!({"kind": format!("{}List", info.name), "apiVersion": target.api_version, "metadata": meta, "items": items}))
}

fn watch(cluster: &mut Cluster, query: &Query, target: &Target, accept: &str) -> Response<Body> {
    let filter = match filter(target, query) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let table = if table::wants_table(accept) {
        match Include::parse(query.get("includeObject")) {
            Ok(i) => Some(i),
            Err(e) => return failure(Reason::BadRequest, &e),
        }
    } else {
        None
    };
    if let Some(e) = cluster.session.sim().control_plane_refusal().filter(ApiError::is_transport) {
        return api_error(&e, Some(target.kind), "");
    }
    let rv = query.get("resourceVersion").unwrap_or_default();
    let from: Option<u64> = match rv {
        "" | "0" => None,
        text => match text.parse() {
            Ok(n) => Some(n),
            Err(_) => return failure(Reason::BadRequest, &format!("invalid resource version: {text}")),
        },
    };
    let send_initial = query.flag("sendInitialEvents");
    let (tx, rx) = tokio::sync::mpsc::channel(super::watch::BACKLOG);
    let now = Instant::now();
    let timeout = query.get("timeoutSeconds").and_then(|t| t.parse::<u64>().ok()).filter(|t| *t > 0);
    let watcher = Watcher {
        kind: target.kind,
        api_version: target.api_version.clone(),
        filter,
        tx,
        table,
        bookmarks: query.flag("allowWatchBookmarks"),
        deadline: timeout.map(|t| now + Duration::from_secs(t)),
        next_bookmark: now + Duration::from_secs(1),
        custom: None,
    };
    open_watch(cluster, watcher, rx, from, send_initial)
}

/// Opens a watch the simulation delivers (a built-in kind's or a custom resource's) and answers
/// with its stream: from `from`, or the current state first when there is none or the client
/// asked for initial events.
pub(crate) fn open_watch(
    cluster: &mut Cluster,
    watcher: Watcher,
    rx: tokio::sync::mpsc::Receiver<hyper::body::Bytes>,
    from: Option<u64>,
    send_initial: bool,
) -> Response<Body> {
    let sim = cluster.session.sim_mut();
    let revision = sim.api().revision();
    let table = watcher.table;
    let kind = watcher.kind;
    // Without a resourceVersion (or asked to), the watch starts with the current state.
    let initial = from.is_none() || send_initial;
    match sim.open_external_watch(watcher.request(if initial { revision } else { from.unwrap_or(revision) })) {
        Ok(id) => {
            let mut sent = true;
            if initial {
                for o in sim.objects(kind).filter(|o| watcher.admits(o)) {
                    sent = sent && watcher.send_text("ADDED", &watcher.encode(&cluster.fields.borrow(), o, sim.now(), revision));
                }
                if send_initial {
                    sent = sent && watcher.initial_events_end(revision);
                }
            }
            if sent {
                cluster.watchers.insert(id, watcher);
            } else {
                // More than a watch may hold: it ends at once, and the client lists instead.
                sim.close_external_watch(id);
            }
        }
        // A compacted revision: the stream says so and ends, as kube-apiserver's watch does.
        Err(e) if e.reason == Reason::Gone => watcher.gone(&e),
        Err(e) => return api_error(&e, Some(kind), ""),
    }
    // The first events go out with the next tick of the clock; the headers go now, so the client
    // knows the watch is open (client-go waits for them).
    Response::builder()
        .status(200)
        .header("Content-Type", if table.is_some() { "application/json;as=Table;v=v1;g=meta.k8s.io" } else { "application/json" })
        .header("Cache-Control", "no-cache, private")
        .body(Body::Stream(rx))
        .unwrap_or_else(|_| Response::new(Body::full("")))
}

/// The body as JSON (or YAML), checked for a media type kube-apiserver reads.
pub(crate) fn read_body(parts: &Parts, body: &[u8]) -> Result<Value, Response<Body>> {
    let content_type = header(parts, "content-type").split(';').next().unwrap_or_default().trim().to_string();
    match content_type.as_str() {
        "application/json" | "" => serde_json::from_slice(body).map_err(|e| bad_json(&e.to_string())),
        "application/yaml" => {
            let text = std::str::from_utf8(body).map_err(|_| bad_json("invalid UTF-8"))?;
            let mut docs = kubeloop::command::yaml::documents(text).map_err(|e| bad_json(&e))?;
            if docs.len() != 1 {
                return Err(bad_json("expected exactly one YAML document"));
            }
            Ok(docs.remove(0))
        }
        "application/vnd.kubernetes.protobuf" => proto::decode_body(body).map_err(|e| failure(Reason::BadRequest, &e)),
        _ => Err(unsupported_media(&["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"])),
    }
}

fn bad_json(e: &str) -> Response<Body> {
    failure(Reason::BadRequest, &format!("couldn't get version/kind; json parse error: {e}"))
}

fn unsupported_media(types: &[&str]) -> Response<Body> {
    status::status(
        415,
        "UnsupportedMediaType",
        &format!("the body of the request was in an unknown format - accepted media types include: {}", types.join(", ")),
        None,
    )
}

/// Decodes a body as an object of the path's kind, in the path's namespace.
/// An object decoded from a body, and the warnings kubectl relays for it.
struct Decoded {
    object: Object,
    /// The fields kubeloop reads but does not simulate, as the console names them
    /// (`kubectl::unmodelled`), sent as `Warning` headers.
    warnings: Vec<String>,
}

fn decode(target: &Target, mut value: Value) -> Result<Decoded, Response<Body>> {
    let info = target.kind.info();
    // managedFields are the field manager's (`fields`), read before decoding, never a model's
    // field: a client that writes back what it read is not warned about them.
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
    if !value.is_object() {
        return Err(bad_json("the body is not a JSON object"));
    }
    if api_version.is_empty() || kind.is_empty() {
        // kube-apiserver defaults a missing group version and kind from the path.
        value["apiVersion"] = target.api_version.clone().into();
        value["kind"] = info.name.into();
    } else if api_version != target.api_version {
        let message =
            format!("the API version in the data ({api_version}) does not match the expected API version ({})", target.api_version);
        return Err(failure(Reason::BadRequest, &message));
    } else if kind != info.name {
        return Err(failure(
            Reason::BadRequest,
            &format!("the kind in the data ({kind}) does not match the expected kind ({})", info.name),
        ));
    }
    let body_namespace = value.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default().to_string();
    if let Some(ns) = &target.namespace {
        if !body_namespace.is_empty() && body_namespace != *ns {
            return Err(failure(
                Reason::BadRequest,
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("namespace".into(), ns.clone().into());
        } else {
            value["metadata"] = json!({"namespace": ns});
        }
    } else if target.kind.namespaced() {
        return Err(failure(Reason::BadRequest, "the namespace of the object is missing from the request path"));
    }
    let object = Object::from_json(value.clone()).map_err(|e| {
        // As the console's kubectl words the API server's refusal to decode (`kubectl::apply`).
        let detail = e.split_once(": ").map_or(e.as_str(), |(_, d)| d);
        let version = info.version();
        failure(Reason::BadRequest, &format!("{} in version {version:?} cannot be handled as a {}: {detail}", info.name, info.name))
    })?;
    // Fields are judged in the stored version (an autoscaling/v1 CPU target is a v2 metric).
    let stored = if target.api_version == info.api_version { value } else { kubeloop::model::autoscaling::from_v1(value) };
    let mut warnings = unmodelled::warnings(&stored, &wire(&object));
    warnings.extend(unmodelled::approximations(&object));
    Ok(Decoded { object, warnings })
}

fn submit_write(cluster: &mut Cluster, request: ApiRequest, target: &Target, name: &str, code: u16, warnings: &[String]) -> Response<Body> {
    submit_then(cluster, request, target, name, code, warnings, |_, _| {})
}

/// A write, then `settle` with the object as it is if the write succeeded (before the answer is
/// written, so the answer shows what settling changed).
fn submit_then(
    cluster: &mut Cluster,
    request: ApiRequest,
    target: &Target,
    name: &str,
    code: u16,
    warnings: &[String],
    settle: impl FnOnce(&mut fields::Tracker, &Object),
) -> Response<Body> {
    let result = cluster.session.sim_mut().submit(request);
    if let Ok(ApiResponse::Object(o)) = &result {
        let key = o.key();
        if let Some(stored) = cluster.session.sim().api().get(&key) {
            settle(&mut cluster.fields.borrow_mut(), stored);
        }
    }
    let mut response = match result {
        Ok(ApiResponse::Object(o)) => json_response(code, &wire_for(cluster, target, &o)),
        Ok(_) => success(code),
        Err(e) => return api_error(&e, Some(target.kind), name),
    };
    for warning in warnings {
        // `Warning: 299 - "text"`, which kubectl prints as `Warning: text`.
        let text = warning.strip_prefix("Warning: ").unwrap_or(warning);
        let quoted = serde_json::to_string(text).unwrap_or_default();
        if let Ok(value) = hyper::header::HeaderValue::from_str(&format!("299 - {quoted}")) {
            response.headers_mut().append("Warning", value);
        }
    }
    response
}

fn success(code: u16) -> Response<Body> {
    json_response(code, &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}))
}

fn create(cluster: &mut Cluster, parts: &Parts, target: &Target, body: &[u8]) -> Response<Body> {
    let Decoded { object, warnings } = match read_body(parts, body).and_then(|v| decode(target, v)) {
        Ok(d) => d,
        Err(r) => return r,
    };
    let name = object.meta().name.to_string();
    submit_write(cluster, ApiRequest::Create(object), target, &name, 201, &warnings)
}

fn check_name(object: &Object, name: &str) -> Result<(), Response<Body>> {
    let in_body = object.meta().name.to_string();
    if in_body != name {
        let message = format!("the name of the object ({in_body}) does not match the name on the URL ({name})");
        return Err(failure(Reason::BadRequest, &message));
    }
    Ok(())
}

fn update(cluster: &mut Cluster, parts: &Parts, target: &Target, name: &str, body: &[u8], status: bool) -> Response<Body> {
    let value = match read_body(parts, body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    write_value(cluster, target, name, value, status)
}

/// Writes a PUT's body or a patch's result: the managedFields it sets (not on `status`), decoded
/// as the target's kind, then stored.
fn write_value(cluster: &mut Cluster, target: &Target, name: &str, value: Value, status: bool) -> Response<Body> {
    let given = if status { None } else { given_managed_fields(cluster, target, name, &value) };
    let Decoded { object, warnings } = match decode(target, value) {
        Ok(d) => d,
        Err(r) => return r,
    };
    write_given(cluster, target, name, object, &warnings, status, given)
}

/// The `managedFields` a write to the main resource sets, if it sets any (`Tracker::read_given`).
fn given_managed_fields(cluster: &Cluster, target: &Target, name: &str, written: &Value) -> Option<fields::Given> {
    let key = ObjectKey::new(target.kind, target.namespace.as_deref().unwrap_or_default(), name);
    let current = cluster.session.sim().api().get(&key)?;
    cluster.fields.borrow().read_given(current, written, cluster.session.sim().now())
}

/// An update that may set the object's `managedFields` too.
fn write_given(
    cluster: &mut Cluster,
    target: &Target,
    name: &str,
    object: Object,
    warnings: &[String],
    status: bool,
    given: Option<fields::Given>,
) -> Response<Body> {
    let Some(given) = given else { return write_update(cluster, target, name, object, warnings, status) };
    if let Err(r) = check_name(&object, name) {
        return r;
    }
    cluster.fields.borrow_mut().begin_given(given);
    // An update that changed no field wrote nothing, yet its managed fields are the client's.
    submit_then(cluster, ApiRequest::Update(object), target, name, 200, warnings, |t, o| t.settle_given(o))
}

/// An update (or a status update) of `name` with the decoded object: PUT and PATCH end here.
fn write_update(cluster: &mut Cluster, target: &Target, name: &str, object: Object, warnings: &[String], status: bool) -> Response<Body> {
    if let Err(r) = check_name(&object, name) {
        return r;
    }
    let request = if status { ApiRequest::UpdateStatus(object) } else { ApiRequest::Update(object) };
    submit_write(cluster, request, target, name, 200, if status { &[] } else { warnings })
}

/// The object a request names, or the failure to answer.
pub(crate) fn current(cluster: &mut Cluster, target: &Target, name: &str) -> Result<Rc<Object>, Response<Body>> {
    let key = ObjectKey::new(target.kind, target.namespace.as_deref().unwrap_or_default(), name);
    match cluster.session.sim_mut().submit(ApiRequest::Get(key)) {
        Ok(ApiResponse::Object(o)) => Ok(o),
        Ok(_) => Err(failure(Reason::InternalError, "unexpected answer")),
        Err(e) => Err(api_error(&e, Some(target.kind), name)),
    }
}

/// A PATCH body applied to a JSON document.
pub(crate) fn patched(parts: &Parts, body: &[u8], object: Kind, document: &Value) -> Result<Value, Response<Body>> {
    // Server-side apply is served on the main resource only (`server_side_apply`); on a
    // subresource it is refused as the other unsupported types are.
    let Some(kind) = PatchType::from_content_type(header(parts, "content-type")).filter(|k| *k != PatchType::Apply) else {
        return Err(unsupported_media(&[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
        ]));
    };
    let patch: Value = serde_json::from_slice(body).map_err(|e| failure(Reason::BadRequest, &format!("error decoding patch: {e}")))?;
    patch::apply(kind, object, document, &patch).map_err(|e| failure(Reason::BadRequest, &e))
}

fn patch_object(cluster: &mut Cluster, parts: &Parts, target: &Target, name: &str, body: &[u8]) -> Response<Body> {
    patch_with(cluster, parts, target, name, body, false)
}

fn patch_with(cluster: &mut Cluster, parts: &Parts, target: &Target, name: &str, body: &[u8], status: bool) -> Response<Body> {
    let current = match current(cluster, target, name) {
        Ok(o) => o,
        Err(r) => return r,
    };
    // The document patched has the object's managedFields, which a patch may set.
    let value = match patched(parts, body, target.kind, &wire_for(cluster, target, &current)) {
        Ok(v) => v,
        Err(r) => return r,
    };
    write_value(cluster, target, name, value, status)
}

/// Who a request writes as: its `fieldManager`, or its User-Agent's product name.
fn request_writer(parts: &Parts, query: &Query, target: &Target, operation: managers::Operation) -> managers::Writer {
    managers::Writer {
        manager: fields::manager_of(query.get("fieldManager"), header(parts, "user-agent")),
        operation,
        api_version: target.api_version.clone(),
        subresource: target.subresource.clone().unwrap_or_default(),
    }
}

fn is_apply(parts: &Parts) -> bool {
    PatchType::from_content_type(header(parts, "content-type")) == Some(PatchType::Apply)
}

/// Server-side apply (`PATCH` with `application/apply-patch+yaml`): the configuration merged into
/// the live object (or creating it) by its field manager, conflicts refused unless `force`, then
/// written through the simulated API server like any other write, with the entries the apply
/// computed.
fn server_side_apply(cluster: &mut Cluster, parts: &Parts, query: &Query, target: &Target, name: &str, body: &[u8]) -> Response<Body> {
    if query.get("fieldManager").is_none_or(str::is_empty) {
        let details = json!({"group": "meta.k8s.io", "kind": "PatchOptions",
            "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]});
        let message = "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch";
        return status::status(422, "Invalid", message, Some(details));
    }
    let config = match apply_configuration(target, body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let key = ObjectKey::new(target.kind, target.namespace.as_deref().unwrap_or_default(), name);
    let live = match current(cluster, target, name) {
        Ok(o) => Some(o),
        // Absent: the apply creates it.
        Err(_) if cluster.session.sim().api().get(&key).is_none() => None,
        Err(r) => return r,
    };
    let live_json = live.as_ref().map(|o| as_version(wire(o), &target.api_version));
    let entries = live.as_ref().map(|o| cluster.fields.borrow().entries(o).to_vec()).unwrap_or_default();
    let writer = request_writer(parts, query, target, managers::Operation::Apply);
    let now = cluster.session.sim().now();
    let (merged, entries) = match managers::apply(target.kind, &entries, live_json.as_ref(), &config, &writer, query.flag("force"), now) {
        Ok(done) => done,
        Err(conflicts) => {
            let (message, causes) = managers::conflict_status(&conflicts);
            return status::status(409, "Conflict", &message, Some(json!({"causes": causes})));
        }
    };
    let Decoded { object, warnings } = match decode(target, merged) {
        Ok(d) => d,
        Err(r) => return r,
    };
    if let Err(r) = check_name(&object, name) {
        return r;
    }
    cluster.fields.borrow_mut().begin_apply(writer, entries);
    // An apply that changed no field writes nothing, yet its ownership may have changed; a
    // refused one changes nothing.
    let (request, code) = if live.is_none() { (ApiRequest::Create(object), 201) } else { (ApiRequest::Update(object), 200) };
    submit_then(cluster, request, target, name, code, &warnings, |t, o| t.settle_apply(o))
}

/// An apply patch's body (JSON or YAML), checked as kube-apiserver checks one.
fn apply_configuration(target: &Target, body: &[u8]) -> Result<Value, Response<Body>> {
    apply_configuration_of(body, &target.api_version, target.kind.info().name)
}

/// An apply patch's body for a resource of this group version and kind.
pub(crate) fn apply_configuration_of(body: &[u8], api_version: &str, expected_kind: &str) -> Result<Value, Response<Body>> {
    let config: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(body).map_err(|_| failure(Reason::BadRequest, "error decoding YAML: invalid UTF-8"))?;
            let mut docs =
                kubeloop::command::yaml::documents(text).map_err(|e| failure(Reason::BadRequest, &format!("error decoding YAML: {e}")))?;
            if docs.len() != 1 {
                return Err(failure(Reason::BadRequest, "error decoding YAML: expected exactly one YAML document"));
            }
            docs.remove(0)
        }
    };
    if !config.is_object() {
        return Err(failure(Reason::BadRequest, "error decoding YAML: the body is not an object"));
    }
    let version = config.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    if version != api_version {
        let message = format!("Incorrect version specified in apply patch. Specified patch version: {version}, expected: {api_version}");
        return Err(failure(Reason::BadRequest, &message));
    }
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or_default();
    if kind != expected_kind {
        let message = format!("the kind in the data ({kind}) does not match the expected kind ({expected_kind})");
        return Err(failure(Reason::BadRequest, &message));
    }
    if config.pointer("/metadata/managedFields").is_some_and(|m| !m.is_null()) {
        return Err(failure(Reason::BadRequest, "metadata.managedFields must be nil"));
    }
    Ok(config)
}

/// `DeleteOptions` from the body and the query.
fn delete_request(target: &Target, name: &str, query: &Query, options: &Value) -> Result<DeleteRequest, Response<Body>> {
    if !options.is_object() {
        return Err(failure(Reason::BadRequest, "error decoding DeleteOptions: expected an object"));
    }
    if let Some(kind) = options.get("kind").and_then(Value::as_str).filter(|k| *k != "DeleteOptions") {
        return Err(failure(Reason::BadRequest, &format!("the body of the request is a {kind}, not DeleteOptions")));
    }
    let mut request = DeleteRequest::new(ObjectKey::new(target.kind, target.namespace.as_deref().unwrap_or_default(), name));
    let from_query = match query.get("gracePeriodSeconds") {
        Some(text) => Some(text.parse::<i64>().map_err(|_| {
            failure(
                Reason::BadRequest,
                &format!("gracePeriodSeconds: Invalid value: {text:?}: strconv.ParseInt: parsing {text:?}: invalid syntax"),
            )
        })?),
        None => None,
    };
    let grace = options.get("gracePeriodSeconds").and_then(Value::as_i64).or(from_query);
    request.grace_period_seconds = grace;
    request.uid = options.pointer("/preconditions/uid").and_then(Value::as_str).map(str::to_string);
    let policy = options.get("propagationPolicy").and_then(Value::as_str).or(query.get("propagationPolicy"));
    if let Some(p) = policy.filter(|p| *p != "Background") {
        let message =
            format!("propagationPolicy {p} is not modelled by kubeloop: its garbage collector deletes dependents in the background only");
        return Err(failure(Reason::BadRequest, &message));
    }
    Ok(request)
}

fn delete(cluster: &mut Cluster, parts: &Parts, query: &Query, target: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let options = if body.is_empty() { Ok(json!({})) } else { read_body(parts, body) };
    match options.and_then(|options| delete_request(target, name, query, &options)) {
        Ok(request) => submit_write(cluster, ApiRequest::Delete(request), target, name, 200, &[]),
        Err(r) => r,
    }
}

fn delete_collection(cluster: &mut Cluster, query: &Query, target: &Target) -> Response<Body> {
    if target.kind == Kind::Namespace {
        return method_not_allowed(&Method::DELETE);
    }
    let filter = match filter(target, query) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let info = target.kind.info();
    let whole_namespace = target.namespace.is_some() && query.get("labelSelector").is_none() && query.get("fieldSelector").is_none();
    let (items, revision) =
        if whole_namespace || !target.kind.namespaced() && filter.labels.is_none() && query.get("fieldSelector").is_none() {
            let request = ApiRequest::DeleteCollection { kind: target.kind, namespace: target.namespace.clone().unwrap_or_default() };
            match cluster.session.sim_mut().submit(request) {
                Ok(ApiResponse::List { items, resource_version }) => (items, resource_version),
                Ok(_) => (Vec::new(), cluster.session.sim().api().revision()),
                Err(e) => return api_error(&e, Some(target.kind), ""),
            }
        } else {
            // Across namespaces or by selector: the objects the filter admits, deleted one by one, as
            // the registry's deletecollection deletes each it lists.
            let keys: Vec<ObjectKey> = cluster.session.sim().objects(target.kind).filter(|o| filter.admits(o)).map(|o| o.key()).collect();
            let mut left = Vec::new();
            for key in keys {
                match cluster.session.sim_mut().submit(ApiRequest::Delete(DeleteRequest::new(key.clone()))) {
                    Ok(_) | Err(ApiError { reason: Reason::NotFound, .. }) => {}
                    Err(e) => return api_error(&e, Some(target.kind), &key.name),
                }
                if let Some(o) = cluster.session.sim().api().get(&key) {
                    left.push(o.clone());
                }
            }
            (left, cluster.session.sim().api().revision())
        };
    let items: Vec<Value> = items.iter().map(|o| wire_for(cluster, target, o)).collect();
    json_response(
        200,
        &json!({"kind": format!("{}List", info.name), "apiVersion": info.api_version,
        "metadata": {"resourceVersion": revision.to_string()}, "items": items}),
    )
}

fn subresource(cluster: &mut Cluster, parts: &Parts, query: &Query, target: &Target, sub: &str, body: &[u8]) -> Response<Body> {
    let Some(name) = target.name.as_deref() else { return failure(Reason::NotFound, "the server could not find the requested resource") };
    let method = &parts.method;
    let accept = header(parts, "accept");
    match (target.kind, sub, method) {
        (_, "status", &Method::GET) => get(cluster, query, target, name, accept),
        (_, "status", &Method::PUT) => update(cluster, parts, target, name, body, true),
        (_, "status", &Method::PATCH) => patch_with(cluster, parts, target, name, body, true),
        (kind, "scale", _) if discovery::has_scale(kind) => super::scale::handle(cluster, parts, target, name, body),
        (Kind::Pod, "binding", &Method::POST) => bind(cluster, parts, target, name, body),
        (Kind::Pod, "eviction", &Method::POST) => evict(cluster, parts, query, target, name, body),
        (Kind::Pod, "log", &Method::GET) => super::logs::answer(cluster, query, target, name),
        (Kind::Pod, "exec" | "attach" | "portforward", _) => failure(
            Reason::BadRequest,
            &format!("kubeloop simulates containers and does not run them: pods/{sub} is not available in a simulated cluster"),
        ),
        (Kind::Namespace, "finalize", &Method::PUT) => match read_body(parts, body).and_then(|v| decode(target, v)) {
            Ok(d) => submit_write(cluster, ApiRequest::Finalize(d.object), target, name, 200, &[]),
            Err(r) => r,
        },
        (_, "status" | "scale" | "binding" | "eviction" | "log" | "finalize", _) => method_not_allowed(method),
        _ => failure(Reason::NotFound, "the server could not find the requested resource"),
    }
}

fn bind(cluster: &mut Cluster, parts: &Parts, target: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let binding = match read_body(parts, body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some(node) = binding.pointer("/target/name").and_then(Value::as_str).filter(|n| !n.is_empty()) else {
        return failure(Reason::BadRequest, "Binding.target.name: Required value");
    };
    let pod = ObjectKey::new(Kind::Pod, target.namespace.as_deref().unwrap_or_default(), name);
    match cluster.session.sim_mut().submit(ApiRequest::Bind { pod, node: node.to_string() }) {
        Ok(_) => success(201),
        Err(e) => api_error(&e, Some(Kind::Pod), name),
    }
}

fn evict(cluster: &mut Cluster, parts: &Parts, query: &Query, target: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let eviction = match read_body(parts, body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let options = eviction.get("deleteOptions").cloned().unwrap_or(json!({}));
    match delete_request(target, name, query, &options) {
        Ok(request) => match cluster.session.sim_mut().submit(ApiRequest::Evict(request)) {
            Ok(_) => success(201),
            Err(e) => api_error(&e, Some(Kind::Pod), name),
        },
        Err(r) => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode_as_go_reads_them() {
        let q = Query::parse(Some("labelSelector=app%3Dweb%2Ctier+in+%28a%29&limit=500&watch=1&bad=%zz"));
        assert_eq!(q.get("labelSelector"), Some("app=web,tier in (a)"));
        assert_eq!(q.get("limit"), Some("500"));
        assert!(q.flag("watch"));
        assert_eq!(q.get("bad"), Some("%zz"));
    }

    #[test]
    fn paths_route_to_kinds_namespaces_and_subresources() {
        let Route::Resource(t) = route("/api/v1/namespaces/default/pods/web/status") else { panic!() };
        assert_eq!(
            (t.kind, t.namespace.as_deref(), t.name.as_deref(), t.subresource.as_deref()),
            (Kind::Pod, Some("default"), Some("web"), Some("status"))
        );
        let Route::Resource(t) = route("/api/v1/namespaces/kube-system") else { panic!() };
        assert_eq!((t.kind, t.name.as_deref()), (Kind::Namespace, Some("kube-system")));
        let Route::Resource(t) = route("/api/v1/namespaces/x/finalize") else { panic!() };
        assert_eq!((t.kind, t.subresource.as_deref()), (Kind::Namespace, Some("finalize")));
        let Route::Resource(t) = route("/apis/apps/v1/deployments") else { panic!() };
        assert_eq!((t.kind, t.namespace), (Kind::Deployment, None));
        assert!(matches!(route("/api/v1/widgets"), Route::UnknownResource));
        assert!(matches!(route("/api/v1/namespaces/default/nodes/x"), Route::UnknownResource));
        assert!(matches!(route("/apis/nope/v1/x"), Route::NotFound));
        assert!(matches!(route("/nothing"), Route::NotFound));
    }
}
