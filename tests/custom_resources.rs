//! CustomResourceDefinitions end to end through the console's kubectl and the simulated API
//! server: a definition becomes a served resource once Established; each schema rule refuses a
//! bad object with kube-apiserver's message; defaults are applied and unknown fields pruned;
//! printer columns print as kubectl prints them; the status subresource writes spec and status
//! apart; deleting a definition deletes its objects first.

use kubeloop::api::{ApiRequest, DeleteRequest};
use kubeloop::command::scenario::Scenario;
use kubeloop::command::Session;
use kubeloop::model::{Duration, Kind, Object, ObjectKey};
use serde_json::{json, Value};

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: websites.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: websites
    singular: website
    kind: Website
    shortNames: [ws]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Image, type: string, jsonPath: .spec.image}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Ready, type: integer, jsonPath: .status.readyReplicas, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              image: {type: string, minLength: 3, maxLength: 40, pattern: '^[a-z0-9.:/-]+$'}
              replicas: {type: integer, minimum: 1, maximum: 5, default: 2}
              tier: {type: string, enum: [web, batch]}
              ports: {type: array, maxItems: 2, items: {type: integer}}
              port: {x-kubernetes-int-or-string: true}
              note: {type: string, nullable: true}
          status:
            type: object
            properties:
              readyReplicas: {type: integer}
              replicas: {type: integer}
              selector: {type: string}
";

fn session() -> Session {
    let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
    s.settle(Duration::mins(1)).unwrap();
    s.add_file("crd.yaml", CRD);
    let out = s.execute("kubectl apply -f crd.yaml");
    assert_eq!(out.stdout, "customresourcedefinition.apiextensions.k8s.io/websites.example.com created\n", "{}", out.stderr);
    s
}

fn website(name: &str, spec: &str) -> String {
    format!("apiVersion: example.com/v1\nkind: Website\nmetadata: {{name: {name}}}\nspec: {spec}\n")
}

fn apply(s: &mut Session, name: &str, spec: &str) -> (bool, String) {
    s.add_file(&format!("{name}.yaml"), &website(name, spec));
    let out = s.execute(&format!("kubectl apply -f {name}.yaml"));
    (out.ok, format!("{}{}", out.stdout, out.stderr))
}

#[test]
fn a_custom_object_of_a_definition_in_the_same_file_is_not_mapped_yet() {
    let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
    s.add_file("both.yaml", &format!("{CRD}---\n{}", website("blog", "{image: nginx}")));
    let out = s.execute("kubectl apply -f both.yaml");
    assert!(
        out.stderr.contains("no matches for kind \"Website\" in version \"example.com/v1\"\nensure CRDs are installed first"),
        "{}",
        out.stderr
    );
    assert!(s.execute("kubectl get crd").stdout.contains("websites.example.com"));
}

