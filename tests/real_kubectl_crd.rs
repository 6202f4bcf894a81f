//! The real kubectl against `kubeloop serve` with a CustomResourceDefinition: applied, waited
//! for until Established, its objects applied, listed with the definition's printer columns
//! (the server's Table), refused with the schema's message as kubectl prints it, scaled through
//! the scale subresource, and deleted with the definition. Needs a kubectl (`$KUBECTL`, the
//! PATH, or `scripts/setup.sh`'s): skipped without one, except in CI, where it fails.

#[path = "support/serve.rs"]
mod serve;

use serve::{kubectl_or_skip, run, Server};

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: websites.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: websites, singular: website, kind: Website, shortNames: [ws]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Image, type: string, jsonPath: .spec.image}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              image: {type: string}
              replicas: {type: integer, minimum: 1, default: 2}
          status:
            type: object
            properties:
              replicas: {type: integer}
";

fn file(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the manifest is written");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_custom_resource_through_the_real_kubectl() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = Server::start(&["--seed", "7", "--speed", "1"]);
    let dir = std::env::temp_dir().join(format!("kubeloop-crd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubectl = |args: &[&str]| run(&kubectl, &server, args);

    let crd = file(&dir, "crd.yaml", CRD);
    let applied = kubectl(&["apply", "-f", &crd]);
    assert_eq!(applied.stdout, "customresourcedefinition.apiextensions.k8s.io/websites.example.com created\n", "{}", applied.stderr);
    let waited = kubectl(&["wait", "--for", "condition=established", "--timeout=20s", "crd/websites.example.com"]);
    assert_eq!(waited.stdout, "customresourcedefinition.apiextensions.k8s.io/websites.example.com condition met\n", "{}", waited.stderr);

    let blog = file(
        &dir,
        "blog.yaml",
        "apiVersion: example.com/v1\nkind: Website\nmetadata: {name: blog}\nspec: {image: 'nginx:1.27', colour: blue}\n",
    );
    let created = kubectl(&["apply", "-f", &blog]);
    assert_eq!(created.stdout, "website.example.com/blog created\n", "{}", created.stderr);

    let table = kubectl(&["get", "websites"]);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}{}", table.stdout, table.stderr);
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["NAME", "IMAGE", "REPLICAS"], "the printer columns, and no AGE the definition did not ask for");
    assert_eq!(lines[1].split_whitespace().collect::<Vec<_>>(), ["blog", "nginx:1.27", "2"], "replicas defaulted");
    assert_eq!(kubectl(&["get", "ws", "-o", "name"]).stdout, "website.example.com/blog\n");
    let json: serde_json::Value = serde_json::from_str(&kubectl(&["get", "website", "blog", "-o", "json"]).stdout).unwrap();
    assert_eq!(json["spec"], serde_json::json!({"image": "nginx:1.27", "replicas": 2}), "colour pruned");

    let bad =
        file(&dir, "bad.yaml", "apiVersion: example.com/v1\nkind: Website\nmetadata: {name: bad}\nspec: {image: nginx, replicas: 0}\n");
    let refused = kubectl(&["apply", "-f", &bad]);
    assert!(!refused.ok);
    assert_eq!(
        refused.stderr.trim_end(),
        "The Website \"bad\" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"
    );

    let scaled = kubectl(&["scale", "website", "blog", "--replicas=3"]);
    assert_eq!(scaled.stdout, "website.example.com/blog scaled\n", "{}", scaled.stderr);
    let replicas = kubectl(&["get", "website", "blog", "-o", "jsonpath={.spec.replicas}"]);
    assert_eq!(replicas.stdout, "3");

    let deleted = kubectl(&["delete", "crd", "websites.example.com"]);
    assert_eq!(deleted.stdout, "customresourcedefinition.apiextensions.k8s.io \"websites.example.com\" deleted\n", "{}", deleted.stderr);
    // kubectl still has the resource in its discovery cache; the server no longer serves it.
    let gone = kubectl(&["get", "websites"]);
    assert!(!gone.ok);
    assert_eq!(
        gone.stderr.trim_end(),
        "Error from server (NotFound): Unable to list \"example.com/v1, Resource=websites\": the server could not find the requested resource (get websites.example.com)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Once a definition is established, discovery stays aggregated and carries the definition's
/// group: kubectl learns every resource from `/api` and `/apis` alone, as from a real cluster,
/// rather than falling back to one request per group version.
#[test]
fn aggregated_discovery_carries_custom_groups() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = Server::start(&["--seed", "7", "--speed", "1"]);
    let dir = std::env::temp_dir().join(format!("kubeloop-crd-discovery-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubectl = |args: &[&str]| run(&kubectl, &server, args);
    let crd = file(&dir, "crd.yaml", CRD);
    assert!(kubectl(&["apply", "-f", &crd]).ok);
    assert!(kubectl(&["wait", "--for", "condition=established", "--timeout=20s", "crd/websites.example.com"]).ok);

    // `-v=6` logs each request kubectl makes.
    let listed = kubectl(&["api-resources", "-v=6"]);
    assert!(listed.ok, "{}", listed.stderr);
    let row = listed.stdout.lines().find(|l| l.starts_with("websites ")).unwrap_or_else(|| panic!("{}", listed.stdout));
    assert_eq!(row.split_whitespace().collect::<Vec<_>>(), ["websites", "ws", "example.com/v1", "true", "Website"]);
    let gets: Vec<&str> = listed.stderr.lines().filter(|l| l.contains(" GET ")).collect();
    assert_eq!(gets.len(), 2, "only /api and /apis: {gets:#?}");
    assert!(!listed.stderr.contains("/apis/example.com"), "{}", listed.stderr);

    let blog = file(&dir, "blog.yaml", "apiVersion: example.com/v1\nkind: Website\nmetadata: {name: blog}\nspec: {image: nginx}\n");
    assert!(kubectl(&["apply", "-f", &blog]).ok);
    let got = kubectl(&["get", "ws", "-v=6"]);
    assert_eq!(got.stdout.lines().nth(1).and_then(|l| l.split_whitespace().next()), Some("blog"), "{}", got.stderr);

    // Both aggregated versions, each naming the custom kind's group and version as
    // apiextensions-apiserver does, with its subresources.
    for version in ["v2", "v2beta1"] {
        let accept = format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList,application/json");
        let (code, body) = server.http("GET", "/apis", &[("Accept", &accept)], b"");
        assert_eq!(code, 200, "{body}");
        let list: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(list["apiVersion"], format!("apidiscovery.k8s.io/{version}"));
        let group = list["items"].as_array().unwrap().iter().find(|g| g["metadata"]["name"] == "example.com").expect("the custom group");
        let resource = &group["versions"][0]["resources"][0];
        assert_eq!(group["versions"][0]["version"], "v1");
        assert_eq!(resource["resource"], "websites");
        assert_eq!(resource["responseKind"], serde_json::json!({"group": "example.com", "version": "v1", "kind": "Website"}));
        assert_eq!(resource["scope"], "Namespaced");
        let subs: Vec<&str> = resource["subresources"].as_array().unwrap().iter().map(|s| s["subresource"].as_str().unwrap()).collect();
        assert_eq!(subs, ["scale", "status"]);
        assert_eq!(resource["subresources"][0]["responseKind"]["group"], "autoscaling");
    }
    // Deleted, the group leaves discovery.
    assert!(kubectl(&["delete", "crd", "websites.example.com"]).ok);
    let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let (_, body) = server.http("GET", "/apis", &[("Accept", accept)], b"");
    assert!(!body.contains("example.com"), "{body}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A definition whose schema describes its fields, for `kubectl explain`.
const DESCRIBED: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: websites.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: websites, singular: website, kind: Website, shortNames: [ws]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: A small website that the operator keeps running.
        type: object
        properties:
          spec:
            description: What the website should be.
            type: object
            required: [image]
            properties:
              image: {type: string, description: The container image that serves the site.}
              replicas: {type: integer, minimum: 1, default: 2, description: How many copies serve it.}
              mode: {type: string, enum: [fast, safe], nullable: true}
              tags: {type: array, items: {type: string}}
              ratio: {type: number}
          status:
            type: object
            properties:
              replicas: {type: integer}
";

/// `kubectl explain` reads a custom kind from the OpenAPI v3 document of its group version, as
/// apiextensions-apiserver publishes the definition's schema (and from v2 when asked), so each
/// field shows the description and type the definition gave it.
#[test]
fn kubectl_explain_reads_a_custom_kinds_schema() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let kubectl_path = kubectl.clone();
    let server = Server::start(&["--seed", "7", "--speed", "1"]);
    let dir = std::env::temp_dir().join(format!("kubeloop-crd-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubectl = |args: &[&str]| run(&kubectl, &server, args);
    let crd = file(&dir, "crd.yaml", DESCRIBED);
    assert!(kubectl(&["apply", "-f", &crd]).ok);
    assert!(kubectl(&["wait", "--for", "condition=established", "--timeout=20s", "crd/websites.example.com"]).ok);

    // kubectl 1.27 and 1.28 explain from OpenAPI v2 only (checked below); from 1.29 from v3.
    let version = std::process::Command::new(&kubectl_path).args(["version", "--client", "-o", "json"]).output().expect("kubectl runs");
    let version: serde_json::Value = serde_json::from_slice(&version.stdout).unwrap_or_default();
    let minor: u32 = version["clientVersion"]["minor"].as_str().unwrap_or_default().trim_end_matches('+').parse().unwrap_or(0);
    let kind = kubectl(&["explain", "website"]);
    assert!(kind.ok, "{}", kind.stderr);
    if minor >= 29 {
        explained_from_v3(&kind.stdout, &kubectl(&["explain", "ws.spec"]));
    }
    // metadata is ObjectMeta, whatever the definition says of it.
    let meta = kubectl(&["explain", "website.metadata.labels"]);
    assert!(meta.ok, "{}", meta.stderr);
    if minor >= 29 {
        assert!(meta.stdout.contains("FIELD: labels <map[string]string>"), "{}{}", meta.stdout, meta.stderr);
    }

    // OpenAPI v2, as kubectl reads it when asked: a nullable field has no type there.
    let v2 = kubectl(&["explain", "website.spec", "--output=plaintext-openapiv2"]);
    assert!(v2.ok, "{}", v2.stderr);
    assert!(v2.stdout.contains("   image\t<string> -required-\n     The container image that serves the site.\n"), "{}", v2.stdout);
    assert!(v2.stdout.contains("   mode\t<>\n"), "{}", v2.stdout);

    // The schema's name and tag, as apiextensions-apiserver publishes them.
    let (code, body) = server.http("GET", "/openapi/v3/apis/example.com/v1", &[], b"");
    assert_eq!(code, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    let schema = &doc["components"]["schemas"]["com.example.v1.Website"];
    assert_eq!(
        schema["x-kubernetes-group-version-kind"],
        serde_json::json!([{"group": "example.com", "version": "v1", "kind": "Website"}])
    );
    assert_eq!(schema["properties"]["spec"]["properties"]["replicas"]["default"], 2);
    assert_eq!(
        schema["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/websites/{name}"]["patch"].is_object());
    let _ = std::fs::remove_dir_all(&dir);
}

const SHOP: &str = "apiVersion: example.com/v1
kind: Website
metadata:
  name: shop
  labels: {app: shop, tier: web}
  annotations: {note: hi}
spec: {image: nginx, tags: [a, b], mode: fast, ratio: 1.5}
";

const BLOG: &str = "apiVersion: example.com/v1\nkind: Website\nmetadata: {name: blog}\nspec: {image: 'nginx:1.27', replicas: 3}\n";

/// A paused server and a console session of the same scenario and seed, given the same
/// definition and objects at the same simulated times: the same cluster.
fn twins(kubectl: &std::path::Path, dir: &std::path::Path, crd: &str) -> (Server, kubeloop::command::Session) {
    use kubeloop::command::{Scenario, Session};
    let server = Server::start(&["--seed", "7", "--speed", "0"]);
    let mut session = Session::new(Scenario::builtin("default").unwrap(), Some(7)).unwrap();
    for (name, text) in [("crd.yaml", crd), ("shop.yaml", SHOP), ("blog.yaml", BLOG)] {
        let path = file(dir, name, text);
        session.add_file(&path, text);
        let real = run(&kubectl.to_path_buf(), &server, &["apply", "-f", &path]);
        let ours = session.execute(&format!("kubectl apply -f {path}"));
        assert_eq!((real.stdout.as_str(), real.ok), (ours.stdout.as_str(), ours.ok), "{}{}", real.stderr, ours.stderr);
        server.sim("advance 2s");
        assert!(session.execute("sim advance 2s").ok);
    }
    (server, session)
}

/// The console's `describe` of a custom resource and of its definition is what the real
/// kubectl's generic describer prints from the served objects: same lines, same alignment.
#[test]
fn describe_of_custom_objects_is_the_real_kubectls() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("kubeloop-crd-describe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (server, mut session) = twins(&kubectl, &dir, DESCRIBED);
    let mut failures = Vec::new();
    for args in [
        vec!["describe", "website", "shop"],
        vec!["describe", "ws"],
        vec!["describe", "websites/blog"],
        vec!["describe", "ws", "sh"],
        vec!["describe", "ws", "-l", "app=shop"],
        vec!["describe", "ws", "nope"],
        vec!["describe", "ws", "shop", "nope", "blog"],
        vec!["describe", "ws/shop", "ws/blo"],
        vec!["describe", "ws/nope", "ws/blog"],
        vec!["describe", "ws", "-A"],
        vec!["describe", "crd", "websites.example.com"],
        // The same fallback for a built-in kind.
        vec!["describe", "storageclass", "stand"],
        // A built-in kind without a describer of its own: the generic one too.
        vec!["describe", "lease", "-n", "kube-node-lease", "node-1"],
        vec!["describe", "deployment/web", "deployment/nope"],
    ] {
        let real = run(&kubectl, &server, &args);
        let ours = session.execute(&format!("kubectl {}", args.join(" ")));
        if (real.stdout.as_str(), real.stderr.trim_end(), real.ok) != (ours.stdout.as_str(), ours.stderr.trim_end(), ours.ok) {
            failures.push(format!(
                "$ kubectl {}\n--- real kubectl:\n{}{}\n--- console:\n{}{}",
                args.join(" "),
                real.stdout,
                real.stderr,
                ours.stdout,
                ours.stderr
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{} differ:\n{}", failures.len(), failures.join("\n"));
}

/// `kubectl get TYPE -w` of a custom resource: the list, then a line per change as the watch
/// hears it, with the definition's printer columns — what the console's own watch prints for the
/// same changes. A named watch hears only its object.
#[test]
fn get_watch_of_custom_objects_is_the_real_kubectls() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("kubeloop-crd-watch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (server, mut session) = twins(&kubectl, &dir, CRD);
    let watches: [&[&str]; 3] = [&["get", "ws", "-w"], &["get", "website", "blog", "-w", "-o", "name"], &["get", "websites", "-w", "-A"]];
    let mut real_lines = Vec::new();
    let mut ours: Vec<Vec<String>> = Vec::new();
    let mut children = Vec::new();
    for args in watches {
        let mut watch = std::process::Command::new(&kubectl)
            .args(["-s", &server.url, "--cache-dir", &serve::cache_dir(&server)])
            .args(args)
            .env("KUBECONFIG", "/dev/null")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let stdout = watch.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        children.push(watch);
        real_lines.push(rx);
        let listed = session.execute(&format!("kubectl {}", args.join(" ")));
        assert!(listed.ok, "{}", listed.stderr);
        ours.push(listed.stdout.lines().map(str::to_string).collect());
    }
    let wait = std::time::Duration::from_secs(30);
    let mut real: Vec<Vec<String>> =
        real_lines.iter().zip(&ours).map(|(rx, o)| (0..o.len()).map_while(|_| rx.recv_timeout(wait).ok()).collect()).collect();
    // The watches open as soon as their lists are printed; the clock stands still until then.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let news = file(&dir, "news.yaml", "apiVersion: example.com/v1\nkind: Website\nmetadata: {name: news}\nspec: {image: httpd}\n");
    session.add_file(&news, &std::fs::read_to_string(&news).unwrap());
    for args in [vec!["scale", "ws", "blog", "--replicas=5"], vec!["delete", "ws", "shop", "--wait=false"], vec!["apply", "-f", &news]] {
        assert!(run(&kubectl, &server, &args).ok);
        assert!(session.execute(&format!("kubectl {}", args.join(" "))).ok);
    }
    server.sim("advance 2s");
    session.execute("sim advance 2s");
    // The console's stream: every watch's lines, in the order the watches were opened.
    let stream = session.take_stream().stdout;
    let changes: Vec<&str> = stream
        .lines()
        .filter(|l| !l.starts_with("$ ") && !l.contains(" scaled") && !l.contains(" deleted") && !l.contains(" created"))
        .collect();
    // Each watch's share of the stream: the table watches' rows have an image, the named one's
    // lines a kind.
    let per_watch: Vec<Vec<String>> = vec![
        changes.iter().filter(|l| !l.contains('/') && !l.starts_with("default ")).map(|l| l.to_string()).collect(),
        changes.iter().filter(|l| l.contains('/')).map(|l| l.to_string()).collect(),
        changes.iter().filter(|l| l.starts_with("default ")).map(|l| l.to_string()).collect(),
    ];
    for ((real, ours), (rx, extra)) in real.iter_mut().zip(ours.iter_mut()).zip(real_lines.iter().zip(per_watch)) {
        ours.extend(extra);
        while real.len() < ours.len() {
            let Ok(line) = rx.recv_timeout(wait) else { break };
            real.push(line);
        }
        real.extend(rx.recv_timeout(std::time::Duration::from_millis(300)));
    }
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(real, ours);
    assert_eq!(ours[1], ["website.example.com/blog", "website.example.com/blog"], "the named watch hears only blog");
    assert!(ours[0].len() >= 6, "the list and the changes: {:?}", ours[0]);
}

/// `kubectl apply --server-side` of a custom object: created and owned by its field manager,
/// which `managedFields` shows; another manager's change to an applied field is a conflict until
/// forced. A schema whose merge semantics the field manager does not read (an atomic map) is
/// refused an apply, with a message that says so, rather than tracked wrongly.
#[test]
fn server_side_apply_of_a_custom_object() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = Server::start(&["--seed", "7", "--speed", "1"]);
    let dir = std::env::temp_dir().join(format!("kubeloop-crd-ssa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubectl = |args: &[&str]| run(&kubectl, &server, args);
    let crd = file(&dir, "crd.yaml", CRD);
    assert!(kubectl(&["apply", "-f", &crd]).ok);
    assert!(kubectl(&["wait", "--for", "condition=established", "--timeout=20s", "crd/websites.example.com"]).ok);

    let site =
        file(&dir, "site.yaml", "apiVersion: example.com/v1\nkind: Website\nmetadata: {name: site}\nspec: {image: nginx, replicas: 2}\n");
    let applied = kubectl(&["apply", "--server-side", "-f", &site]);
    assert_eq!(applied.stdout, "website.example.com/site serverside-applied\n", "{}", applied.stderr);
    let json: serde_json::Value =
        serde_json::from_str(&kubectl(&["get", "website", "site", "-o", "json", "--show-managed-fields"]).stdout).unwrap();
    let entries = json["metadata"]["managedFields"].as_array().expect("managedFields");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!((entries[0]["manager"].as_str(), entries[0]["operation"].as_str()), (Some("kubectl"), Some("Apply")));
    assert_eq!(entries[0]["fieldsV1"], serde_json::json!({"f:spec": {"f:image": {}, "f:replicas": {}}}));

    let patched = kubectl(&["patch", "website", "site", "--type", "merge", "-p", r#"{"spec":{"replicas":3}}"#]);
    assert!(patched.ok, "{}", patched.stderr);
    let conflict = kubectl(&["apply", "--server-side", "-f", &site]);
    assert!(!conflict.ok);
    assert!(
        conflict
            .stderr
            .starts_with("error: Apply failed with 1 conflict: conflict with \"kubectl-patch\" using example.com/v1: .spec.replicas\n"),
        "{}",
        conflict.stderr
    );
    assert_eq!(kubectl(&["get", "website", "site", "-o", "jsonpath={.spec.replicas}"]).stdout, "3", "a refused apply changes nothing");
    let forced = kubectl(&["apply", "--server-side", "--force-conflicts", "-f", &site]);
    assert!(forced.ok, "{}", forced.stderr);
    assert_eq!(kubectl(&["get", "website", "site", "-o", "jsonpath={.spec.replicas}"]).stdout, "2");
    // `managedFields: [{}]` in a write strips them, as kube-apiserver does.
    let stripped = kubectl(&["patch", "website", "site", "--type", "merge", "-p", r#"{"metadata":{"managedFields":[{}]}}"#]);
    assert!(stripped.ok, "{}", stripped.stderr);
    let managed = kubectl(&["get", "website", "site", "-o", "jsonpath={.metadata.managedFields}", "--show-managed-fields"]);
    assert_eq!(managed.stdout, "", "stripped");

    // A map the schema declares atomic (set and owned whole): refused, and nothing written.
    let keyed = CRD.replace("websites", "shops").replace("website", "shop").replace("Website", "Shop").replace("[ws]", "[sh]").replace(
        "              replicas: {type: integer, minimum: 1, default: 2}",
        "              replicas: {type: integer, minimum: 1, default: 2}\n              tags: {type: object, x-kubernetes-map-type: atomic, additionalProperties: {type: string}}",
    );
    let keyed = file(&dir, "keyed.yaml", &keyed);
    assert!(kubectl(&["apply", "-f", &keyed]).ok);
    assert!(kubectl(&["wait", "--for", "condition=established", "--timeout=20s", "crd/shops.example.com"]).ok);
    let shop = file(&dir, "shop.yaml", "apiVersion: example.com/v1\nkind: Shop\nmetadata: {name: corner}\nspec: {image: nginx}\n");
    let refused = kubectl(&["apply", "--server-side", "-f", &shop]);
    assert!(!refused.ok);
    assert!(
        refused.stderr.contains(
            "server-side apply is not modelled by kubeloop for a custom resource whose schema sets x-kubernetes-map-type: atomic"
        ),
        "{}",
        refused.stderr
    );
    assert!(!kubectl(&["get", "shop", "corner"]).ok, "nothing was written");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kubectl explain website` and `explain ws.spec` as kubectl prints them from OpenAPI v3.
fn explained_from_v3(kind: &str, spec: &serve::Run) {
    let text = kind;
    assert!(text.starts_with("GROUP:      example.com\nKIND:       Website\nVERSION:    v1\n"), "{text}");
    assert!(text.contains("DESCRIPTION:\n    A small website that the operator keeps running.\n"), "{text}");
    let fields: Vec<&str> = text.lines().filter(|l| l.starts_with("  ") && !l.starts_with("    ")).map(str::trim).collect();
    assert_eq!(fields, ["apiVersion\t<string>", "kind\t<string>", "metadata\t<ObjectMeta>", "spec\t<Object>", "status\t<Object>"]);
    assert!(text.contains("  spec\t<Object>\n    What the website should be.\n"), "{text}");
    assert!(spec.ok, "{}", spec.stderr);
    let text = &spec.stdout;
    assert!(text.contains("FIELD: spec <Object>"), "{text}");
    assert!(text.contains("  image\t<string> -required-\n    The container image that serves the site.\n"), "{text}");
    assert!(text.contains("  mode\t<string>\n  enum: fast, safe\n"), "{text}");
    assert!(text.contains("  replicas\t<integer>\n    How many copies serve it.\n"), "{text}");
    assert!(text.contains("  tags\t<[]string>\n"), "{text}");
}
