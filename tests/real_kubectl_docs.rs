//! The real kubectl reading what kubeloop serves about itself and its cluster: `explain` from the
//! OpenAPI documents, `top` from metrics.k8s.io, `api-resources` from aggregated discovery,
//! `logs` and `events`, and the refusals of `exec`, `attach` and `port-forward`.
//!
//! The expected text comes from the library, never from the test: the schema `explain` must show
//! is `Kind::schema()` (the decode tables), the CPU `top` must show is what a console session of
//! the same scenario and seed reads from `Sim::pod_usage`/`node_usage`, and `api-resources` must
//! print what the console prints. Needs a kubectl (`$KUBECTL`, the PATH, or `scripts/setup.sh`'s):
//! skipped without one, except in CI, where it fails.

#[path = "support/serve.rs"]
mod serve;

use kubeloop::command::{Scenario, Session};
use kubeloop::model::schema::Schema;
use kubeloop::model::Kind;
use serve::{kubectl_or_skip, Server};
use std::path::PathBuf;

const SEED: &str = "11";

fn console(lines: &[&str]) -> Session {
    let mut session = Session::new(Scenario::builtin("default").unwrap(), Some(SEED.parse().unwrap())).unwrap();
    for line in lines {
        let out = session.execute(line);
        assert!(out.ok, "{line}: {}", out.stderr);
    }
    session
}

/// A paused server of the default scenario, with the same `sim` lines run as the console's.
fn paused(lines: &[&str]) -> Server {
    let server = Server::start(&["--seed", SEED, "--speed", "0"]);
    for line in lines {
        server.sim(line.trim_start_matches("sim "));
    }
    server
}

fn ok(kubectl: &PathBuf, server: &Server, args: &[&str]) -> String {
    let run = serve::run(kubectl, server, args);
    assert!(run.ok, "kubectl {args:?}: {}", run.stderr);
    run.stdout
}

/// The field names of a schema, depth first, sorted at each level as kubectl sorts them, each
/// indented by two spaces a level as `explain --recursive` prints them.
fn tree(schema: &Schema, depth: usize, out: &mut Vec<String>) {
    let Some(mut fields) = schema.fields() else { return };
    fields.sort_by_key(|f| f.name);
    for field in fields {
        out.push(format!("{}{}", "  ".repeat(depth), field.name));
        let mut inner = (field.schema)();
        while let Schema::Array(item) | Schema::Map(item) = inner {
            inner = *item;
        }
        tree(&inner, depth + 1, out);
    }
}