#[test]
fn each_schema_rule_refuses_a_bad_object_with_upstreams_message() {
    let mut s = session();
    let cases = [
        ("{replicas: 2}", "spec.image: Required value"),
        ("{image: 7}", r#"spec.image: Invalid value: "integer": spec.image in body must be of type string: "integer""#),
        ("{image: ab}", r#"spec.image: Invalid value: "ab": spec.image in body should be at least 3 chars long"#),
        ("{image: nginx-nginx-nginx-nginx-nginx-nginx-nginx}", "spec.image: Too long: may not be longer than 40"),
        ("{image: NGINX}", r#"spec.image: Invalid value: "NGINX": spec.image in body should match '^[a-z0-9.:/-]+$'"#),
        ("{image: nginx, replicas: 0}", "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
        ("{image: nginx, replicas: 6}", "spec.replicas: Invalid value: 6: spec.replicas in body should be less than or equal to 5"),
        ("{image: nginx, tier: db}", r#"spec.tier: Unsupported value: "db": supported values: "web", "batch""#),
        ("{image: nginx, ports: [1, 2, 3]}", "spec.ports: Too many: 3: must have at most 2 items"),
        (
            "{image: nginx, port: true}",
            r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
        ),
    ];
    for (spec, message) in cases {
        let (ok, out) = apply(&mut s, "bad", spec);
        assert!(!ok, "{spec} was accepted");
        assert_eq!(out.trim_end(), format!("The Website \"bad\" is invalid: {message}"), "{spec}");
    }
    assert!(s.sim().api().get(&ObjectKey::custom("websites.example.com", "default", "bad")).is_none(), "nothing was stored");
    let (ok, out) = apply(&mut s, "good", "{image: nginx, port: http, note: null}");
    assert!(ok, "{out}");
}

#[test]
fn defaults_are_applied_unknown_fields_pruned_and_printer_columns_printed() {
    let mut s = session();
    let (ok, out) = apply(&mut s, "blog", "{image: 'nginx:1.27', colour: blue}");
    assert!(ok, "{out}");
    assert_eq!(out, "website.example.com/blog created\n");
    let yaml = s.execute("kubectl get website blog -o json").stdout;
    let v: Value = serde_json::from_str(&yaml).unwrap();
    assert_eq!(v["spec"], json!({"image": "nginx:1.27", "replicas": 2}), "replicas defaulted, colour pruned");
    assert_eq!(v["metadata"]["generation"], json!(1));
    s.advance(Duration::secs(90));
    let table = s.execute("kubectl get ws").stdout;
    assert_eq!(table, "NAME   IMAGE        REPLICAS   AGE\nblog   nginx:1.27   2          90s\n");
    for typed in ["websites", "website", "Website", "websites.example.com", "websites.v1.example.com", "ws.example.com"] {
        assert_eq!(s.execute(&format!("kubectl get {typed}")).stdout, table, "{typed}");
    }
    let wide = s.execute("kubectl get websites -o wide").stdout;
    assert!(wide.starts_with("NAME   IMAGE        REPLICAS   READY   AGE\n"), "{wide}");
    assert_eq!(s.execute("kubectl get ws -o name").stdout, "website.example.com/blog\n");
    let missing = s.execute("kubectl get ws nope");
    assert_eq!(missing.stderr.trim_end(), r#"Error from server (NotFound): websites.example.com "nope" not found"#);
    let other_ns = s.execute("kubectl get ws -n kube-system");
    assert_eq!(other_ns.stderr.trim_end(), "No resources found in kube-system namespace.");
}

#[test]
fn the_status_subresource_writes_status_apart_and_generation_follows_the_spec() {
    let mut s = session();
    apply(&mut s, "blog", "{image: nginx}");
    let key = ObjectKey::custom("websites.example.com", "default", "blog");
    let live = |s: &Session| s.sim().api().get(&key).unwrap().as_custom_object().unwrap().clone();
    // A spec write carrying a status keeps the stored one (none), and moves generation.
    let mut o = live(&s);
    o.body.content.insert("spec".into(), json!({"image": "nginx", "replicas": 3}));
    o.body.content.insert("status".into(), json!({"readyReplicas": 9}));
    s.sim_mut().submit(ApiRequest::Update(Object::CustomObject(o))).unwrap();
    let after_spec = live(&s);
    assert_eq!((after_spec.metadata.generation, after_spec.content().get("status")), (2, None));
    // A status write changes only status, and not generation.
    let mut o = live(&s);
    o.body.content.insert("spec".into(), json!({"image": "changed", "replicas": 1}));
    o.body.content.insert("status".into(), json!({"readyReplicas": 3}));
    s.sim_mut().submit(ApiRequest::UpdateStatus(Object::CustomObject(o))).unwrap();
    let after_status = live(&s);
    assert_eq!(after_status.metadata.generation, 2);
    assert_eq!(after_status.content()["spec"], json!({"image": "nginx", "replicas": 3}));
    assert_eq!(after_status.content()["status"], json!({"readyReplicas": 3}));
    let wide = s.execute("kubectl get ws -o wide").stdout;
    assert!(wide.contains("blog   nginx   3          3       "), "{wide}");
    // A status the schema refuses is refused.
    let mut o = live(&s);
    o.body.content.insert("status".into(), json!({"readyReplicas": "three"}));
    let err = s.sim_mut().submit(ApiRequest::UpdateStatus(Object::CustomObject(o))).unwrap_err();
    assert_eq!(
        err.kubectl_message(),
        r#"The Website "blog" is invalid: status.readyReplicas: Invalid value: "string": status.readyReplicas in body must be of type integer: "string""#
    );
}

#[test]
fn deleting_a_definition_deletes_its_objects_first() {
    let mut s = session();
    apply(&mut s, "a", "{image: nginx}");
    apply(&mut s, "b", "{image: nginx}");
    assert!(s.execute("kubectl delete crd websites.example.com").ok);
    assert!(s.sim().api().get(&ObjectKey::custom("websites.example.com", "default", "a")).is_none());
    assert!(s.sim().api().get(&ObjectKey::new(Kind::CustomResourceDefinition, "", "websites.example.com")).is_none());
    let gone = s.execute("kubectl get websites");
    assert_eq!(gone.stderr.trim_end(), r#"error: the server doesn't have a resource type "websites""#);
    // Deleting it again is NotFound, as for any object.
    let again = s.sim_mut().submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(
        Kind::CustomResourceDefinition,
        "",
        "websites.example.com",
    ))));
    assert_eq!(
        again.unwrap_err().kubectl_message(),
        r#"Error from server (NotFound): customresourcedefinitions.apiextensions.k8s.io "websites.example.com" not found"#
    );
}

#[test]
fn the_garbage_collector_deletes_an_operators_children_with_their_custom_owner() {
    // What an operator does with kopf.adopt: its Deployment names the custom object as its
    // controller owner. Deleting the Website takes the Deployment, its ReplicaSet and pods.
    let mut s = session();
    apply(&mut s, "blog", "{image: nginx}");
    let owner = s.sim().api().get(&ObjectKey::custom("websites.example.com", "default", "blog")).unwrap().clone();
    let uid = owner.meta().uid.clone();
    s.add_file(
        "child.yaml",
        &format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: blog\n  ownerReferences:\n  - {{apiVersion: example.com/v1, kind: Website, name: blog, uid: {uid}, controller: true, blockOwnerDeletion: true}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: blog}}}}\n  template:\n    metadata: {{labels: {{app: blog}}}}\n    spec:\n      containers: [{{name: web, image: nginx}}]\n"
        ),
    );
    assert!(s.execute("kubectl apply -f child.yaml").ok);
    s.settle(Duration::mins(2)).unwrap();
    assert_eq!(s.sim().objects(Kind::Pod).filter(|p| p.meta().name.starts_with("blog-")).count(), 2);
    // An owner that exists keeps its children.
    assert!(s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "blog")).is_some());
    assert!(s.execute("kubectl delete website blog").ok);
    s.settle(Duration::mins(2)).unwrap();
    assert!(s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "blog")).is_none(), "the Deployment went with its owner");
    assert_eq!(s.sim().objects(Kind::Pod).filter(|p| p.meta().name.starts_with("blog-")).count(), 0, "and its pods");
}

