//! `kubeloop serve` at the HTTP level, with no client in between: what kube-apiserver answers
//! to bad input (and that it changes nothing), objects as it writes them, lists in pages,
//! watches and their 410 after compaction, and a seeded run of malformed requests the server
//! survives.

#[path = "support/serve.rs"]
mod serve;

use serde_json::{json, Value};
use serve::Server;

fn paused() -> Server {
    let server = Server::start(&["--seed", "3", "--speed", "0"]);
    server.sim("advance 30s");
    server
}

fn get_json(server: &Server, path: &str) -> Value {
    let (code, body) = server.http("GET", path, &[], b"");
    assert_eq!(code, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

/// etcd's revision, as a list reports it.
fn revision(server: &Server) -> String {
    get_json(server, "/api/v1/pods")["metadata"]["resourceVersion"].as_str().unwrap().to_string()
}

fn status(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// A request (method, path, headers, body) and the code and reason it must get.
type Case<'a> = (&'a str, String, Vec<(&'a str, &'a str)>, Vec<u8>, u16, &'a str);

#[test]
fn bad_requests_get_kube_apiservers_answer_and_change_nothing() {
    let server = paused();
    let before = revision(&server);
    let pod =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let json_type = [("Content-Type", "application/json")];
    let cases: Vec<Case> = vec![
        ("POST", "/api/v1/namespaces/default/pods".into(), json_type.to_vec(), b"{not json".to_vec(), 400, "BadRequest"),
        ("POST", "/api/v1/namespaces/default/services".into(), json_type.to_vec(), pod.to_string().into_bytes(), 400, "BadRequest"),
        (
            "POST",
            "/apis/apps/v1/namespaces/default/deployments".into(),
            json_type.to_vec(),
            pod.to_string().into_bytes(),
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/namespaces/kube-system/pods".into(),
            json_type.to_vec(),
            {
                let mut p = pod.clone();
                p["metadata"]["namespace"] = "default".into();
                p.to_string().into_bytes()
            },
            400,
            "BadRequest",
        ),
        ("PUT", "/api/v1/namespaces/default/pods/other".into(), json_type.to_vec(), pod.to_string().into_bytes(), 400, "BadRequest"),
        (
            "POST",
            "/api/v1/namespaces/default/pods".into(),
            vec![("Content-Type", "application/vnd.kubernetes.protobuf")],
            b"\x6b\x38\x73\x00\x0a\xff".to_vec(),
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods".into(),
            vec![("Content-Type", "text/plain")],
            pod.to_string().into_bytes(),
            415,
            "UnsupportedMediaType",
        ),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/web".into(),
            json_type.to_vec(),
            b"{}".to_vec(),
            415,
            "UnsupportedMediaType",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods".into(),
            json_type.to_vec(),
            vec![b' '; 3 * 1024 * 1024 + 1],
            413,
            "RequestEntityTooLarge",
        ),
        ("GET", "/api/v1/widgets".into(), vec![], vec![], 404, "NotFound"),
        ("GET", "/api/v1/pods?labelSelector=app%20in%20(a".into(), vec![], vec![], 400, "BadRequest"),
        ("GET", "/api/v1/pods?fieldSelector=spec.nope%3Dx".into(), vec![], vec![], 400, "BadRequest"),
        ("GET", "/api/v1/namespaces/default/pods/nope".into(), vec![], vec![], 404, "NotFound"),
        (
            "POST",
            "/api/v1/namespaces/default/pods".into(),
            json_type.to_vec(),
            {
                let mut p = pod.clone();
                p["spec"]["containers"][0]["image"] = "".into();
                p.to_string().into_bytes()
            },
            422,
            "Invalid",
        ),
        (
            "DELETE",
            "/apis/apps/v1/namespaces/default/deployments/web".into(),
            json_type.to_vec(),
            br#"{"propagationPolicy":"Orphan"}"#.to_vec(),
            400,
            "BadRequest",
        ),
        ("POST", "/api/v1/namespaces/default/pods/x/exec".into(), vec![], vec![], 400, "BadRequest"),
    ];
    for (method, path, headers, body, code, reason) in cases {
        let (got, text) = server.http(method, &path, &headers, &body);
        assert_eq!(got, code, "{method} {path}: {text}");
        let s = status(&text);
        assert_eq!(
            (s["kind"].as_str(), s["status"].as_str(), s["reason"].as_str(), s["code"].as_u64()),
            (Some("Status"), Some("Failure"), Some(reason), Some(u64::from(code))),
            "{method} {path}: {text}"
        );
        assert!(s["message"].as_str().is_some_and(|m| !m.is_empty()), "{text}");
    }
    assert_eq!(revision(&server), before, "no bad request wrote anything");
    // A path nothing serves is Go's mux's plain 404.
    assert_eq!(server.http("GET", "/nothing", &[], b""), (404, "404 page not found\n".into()));
}

#[test]
fn invalid_objects_name_their_fields_as_kubectl_reads_them() {
    let server = paused();
    let body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bad"},
        "spec": {"replicas": -1, "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let (code, text) = server.http(
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    );
    assert_eq!(code, 422, "{text}");
    let s = status(&text);
    assert_eq!(s["details"]["kind"], "Deployment");
    assert_eq!(s["details"]["group"], "apps");
    assert_eq!(s["details"]["name"], "bad");
    assert_eq!(
        s["details"]["causes"][0],
        json!({"reason": "FieldValueInvalid", "field": "spec.replicas", "message": "Invalid value: -1: must be greater than or equal to 0"})
    );
}

#[test]
fn objects_and_lists_are_written_as_kube_apiserver_writes_them() {
    let server = paused();
    let list = get_json(&server, "/api/v1/namespaces/default/pods");
    assert_eq!((list["kind"].as_str(), list["apiVersion"].as_str()), (Some("PodList"), Some("v1")));
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    for item in items {
        assert!(item.get("kind").is_none() && item.get("apiVersion").is_none(), "a typed list's items carry no kind");
        let meta = &item["metadata"];
        assert!(meta["resourceVersion"].is_string() && meta["uid"].as_str().is_some_and(|u| u.len() == 36), "{meta}");
        let created = meta["creationTimestamp"].as_str().unwrap();
        assert!(created.len() == 20 && created.ends_with('Z') && &created[10..11] == "T", "RFC 3339: {created}");
    }
    let name = items[0]["metadata"]["name"].as_str().unwrap();
    let pod = get_json(&server, &format!("/api/v1/namespaces/default/pods/{name}"));
    assert_eq!((pod["kind"].as_str(), pod["apiVersion"].as_str()), (Some("Pod"), Some("v1")));
    let table_accept = [("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")];
    let (code, text) = server.http("GET", "/api/v1/namespaces/default/pods", &table_accept, b"");
    assert_eq!(code, 200);
    let table = status(&text);
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["columnDefinitions"][0]["name"], "NAME");
    assert_eq!(table["rows"].as_array().unwrap().len(), 3);
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn lists_page_with_limit_and_continue() {
    let server = paused();
    let all: Vec<Value> = get_json(&server, "/api/v1/pods")["items"].as_array().unwrap().clone();
    assert!(all.len() >= 3, "{}", all.len());
    let mut seen = Vec::new();
    let mut path = "/api/v1/pods?limit=2".to_string();
    loop {
        let page = get_json(&server, &path);
        seen.extend(page["items"].as_array().unwrap().iter().cloned());
        match page["metadata"]["continue"].as_str() {
            Some(token) => {
                assert!(page["metadata"]["remainingItemCount"].as_u64().is_some_and(|n| n > 0));
                path = format!("/api/v1/pods?limit=2&continue={token}");
            }
            None => break,
        }
    }
    assert_eq!(seen, all);
}

#[test]
fn a_watch_hears_a_write_and_a_compacted_revision_is_gone() {
    let server = paused();
    let rv = revision(&server);
    let address = server.address.clone();
    let watching = std::thread::spawn(move || {
        let s = Server::connect(&address);
        s.http("GET", &format!("/api/v1/namespaces/default/pods?watch=true&resourceVersion={rv}&timeoutSeconds=2"), &[], b"")
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "watched"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let (code, text) =
        server.http("POST", "/api/v1/namespaces/default/pods", &[("Content-Type", "application/json")], pod.to_string().as_bytes());
    assert_eq!(code, 201, "{text}");
    // The notification travels with the simulation's watch latency, as a component's does: on a
    // paused server it arrives once simulated time moves.
    server.sim("advance 1s");
    let (code, body) = watching.join().unwrap();
    assert_eq!(code, 200);
    let events: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Created, then scheduled and started within the second.
    assert!(events.len() > 1 && events.iter().all(|e| e["object"]["metadata"]["name"] == "watched"), "{body}");
    assert_eq!((events[0]["type"].as_str(), events[0]["object"]["metadata"]["name"].as_str()), (Some("ADDED"), Some("watched")));
    assert!(events[1..].iter().all(|e| e["type"] == "MODIFIED"), "{body}");
    // etcd compacts every 5 minutes to the revision of the previous pass: 11 minutes on, the
    // revision the watch started from is gone.
    server.sim("advance 11m");
    let (code, body) = server.http("GET", "/api/v1/pods?watch=1&resourceVersion=2", &[], b"");
    assert_eq!(code, 200);
    let event: Value = serde_json::from_str(body.lines().next().unwrap_or_default()).unwrap();
    assert_eq!(event["type"], "ERROR");
    assert_eq!((event["object"]["code"].as_u64(), event["object"]["reason"].as_str()), (Some(410), Some("Gone")));
    assert!(event["object"]["message"].as_str().unwrap().starts_with("too old resource version: 2 ("), "{event}");
}

#[test]
fn deletecollection_by_selector_deletes_only_what_it_selects() {
    let server = paused();
    let pod = |name: &str, app: &str| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    for (name, app) in [("a", "x"), ("b", "y")] {
        let (code, text) = server.http(
            "POST",
            "/api/v1/namespaces/default/pods",
            &[("Content-Type", "application/json")],
            pod(name, app).to_string().as_bytes(),
        );
        assert_eq!(code, 201, "{text}");
    }
    let (code, text) = server.http("DELETE", "/api/v1/pods?labelSelector=app%3Dx", &[], b"");
    assert_eq!(code, 200, "{text}");
    // The pod selected is gone (never bound to a node, it needs no grace period), the other untouched.
    assert_eq!(server.http("GET", "/api/v1/namespaces/default/pods/a", &[], b"").0, 404);
    let b = get_json(&server, "/api/v1/namespaces/default/pods/b");
    assert!(b["metadata"].get("deletionTimestamp").is_none(), "{b}");
    let web = get_json(&server, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb");
    assert!(web["items"].as_array().unwrap().iter().all(|p| p["metadata"].get("deletionTimestamp").is_none()));
}

/// A seeded storm of malformed requests: every one is answered, a refused one changes nothing, and
/// the server still serves afterwards.
#[test]
fn the_server_survives_malformed_requests() {
    let server = paused();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let methods = ["GET", "POST", "PUT", "PATCH", "DELETE"];
    let paths = [
        "/api/v1/namespaces/default/pods",
        "/api/v1/namespaces/default/pods/%ff%00",
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        "/api/v1/namespaces//pods",
        "/apis/apps/v1/namespaces/default/deployments/web/status",
        "/api/v1/nodes/node-1",
        "/api/v1/pods?watch=true&resourceVersion=abc",
        "/api/v1/pods?limit=-1&continue=zz",
        "/api/v1/namespaces/default/pods/x/binding",
        "/api/v1/namespaces/default/pods/x/eviction",
        "/apis/apps/v1/namespaces/default/deployments/web?gracePeriodSeconds=x",
        "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=storm&force=true",
        "/apis",
        "/openapi/v3/apis/nope/v1",
    ];
    let types = [
        "application/json",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "text/plain",
        "application/yaml",
        "application/apply-patch+yaml",
    ];
    let bodies: [&[u8]; 10] = [
        b"",
        b"{",
        b"[]",
        b"null",
        b"{\"kind\":\"Pod\"}",
        b"[{\"op\":\"move\"}]",
        b"{\"spec\":{\"replicas\":\"x\"}}",
        b"\xff\xfe",
        br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":-1}}"#,
        br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":[1]},"spec":{"template":{"spec":{"containers":[{"name":5},{}]}}}}"#,
    ];
    for _ in 0..300 {
        let (method, path, content_type, body) =
            (methods[next(5)], paths[next(paths.len())], types[next(types.len())], bodies[next(bodies.len())]);
        let collection = path.split('?').next().is_some_and(|p| p.ends_with("/pods"));
        if (method == "GET" && path.contains("watch=true")) || (method == "DELETE" && collection) {
            // A watch waits for changes; a DELETE of a collection is a deletecollection.
            continue;
        }
        let before = revision(&server);
        let (code, text) = server.http(method, path, &[("Content-Type", content_type)], body);
        assert!((200..600).contains(&code), "{method} {path} ({content_type}, {body:?}): no answer: {text:?}");
        if code >= 400 {
            assert_eq!(revision(&server), before, "{method} {path} ({content_type}, {body:?}) was refused ({code}) yet wrote");
            if text != "404 page not found\n" {
                assert_eq!(status(&text)["code"].as_u64(), Some(u64::from(code)), "{text}");
            }
        }
    }
    // Every body as a server-side apply, forced, of the Deployment and of a pod that is not there.
    for path in [
        "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=storm&force=true",
        "/api/v1/namespaces/default/pods/x?fieldManager=storm",
    ] {
        for body in bodies {
            let before = revision(&server);
            let (code, text) = server.http("PATCH", path, &[("Content-Type", "application/apply-patch+yaml")], body);
            assert!((400..500).contains(&code), "apply {path} ({body:?}): {code} {text:?}");
            assert_eq!(revision(&server), before, "apply {path} ({body:?}) was refused ({code}) yet wrote");
        }
    }
    assert_eq!(get_json(&server, "/version")["gitVersion"], "v1.32.0");
}

/// `--kubeconfig` writes a kubeconfig whose context `kubeloop` reaches the server, with no other
/// flag; Ctrl-C (SIGINT) stops the server cleanly, saying so.
#[test]
fn kubeconfig_and_ctrl_c() {
    use std::io::{BufRead, BufReader};
    let path = std::env::temp_dir().join(format!("kubeloop-kubeconfig-{}.yaml", std::process::id()));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kubeloop"))
        .args(["serve", "--address", "127.0.0.1:0", "--speed", "0", "--kubeconfig"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let url = first.split_whitespace().find(|w| w.starts_with("http://")).unwrap().to_string();
    let config = std::fs::read_to_string(&path).unwrap();
    assert!(config.contains(&format!("server: {url}")) && config.contains("current-context: kubeloop"), "{config}");
    let docs = yaml_serde::from_str::<serde_json::Value>(&config).unwrap();
    assert_eq!(docs["contexts"][0]["name"], "kubeloop");
    assert_eq!(docs["contexts"][0]["context"]["cluster"], "kubeloop");
    assert_eq!(docs["users"][0]["name"], "kubeloop");
    if let Some(kubectl) = serve::kubectl() {
        let got = std::process::Command::new(kubectl).args(["get", "namespaces", "-o", "name"]).env("KUBECONFIG", &path).output().unwrap();
        assert!(String::from_utf8_lossy(&got.stdout).contains("namespace/default"), "{got:?}");
    }
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "Ctrl-C stops it cleanly: {exit:?}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(rest.ends_with("stopped\n"), "{rest:?}");
    let _ = std::fs::remove_file(&path);
}

/// Served beyond loopback, it warns that nothing authenticates the clients.
#[test]
fn another_address_than_loopback_is_served_with_a_warning() {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kubeloop"))
        .args(["serve", "--address", "0.0.0.0:0", "--speed", "0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.starts_with("warning: serving the Kubernetes API on 0.0.0.0:") && line.contains("no authentication"), "{line}");
}

/// `sim` verbs from outside: `kubeloop sim --server URL …`, and the same binary as the kubectl
/// plugin `kubectl-sim` (`kubectl sim …`), which finds the server in `$KUBELOOP_SERVER`.
#[test]
fn sim_verbs_from_another_terminal() {
    let server = Server::start(&["--speed", "0"]);
    let kubeloop = env!("CARGO_BIN_EXE_kubeloop");
    let out = std::process::Command::new(kubeloop).args(["sim", "--server", &server.url, "advance", "30s"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "advanced 30s to 30s\n");
    let bad = std::process::Command::new(kubeloop).args(["sim", "--server", &server.url, "fly"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).starts_with("error: unknown sim command \"fly\""), "{bad:?}");
    let plugins = std::env::temp_dir().join(format!("kubeloop-plugin-{}", std::process::id()));
    std::fs::create_dir_all(&plugins).unwrap();
    let plugin = plugins.join("kubectl-sim");
    let _ = std::fs::remove_file(&plugin);
    std::os::unix::fs::symlink(kubeloop, &plugin).unwrap();
    let stopped =
        std::process::Command::new(&plugin).args(["stop", "kube-scheduler"]).env("KUBELOOP_SERVER", &server.url).output().unwrap();
    assert!(stopped.status.success(), "{stopped:?}");
    if let Some(kubectl) = serve::kubectl() {
        let path = format!("{}:{}", plugins.display(), std::env::var("PATH").unwrap_or_default());
        let status = std::process::Command::new(kubectl)
            .args(["sim", "status"])
            .env("PATH", path)
            .env("KUBELOOP_SERVER", &server.url)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
        let text = String::from_utf8_lossy(&status.stdout);
        assert!(text.lines().any(|l| l.starts_with("kube-scheduler ") && l.contains(" Stopped ")), "{text}");
    }
    let _ = std::fs::remove_dir_all(&plugins);
}

/// A write with a stale resourceVersion is 409 Conflict and changes nothing; a watch that asks
/// for them gets bookmarks, and one that asks for its initial events gets them and then the
/// bookmark that says they are over.
#[test]
fn conflicts_bookmarks_and_initial_events() {
    let server = paused();
    let deployment = get_json(&server, "/apis/apps/v1/namespaces/default/deployments/web");
    let mut stale = deployment.clone();
    stale["metadata"]["resourceVersion"] = "1".into();
    stale["spec"]["replicas"] = 5.into();
    let before = revision(&server);
    let (code, text) = server.http(
        "PUT",
        "/apis/apps/v1/namespaces/default/deployments/web",
        &[("Content-Type", "application/json")],
        stale.to_string().as_bytes(),
    );
    assert_eq!(code, 409, "{text}");
    assert_eq!(status(&text)["reason"], "Conflict");
    assert_eq!(revision(&server), before);

    let (code, body) =
        server.http("GET", &format!("/api/v1/nodes?watch=1&resourceVersion={before}&allowWatchBookmarks=true&timeoutSeconds=2"), &[], b"");
    assert_eq!(code, 200);
    let events: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(events.iter().any(|e| e["type"] == "BOOKMARK" && e["object"]["metadata"]["resourceVersion"].is_string()), "{body}");

    let (code, body) = server.http(
        "GET",
        "/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1",
        &[],
        b"",
    );
    assert_eq!(code, 200);
    let events: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let added: Vec<&str> =
        events.iter().filter(|e| e["type"] == "ADDED").filter_map(|e| e["object"]["metadata"]["name"].as_str()).collect();
    assert_eq!(added, ["node-1", "node-2"]);
    assert_eq!(events[2]["type"], "BOOKMARK");
    assert_eq!(events[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
}

/// An older version still served (autoscaling/v1 HorizontalPodAutoscalers) is read and written in
/// that version, and stored in the current one.
#[test]
fn an_older_version_is_served_converted() {
    let server = paused();
    let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 4, "targetCPUUtilizationPercentage": 60}});
    let (code, text) = server.http(
        "POST",
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
        &[("Content-Type", "application/json")],
        hpa.to_string().as_bytes(),
    );
    assert_eq!(code, 201, "{text}");
    assert_eq!(status(&text)["apiVersion"], "autoscaling/v1");
    let v1 = get_json(&server, "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web");
    assert_eq!((v1["apiVersion"].as_str(), v1["spec"]["targetCPUUtilizationPercentage"].as_i64()), (Some("autoscaling/v1"), Some(60)));
    let v2 = get_json(&server, "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web");
    assert_eq!(v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"], 60);
    let group = get_json(&server, "/apis/autoscaling");
    assert_eq!(group["preferredVersion"]["version"], "v2");
    assert_eq!(group["versions"].as_array().unwrap().len(), 2);
}

/// Stopping the simulated kube-apiserver ends the open watches and refuses requests (503);
/// started again, it serves.
#[test]
fn a_stopped_kube_apiserver_ends_watches_and_refuses() {
    let server = paused();
    let address = server.address.clone();
    let began = std::time::Instant::now();
    let watching = std::thread::spawn(move || Server::connect(&address).http("GET", "/api/v1/pods?watch=1&timeoutSeconds=20", &[], b""));
    std::thread::sleep(std::time::Duration::from_millis(300));
    server.sim("stop kube-apiserver");
    let (code, _) = watching.join().unwrap();
    assert_eq!(code, 200);
    assert!(began.elapsed() < std::time::Duration::from_secs(10), "the watch ended with the server, not its timeout");
    let (code, text) = server.http("GET", "/api/v1/pods", &[], b"");
    assert_eq!(code, 503, "{text}");
    server.sim("start kube-apiserver");
    assert_eq!(server.http("GET", "/api/v1/pods", &[], b"").0, 200);
}

fn configmap(server: &Server, name: &str) {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    let (code, text) =
        server.http("POST", "/api/v1/namespaces/default/configmaps", &[("Content-Type", "application/json")], cm.to_string().as_bytes());
    assert_eq!(code, 201, "{text}");
}

/// A watch of ConfigMaps from `rv` on another connection, for `seconds` of wall time: the names
/// it heard, and whether it ended before its timeout.
fn watch_configmaps(server: &Server, rv: &str, seconds: u64) -> std::thread::JoinHandle<(Vec<String>, bool)> {
    let (address, rv) = (server.address.clone(), rv.to_string());
    std::thread::spawn(move || {
        let began = std::time::Instant::now();
        let path = format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds={seconds}");
        let (code, body) = Server::connect(&address).http("GET", &path, &[], b"");
        assert_eq!(code, 200, "{body}");
        let names = body
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["object"]["metadata"]["name"].as_str().unwrap_or("").to_string());
        (names.collect(), began.elapsed() < std::time::Duration::from_secs(seconds))
    })
}

/// `sim watch drop` and `sim watch delay` reach an HTTP watch as they reach every component's: a
/// dropped notification never arrives, a delayed one not before its delay is over.
#[test]
fn watch_faults_reach_http_watchers_as_components_watches() {
    let server = paused();
    let rv = revision(&server);
    let watching = watch_configmaps(&server, &rv, 20);
    std::thread::sleep(std::time::Duration::from_millis(300));
    server.sim("watch drop 100");
    configmap(&server, "dropped");
    server.sim("advance 1s");
    assert!(server.sim("status").contains("watch events dropped so far: "), "counted with the components' losses");
    server.sim("watch drop 0");
    configmap(&server, "kept");
    server.sim("advance 1s");
    server.sim("watch delay 5s");
    configmap(&server, "delayed");
    server.sim("advance 4s");
    // The watch ends with "delayed" still on its way.
    server.sim("watch sever");
    assert_eq!(watching.join().unwrap(), (vec!["kept".to_string()], true));
}

/// `sim watch sever` ends an HTTP watch as it ends a component's, and the client's re-watch from
/// the revision it had reached is 410 Gone, so that it re-lists.
#[test]
fn a_severed_http_watch_ends_and_its_rewatch_is_gone() {
    let server = paused();
    let rv = revision(&server);
    let watching = watch_configmaps(&server, &rv, 20);
    std::thread::sleep(std::time::Duration::from_millis(300));
    configmap(&server, "seen");
    server.sim("advance 1s");
    let reached = revision(&server);
    configmap(&server, "later");
    assert!(server.sim("watch sever").starts_with("severed "));
    let (heard, ended_early) = watching.join().unwrap();
    assert_eq!((heard, ended_early), (vec!["seen".to_string()], true), "severed before 'later' arrived, well before its timeout");
    let (code, body) = server.http("GET", &format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={reached}"), &[], b"");
    assert_eq!(code, 200);
    let event: Value = serde_json::from_str(body.lines().next().unwrap_or_default()).unwrap();
    assert_eq!((event["type"].as_str(), event["object"]["code"].as_u64()), (Some("ERROR"), Some(410)), "{body}");
    // The re-list's revision is served.
    let relisted = revision(&server);
    let watching = watch_configmaps(&server, &relisted, 2);
    std::thread::sleep(std::time::Duration::from_millis(300));
    configmap(&server, "after");
    server.sim("advance 1s");
    assert_eq!(watching.join().unwrap().0, ["after"]);
}