/// The words of `explain`'s DESCRIPTION block (kubectl wraps it at 80 columns).
fn description(explained: &str) -> String {
    let after = explained.split_once("DESCRIPTION:\n").map_or("", |(_, rest)| rest);
    let block = after.split("\nFIELDS:").next().unwrap_or_default();
    block.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn explain_shows_what_the_simulation_models() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused(&[]);
    let schema = Kind::Deployment.schema();
    let Schema::Named(named) = &schema else { panic!("Deployment's schema has a name") };

    let deployment = ok(&kubectl, &server, &["explain", "deployment"]);
    assert!(deployment.starts_with("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n"), "{deployment}");
    assert_eq!(description(&deployment), named.description.split_whitespace().collect::<Vec<_>>().join(" "));
    for field in ["apiVersion\t<string>", "metadata\t<ObjectMeta>", "spec\t<DeploymentSpec>", "status\t<DeploymentStatus>"] {
        assert!(deployment.contains(field), "{field} in {deployment}");
    }

    // A field path: the field's own description, its type's, and only the fields kubeloop reads.
    let containers = ok(&kubectl, &server, &["explain", "pods.spec.containers"]);
    assert!(containers.contains("FIELD: containers <[]Container>"), "{containers}");
    let spec = Kind::Pod.schema().named_types()["io.k8s.api.core.v1.PodSpec"].clone();
    let container_field = (spec.body)().fields().unwrap().into_iter().find(|f| f.name == "containers").unwrap();
    assert!(description(&containers).starts_with(container_field.description), "{containers}");
    assert!(containers.contains("  image\t<string>") && containers.contains("  livenessProbe\t<Probe>"), "{containers}");
    assert!(containers.contains("  name\t<string>"), "{containers}");
    assert!(!containers.contains("securityContext"), "kubeloop does not model a security context: {containers}");
    let limits = ok(&kubectl, &server, &["explain", "pods.spec.containers.resources.limits"]);
    assert!(limits.contains("FIELD: limits <map[string]Quantity>"), "{limits}");

    // --recursive walks the same tree the library's schema is.
    let recursive = ok(&kubectl, &server, &["explain", "deploy", "--recursive"]);
    let fields = recursive.split_once("FIELDS:\n").map_or("", |(_, rest)| rest);
    let printed: Vec<String> =
        fields.lines().filter(|l| !l.trim().is_empty()).map(|l| l.split('\t').next().unwrap_or_default().trim_end().to_string()).collect();
    // The schema's tree, with apiVersion and kind among the top-level fields, each top-level
    // field followed by what is inside it.
    let mut lines = vec!["  apiVersion".to_string(), "  kind".to_string()];
    tree(&schema, 1, &mut lines);
    let mut roots: Vec<Vec<String>> = Vec::new();
    for line in lines {
        match roots.last_mut() {
            Some(root) if line.starts_with("    ") => root.push(line),
            _ => roots.push(vec![line]),
        }
    }
    roots.sort();
    let expected: Vec<String> = roots.concat();
    assert_eq!(printed, expected);
    assert!(printed.iter().any(|l| l.trim() == "maxSurge"));

    // A field kubeloop does not model is not there to explain.
    let missing = serve::run(&kubectl, &server, &["explain", "pods.spec.securityContext"]);
    assert!(!missing.ok && missing.stderr.contains("field \"securityContext\" does not exist"), "{}", missing.stderr);
}