#[test]
fn an_owner_of_a_kind_nobody_defines_is_not_taken_for_gone() {
    let mut s = session();
    s.add_file(
        "orphan.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kept\n  ownerReferences:\n  - {apiVersion: nowhere.example.com/v1, kind: Ghost, name: g, uid: u-1, controller: true}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: kept}}\n  template:\n    metadata: {labels: {app: kept}}\n    spec:\n      containers: [{name: web, image: nginx}]\n",
    );
    assert!(s.execute("kubectl apply -f orphan.yaml").ok);
    s.settle(Duration::mins(2)).unwrap();
    assert!(s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "kept")).is_some());
}

#[test]
fn the_scale_subresource_serves_kubectl_scale_and_a_horizontal_pod_autoscaler() {
    let mut s = session();
    apply(&mut s, "blog", "{image: nginx}");
    let key = ObjectKey::custom("websites.example.com", "default", "blog");
    let spec = |s: &Session| s.sim().api().get(&key).unwrap().as_custom_object().unwrap().content()["spec"].clone();
    let out = s.execute("kubectl scale website blog --replicas=4");
    assert_eq!(out.stdout, "website.example.com/blog scaled\n", "{}", out.stderr);
    assert_eq!(spec(&s)["replicas"], json!(4));
    assert_eq!(s.sim().api().get(&key).unwrap().meta().generation, 2);
    let refused = s.execute("kubectl scale website blog --replicas=9");
    assert_eq!(
        refused.stderr.trim_end(),
        "The Website \"blog\" is invalid: spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5"
    );
    let wrong = s.execute("kubectl scale website blog --current-replicas=2 --replicas=3");
    assert_eq!(wrong.stderr.trim_end(), "error: Expected replicas to be 2, was 4");
    // An HPA whose minimum is above the target's replicas scales the Website up through /scale.
    s.add_file(
        "hpa.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: blog}\nspec:\n  scaleTargetRef: {apiVersion: example.com/v1, kind: Website, name: blog}\n  minReplicas: 5\n  maxReplicas: 5\n",
    );
    assert!(s.execute("kubectl apply -f hpa.yaml").ok);
    s.advance(Duration::secs(40));
    assert_eq!(spec(&s)["replicas"], json!(5), "the autoscaler wrote the Website's spec.replicas");
}

#[test]
fn api_resources_and_get_all_show_the_served_resource() {
    let mut s = session();
    let resources = s.execute("kubectl api-resources").stdout;
    let row = resources.lines().find(|l| l.starts_with("websites ")).expect("listed");
    assert_eq!(row.split_whitespace().collect::<Vec<_>>(), ["websites", "ws", "example.com/v1", "true", "Website"]);
    apply(&mut s, "blog", "{image: nginx}");
    let all = s.execute("kubectl get all").stdout;
    assert!(
        all.contains("\nNAME                       IMAGE   REPLICAS   AGE\nwebsite.example.com/blog   nginx   2          0s\n"),
        "{all}"
    );
}