#[test]
fn client_side_apply_and_validation_still_work_with_schemas_served() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused(&[]);
    let dir = std::env::temp_dir().join(format!("kubeloop-docs-apply-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = |replicas: u32, image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels:\n      app: api\n  template:\n    metadata:\n      labels:\n        app: api\n    spec:\n      containers:\n      - name: api\n        image: {image}\n        ports:\n        - containerPort: 80\n"
        )
    };
    let file = dir.join("api.yaml");
    std::fs::write(&file, manifest(2, "nginx:1.27")).unwrap();
    let path = file.to_string_lossy().to_string();
    assert_eq!(ok(&kubectl, &server, &["apply", "-f", &path]), "deployment.apps/api created\n");
    // A second apply computes a strategic merge patch (containers merged by name).
    std::fs::write(&file, manifest(3, "nginx:1.28")).unwrap();
    let second = serve::run(&kubectl, &server, &["apply", "-f", &path]);
    assert!(second.ok && second.stdout == "deployment.apps/api configured\n", "{} {}", second.stdout, second.stderr);
    assert!(!second.stderr.contains("warning: error calculating patch"), "{}", second.stderr);
    let got = ok(&kubectl, &server, &["get", "deploy", "api", "-o=jsonpath={.spec.replicas} {.spec.template.spec.containers[*].image}"]);
    assert_eq!(got, "3 nginx:1.28");
    // kubectl still leaves field validation to the server (it sends fieldValidation=Strict rather
    // than checking against the served schema), which names a field it does not model.
    let unknown =
        manifest(1, "nginx:1.28").replace("name: api\n", "name: other\n").replace("  replicas: 1\n", "  replicas: 1\n  replicaz: 4\n");
    std::fs::write(&file, unknown).unwrap();
    let created = serve::run(&kubectl, &server, &["create", "-f", &path]);
    assert!(created.ok, "{}", created.stderr);
    assert!(created.stderr.contains("kubeloop does not simulate spec.replicaz"), "{}", created.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kubectl top`'s CPU cells for the rows of a table whose first column(s) name the row.
fn cpu_cells(table: &str, key_columns: usize, cpu_column: usize) -> Vec<(String, String)> {
    table
        .lines()
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells[..key_columns].join("/"), cells[cpu_column].to_string())
        })
        .collect()
}

#[test]
fn top_reads_what_metrics_server_reports() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let lines = ["sim advance 40s", "sim load deployment/web --cpu 250%", "sim advance 20s"];
    let session = console(&lines);
    let server = paused(&lines);
    let sim = session.sim();
    let milli = |m: i64| format!("{m}m");

    let pods = serve::run(&kubectl, &server, &["top", "pods"]);
    assert!(pods.ok, "{}", pods.stderr);
    assert!(pods.stdout.starts_with("NAME"), "{}", pods.stdout);
    assert!(pods.stderr.contains("Warning: kubeloop simulates CPU use only"), "{}", pods.stderr);
    let mut expected: Vec<(String, String)> =
        sim.pod_usage(Some("default")).iter().map(|p| (p.name.clone(), milli(p.containers.iter().map(|(_, c)| c).sum()))).collect();
    expected.sort();
    let mut got = cpu_cells(&pods.stdout, 1, 1);
    got.sort();
    assert!(!expected.is_empty() && expected.iter().any(|(_, cpu)| cpu != "0m"), "the load shows: {expected:?}");
    assert_eq!(got, expected);

    let all = ok(&kubectl, &server, &["top", "pods", "-A"]);
    assert!(all.starts_with("NAMESPACE   NAME"), "{all}");
    let mut got = cpu_cells(&all, 2, 2);
    got.sort();
    let mut expected: Vec<(String, String)> = sim
        .pod_usage(None)
        .iter()
        .map(|p| (format!("{}/{}", p.namespace, p.name), milli(p.containers.iter().map(|(_, c)| c).sum())))
        .collect();
    expected.sort();
    assert_eq!(got, expected);

    let containers = ok(&kubectl, &server, &["top", "pod", "--containers"]);
    assert!(containers.starts_with("POD"), "{containers}");
    let mut got = cpu_cells(&containers, 2, 2);
    got.sort();
    let mut expected: Vec<(String, String)> = sim
        .pod_usage(Some("default"))
        .iter()
        .flat_map(|p| p.containers.iter().map(move |(c, m)| (format!("{}/{c}", p.name), milli(*m))))
        .collect();
    expected.sort();
    assert_eq!(got, expected);

    let selected = ok(&kubectl, &server, &["top", "pods", "-l", "app=nothing"]);
    assert_eq!(selected, "", "no pod matches");

    let nodes = ok(&kubectl, &server, &["top", "nodes"]);
    assert!(nodes.starts_with("NAME     CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)"), "{nodes}");
    let mut got = cpu_cells(&nodes, 1, 1);
    got.sort();
    let mut expected: Vec<(String, String)> = sim.node_usage().iter().map(|n| (n.name.clone(), milli(n.cpu_milli))).collect();
    expected.sort();
    assert_eq!(got, expected);

    // metrics-server's own Table and schemas: `kubectl get podmetrics`, `kubectl explain`.
    let table = ok(&kubectl, &server, &["get", "podmetrics"]);
    assert!(table.starts_with("NAME") && table.lines().next().unwrap().ends_with("CPU   MEMORY   WINDOW"), "{table}");
    let mut got = cpu_cells(&table, 1, 1);
    got.sort();
    let mut expected: Vec<(String, String)> =
        sim.pod_usage(Some("default")).iter().map(|p| (p.name.clone(), milli(p.containers.iter().map(|(_, c)| c).sum()))).collect();
    expected.sort();
    let expected: Vec<(String, String)> = expected.into_iter().map(|(n, c)| (n, if c == "0m" { "0".to_string() } else { c })).collect();
    assert_eq!(got, expected);
    assert!(table.lines().skip(1).all(|l| l.ends_with(" 15s")), "{table}");
    let explained = ok(&kubectl, &server, &["explain", "podmetrics.containers"]);
    assert!(
        explained.contains("FIELD: containers <[]ContainerMetrics>") && explained.contains("usage\t<map[string]Quantity> -required-"),
        "{explained}"
    );

    let missing = serve::run(&kubectl, &server, &["top", "pod", "nope"]);
    assert!(!missing.ok && missing.stderr.contains("podmetrics.metrics.k8s.io \"default/nope\" not found"), "{}", missing.stderr);
}

#[test]
fn kubectl_discovers_everything_in_two_requests() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused(&[]);
    let run = serve::run(&kubectl, &server, &["api-resources", "-v=6"]);
    assert!(run.ok, "{}", run.stderr);
    let gets: Vec<&str> = run
        .stderr
        .lines()
        .filter_map(|l| l.split_once("] GET ").map(|(_, rest)| rest.split_whitespace().next().unwrap_or_default()))
        .collect();
    let paths: Vec<&str> = gets.iter().map(|u| u.trim_start_matches(&server.url).split('?').next().unwrap_or_default()).collect();
    assert_eq!(paths, ["/api", "/apis"], "aggregated discovery: no request per group version");
    // The plain documents would have taken one more request per group version.
    let (_, groups) = server.http("GET", "/apis", &[("Accept", "application/json")], b"");
    let groups: serde_json::Value = serde_json::from_str(&groups).unwrap();
    let group_versions: usize = groups["groups"].as_array().unwrap().iter().map(|g| g["versions"].as_array().unwrap().len()).sum();
    assert!(group_versions >= 9, "{groups}");
    eprintln!("discovery: {} requests, where the plain documents take {}", paths.len(), 2 + 1 + group_versions);
    let mut session = console(&[]);
    let printed = session.execute("kubectl api-resources");
    assert_eq!(run.stdout, printed.stdout);

    // The plain documents and v2beta1 still answer those who ask for them.
    let (code, body) = server.http("GET", "/apis", &[("Accept", "application/json")], b"");
    assert_eq!(code, 200);
    assert!(body.contains("\"kind\":\"APIGroupList\""), "{body}");
    let beta = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    let (code, body) = server.http("GET", "/api", &[("Accept", beta)], b"");
    assert_eq!(code, 200);
    assert!(body.contains("\"apiVersion\":\"apidiscovery.k8s.io/v2beta1\""), "{body}");
}

#[test]
fn logs_print_what_the_container_model_wrote() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused(&[]);
    let script = "echo hello from busybox; sleep 20; echo later; sleep 3600";
    assert_eq!(ok(&kubectl, &server, &["run", "hello", "--image=busybox:1.36", "--", "sh", "-c", script]), "pod/hello created\n");
    let waiting = serve::run(&kubectl, &server, &["logs", "hello"]);
    assert!(!waiting.ok && waiting.stderr.contains("Error from server (BadRequest)"), "{}", waiting.stderr);
    server.sim("advance 10s");
    assert_eq!(ok(&kubectl, &server, &["logs", "hello"]), "hello from busybox\n");
    server.sim("advance 20s");
    assert_eq!(ok(&kubectl, &server, &["logs", "hello"]), "hello from busybox\nlater\n");
    assert_eq!(ok(&kubectl, &server, &["logs", "hello", "--tail=1"]), "later\n");
    let previous = serve::run(&kubectl, &server, &["logs", "hello", "--previous"]);
    assert_eq!(previous.stderr, "Error from server (BadRequest): previous terminated container \"hello\" in pod \"hello\" not found\n");
    let stamps = serve::run(&kubectl, &server, &["logs", "hello", "--timestamps"]);
    assert!(!stamps.ok && stamps.stderr.contains("timestamps is not available"), "{}", stamps.stderr);
    let missing = serve::run(&kubectl, &server, &["logs", "nope"]);
    assert_eq!(missing.stderr, "error: error from server (NotFound): pods \"nope\" not found in namespace \"default\"\n");
    // nginx writes nothing the model knows of: an empty log, picked from the Deployment's pods.
    let web = serve::run(&kubectl, &server, &["logs", "deployment/web"]);
    assert!(web.ok && web.stdout.is_empty() && web.stderr.starts_with("Found 3 pods, using pod/web-"), "{} {}", web.stdout, web.stderr);
}

/// The rows of an events table without the age column, the object's kind in lower case (`get
/// events` prints `pod/x`, `kubectl events` prints `Pod/x`), sorted.
fn event_rows(table: &str) -> Vec<String> {
    let mut rows: Vec<String> = table
        .lines()
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            let object = cells.get(3).map(|o| match o.split_once('/') {
                Some((kind, name)) => format!("{}/{name}", kind.to_lowercase()),
                None => o.to_string(),
            });
            let mut row = vec![cells[1].to_string(), cells[2].to_string(), object.unwrap_or_default()];
            row.extend(cells[4..].iter().map(|c| c.to_string()));
            row.join(" ")
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn events_list_what_the_console_lists() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let lines = ["sim advance 30s"];
    let mut session = console(&lines);
    let server = paused(&lines);
    let events = ok(&kubectl, &server, &["events"]);
    assert!(events.starts_with("LAST SEEN   TYPE     REASON"), "{events}");
    let console = session.execute("kubectl get events");
    assert!(console.ok, "{}", console.stderr);
    assert_eq!(event_rows(&events), event_rows(&console.stdout));
    assert!(events.contains("Scheduled"), "{events}");

    let for_deployment = ok(&kubectl, &server, &["events", "--for", "deployment/web"]);
    let rows = event_rows(&for_deployment);
    assert!(!rows.is_empty() && rows.iter().all(|r| r.contains(" deployment/web ")), "{for_deployment}");
    let warnings = ok(&kubectl, &server, &["events", "--types=Warning"]);
    let console_warnings = session.execute("kubectl get events --field-selector type=Warning");
    assert_eq!(event_rows(&warnings), event_rows(&console_warnings.stdout));
}

#[test]
fn exec_attach_and_port_forward_are_refused_with_a_clear_status() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused(&["sim advance 30s"]);
    let pod = ok(&kubectl, &server, &["get", "pods", "-o=jsonpath={.items[0].metadata.name}"]);
    let exec = serve::run(&kubectl, &server, &["exec", &pod, "--", "ls"]);
    assert!(!exec.ok, "{}", exec.stdout);
    assert!(exec.stderr.contains("kubeloop simulates containers and does not run them: pods/exec is not available"), "{}", exec.stderr);
    let attach = serve::run(&kubectl, &server, &["attach", &pod]);
    assert!(!attach.ok && attach.stderr.contains("pods/attach is not available in a simulated cluster"), "{}", attach.stderr);
    let forward = serve::run(&kubectl, &server, &["port-forward", &format!("pod/{pod}"), "18080:80"]);
    assert!(!forward.ok && forward.stderr.contains("pods/portforward is not available in a simulated cluster"), "{}", forward.stderr);
    // Raw: a Status with the code and reason.
    let (code, body) = server.http("POST", &format!("/api/v1/namespaces/default/pods/{pod}/exec?command=ls"), &[], b"");
    assert_eq!(code, 400);
    let status: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((status["kind"].as_str(), status["reason"].as_str()), (Some("Status"), Some("BadRequest")));
}

/// kubectl reads `/openapi/v2` only in protobuf: for `explain --output plaintext-openapiv2`, and
/// (kubectl 1.27 and 1.28) for every `explain` and before every `apply -f`. An older kubectl is
/// looked for beside the machine's (Google Cloud SDK installs them as `kubectl.1.27` …).
#[test]
fn the_protobuf_openapi_v2_document_serves_explain_and_older_kubectls() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused(&[]);
    let v2 = ok(&kubectl, &server, &["explain", "pods.spec.containers.ports", "--output=plaintext-openapiv2"]);
    assert!(v2.contains("RESOURCE: ports <[]Object>") && v2.contains("containerPort\t<integer>"), "{v2}");
    assert!(v2.contains("Ports the container listens on"), "{v2}");

    let real = std::fs::canonicalize(&kubectl).unwrap_or(kubectl.clone());
    let older: Vec<PathBuf> = ["kubectl.1.27", "kubectl.1.28"].iter().map(|n| real.with_file_name(n)).filter(|p| p.is_file()).collect();
    if older.is_empty() {
        eprintln!("no kubectl 1.27 or 1.28 beside {}: only the current kubectl checked", real.display());
    }
    for old in older {
        let explained = ok(&old, &server, &["explain", "deploy.spec.replicas"]);
        assert!(explained.contains("FIELD: replicas <integer>"), "{}: {explained}", old.display());
        let name = old.file_name().unwrap().to_string_lossy().replace('.', "-");
        let run = serve::run(&old, &server, &["create", "deployment", &name, "--image=nginx:1.27"]);
        assert!(run.ok, "{}: {}", old.display(), run.stderr);
        let dir = std::env::temp_dir().join(format!("kubeloop-docs-v2-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cm.yaml");
        std::fs::write(&file, format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: \"1\"\n")).unwrap();
        let applied = ok(&old, &server, &["apply", "-f", &file.to_string_lossy()]);
        assert_eq!(applied, format!("configmap/{name} created\n"), "{}", old.display());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Every manifest the console's transcripts apply (most are the Kubernetes documentation's
/// examples), applied by the real kubectl now that the schemas are served: kubectl's client-side
/// path — validation left to the server, the strategic merge patch of a second apply — never
/// fails on its own, and where the console applied the manifest the real kubectl does too.
#[test]
fn the_transcripts_manifests_apply_with_the_real_kubectl() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused(&["sim advance 20s"]);
    let dir = std::env::temp_dir().join(format!("kubeloop-docs-manifests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let transcripts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&transcripts).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut applied = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if line != "$ kubectl apply -f - <<EOF" {
                continue;
            }
            let manifest: Vec<&str> = lines.by_ref().take_while(|l| *l != "EOF").collect();
            let expected: Vec<&str> = std::iter::from_fn(|| lines.next_if(|l| !l.starts_with("$ ") && !l.starts_with('#'))).collect();
            if manifest.iter().any(|l| l.trim_start().starts_with("namespace:")) {
                continue;
            }
            applied += 1;
            let namespace = format!("m{applied}");
            assert!(serve::run(&kubectl, &server, &["create", "namespace", &namespace]).ok);
            let path = dir.join(format!("{namespace}.yaml"));
            std::fs::write(&path, manifest.join("\n")).unwrap();
            let path = path.to_string_lossy().to_string();
            let first = serve::run(&kubectl, &server, &["apply", "-n", &namespace, "-f", &path]);
            let at = format!(
                "{}: {}",
                file.file_name().unwrap().to_string_lossy(),
                manifest.iter().take(4).copied().collect::<Vec<_>>().join(" | ")
            );
            // A manifest the console refuses on the client side (no kind, an unknown version) is
            // refused by kubectl on its side too, in its own words; any other is not.
            let console_client_side = expected.iter().any(|l| l.starts_with("error:"));
            for client_side in [
                "error validating",
                "warning: error calculating patch",
                "unable to recognize",
                "error when retrieving current configuration",
            ] {
                assert!(console_client_side || !first.stderr.contains(client_side), "{at}\n{}", first.stderr);
            }
            // The transcripts mark a failed command with `[exit N]`; a failure there may follow
            // from what the transcript did before (an update of an existing pod), so only a
            // success is held to.
            let console_ok = !expected.iter().any(|l| l.starts_with("[exit"));
            if console_ok {
                assert!(first.ok, "{at}\nconsole: {expected:?}\nkubectl: {}", first.stderr);
                // The second apply is a strategic merge patch kubectl computes itself.
                let second = serve::run(&kubectl, &server, &["apply", "-n", &namespace, "-f", &path]);
                assert!(second.ok && !second.stderr.contains("error calculating patch"), "{at}\n{}", second.stderr);
            }
        }
    }
    assert!(applied > 20, "only {applied} manifests found");
    let _ = std::fs::remove_dir_all(&dir);
}
