use super::objects::crontab_definition;
use super::*;
use crate::api::{ApiRequest, ApiResponse, ApiServer, DeleteRequest, ListRequest};
use crate::rng::Rng;

fn server() -> ApiServer {
    ApiServer::new()
}

fn submit(api: &mut ApiServer, request: ApiRequest) -> Result<ApiResponse, String> {
    api.handle(Time(1000), &mut Rng::new(1), request).result.map_err(|e| e.kubectl_message())
}

fn object(v: Value) -> Object {
    match Object::from_json(v.clone()) {
        Ok(o) => o,
        Err(_) => Object::custom_from_json(&v).expect("a custom object"),
    }
}

fn crontab(name: &str, spec: Value) -> Object {
    object(json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": spec}))
}

#[test]
fn a_definition_is_established_with_its_names_defaulted() {
    let mut api = server();
    submit(&mut api, ApiRequest::Create(object(crontab_definition()))).unwrap();
    let d = api.definitions().get("crontabs.stable.example.com").unwrap();
    assert!(d.established);
    assert_eq!((d.list_kind.as_str(), d.singular.as_str()), ("CronTabList", "crontab"));
    let stored = api.get(&ObjectKey::new(Kind::CustomResourceDefinition, "", "crontabs.stable.example.com")).unwrap();
    let crd = stored.as_custom_resource_definition().unwrap();
    assert_eq!(crd.condition("Established"), Some(("True", "InitialNamesAccepted", "the initial names have been accepted")));
    assert_eq!(crd.condition("NamesAccepted"), Some(("True", "NoConflicts", "no conflicts found")));
    assert_eq!(api.definitions().resolve("ct").map(|d| d.plural.as_str()), Some("crontabs"));
    assert_eq!(api.definitions().resolve("CronTab.stable.example.com").map(|d| d.plural.as_str()), Some("crontabs"));
    assert!(api.definitions().resolve("crontabs.v2.stable.example.com").is_none());
}

#[test]
fn a_bad_definition_is_refused_with_upstreams_messages() {
    let mut api = server();
    let mut v = crontab_definition();
    v["metadata"]["name"] = json!("crontabs.example");
    v["spec"]["group"] = json!("example");
    v["spec"]["scope"] = json!("Everywhere");
    v["spec"]["versions"][0]["storage"] = json!(false);
    let err = submit(&mut api, ApiRequest::Create(object(v))).unwrap_err();
    assert_eq!(
        err,
        "The CustomResourceDefinition \"crontabs.example\" is invalid: \n\
         * spec.group: Invalid value: \"example\": should be a domain with at least one dot\n\
         * spec.scope: Unsupported value: \"Everywhere\": supported values: \"Cluster\", \"Namespaced\"\n\
         * spec.versions: Invalid value: [\"v1\"]: must have exactly one version marked as storage version"
    );
    let mut webhook = crontab_definition();
    webhook["spec"]["conversion"] = json!({"strategy": "Webhook"});
    let err = submit(&mut api, ApiRequest::Create(object(webhook))).unwrap_err();
    assert!(err.contains("spec.conversion.strategy: Forbidden: conversion webhooks are not modelled by kubeloop"), "{err}");
    let mut cel = crontab_definition();
    cel["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = json!([{"rule": "self.spec.replicas < 5"}]);
    let err = submit(&mut api, ApiRequest::Create(object(cel))).unwrap_err();
    assert!(
        err.contains("spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations: Forbidden: CEL validation rules are not modelled"),
        "{err}"
    );
    assert!(api.definitions().iter().next().is_none(), "nothing was stored");
}

#[test]
fn a_second_definition_with_a_taken_kind_is_not_established() {
    let mut api = server();
    submit(&mut api, ApiRequest::Create(object(crontab_definition()))).unwrap();
    let mut other = crontab_definition();
    other["metadata"]["name"] = json!("crontabz.stable.example.com");
    other["spec"]["names"] = json!({"plural": "crontabz", "kind": "CronTab"});
    submit(&mut api, ApiRequest::Create(object(other))).unwrap();
    let d = api.definitions().get("crontabz.stable.example.com").unwrap();
    assert!(!d.established);
    let stored = api.get(&ObjectKey::new(Kind::CustomResourceDefinition, "", "crontabz.stable.example.com")).unwrap();
    let crd = stored.as_custom_resource_definition().unwrap();
    assert_eq!(crd.condition("NamesAccepted"), Some(("False", "KindConflict", "\"CronTab\" is already in use")));
    assert!(submit(&mut api, ApiRequest::Create(crontab("a", json!({})))).is_ok(), "the first definition serves CronTab");
}

#[test]
fn custom_objects_are_served_once_established_and_listed_by_resource() {
    let mut api = server();
    assert_eq!(
        submit(&mut api, ApiRequest::Create(crontab("a", json!({})))).unwrap_err(),
        "Error from server (NotFound): the server could not find the requested resource"
    );
    submit(&mut api, ApiRequest::Create(object(crontab_definition()))).unwrap();
    let created = submit(&mut api, ApiRequest::Create(crontab("a", json!({"cronSpec": "* * * * */5", "junk": 1})))).unwrap();
    let o = created.object().unwrap().as_custom_object().unwrap().clone();
    assert_eq!((o.resource(), o.metadata.namespace.as_str(), o.metadata.generation), ("crontabs.stable.example.com", "default", 1));
    assert_eq!(o.content()["spec"], json!({"cronSpec": "* * * * */5", "replicas": 1}), "defaulted and pruned");
    let again = submit(&mut api, ApiRequest::Create(crontab("a", json!({})))).unwrap_err();
    assert_eq!(again, "Error from server (AlreadyExists): crontabs.stable.example.com \"a\" already exists");
    let list = ListRequest { kind: Some(Kind::CustomObject), resource: "crontabs.stable.example.com".into(), ..Default::default() };
    let ApiResponse::List { items, .. } = submit(&mut api, ApiRequest::List(list)).unwrap() else { panic!("a list") };
    assert_eq!(items.len(), 1);
    let bad = submit(&mut api, ApiRequest::Create(crontab("b", json!({"replicas": 0})))).unwrap_err();
    assert_eq!(
        bad,
        "The CronTab \"b\" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"
    );
    let missing = ObjectKey::custom("crontabs.stable.example.com", "default", "zz");
    assert_eq!(
        submit(&mut api, ApiRequest::Get(missing)).unwrap_err(),
        "Error from server (NotFound): crontabs.stable.example.com \"zz\" not found"
    );
}

#[test]
fn deleting_a_definition_deletes_its_objects_first() {
    let mut api = server();
    submit(&mut api, ApiRequest::Create(object(crontab_definition()))).unwrap();
    submit(&mut api, ApiRequest::Create(crontab("a", json!({})))).unwrap();
    let mut held = crontab("b", json!({}));
    held.meta_mut().finalizers = vec!["example.com/hold".into()];
    submit(&mut api, ApiRequest::Create(held)).unwrap();
    let crd_key = ObjectKey::new(Kind::CustomResourceDefinition, "", "crontabs.stable.example.com");
    submit(&mut api, ApiRequest::Delete(DeleteRequest::new(crd_key.clone()))).unwrap();
    let crd = api.get(&crd_key).unwrap().as_custom_resource_definition().unwrap().clone();
    assert_eq!(crd.condition("Terminating"), Some(("True", "InstanceDeletionInProgress", "CustomResource deletion is in progress")));
    assert!(api.get(&ObjectKey::custom("crontabs.stable.example.com", "default", "a")).is_none());
    let b_key = ObjectKey::custom("crontabs.stable.example.com", "default", "b");
    let b = api.get(&b_key).unwrap().clone();
    assert!(b.meta().is_deleting());
    let refused = submit(&mut api, ApiRequest::Create(crontab("c", json!({})))).unwrap_err();
    assert_eq!(refused, "Error from server (MethodNotAllowed): create not allowed while custom resource definition is terminating");
    let mut released = (*b).clone();
    released.meta_mut().finalizers.clear();
    submit(&mut api, ApiRequest::Update(released)).unwrap();
    assert!(api.get(&b_key).is_none());
    assert!(api.get(&crd_key).is_none(), "the definition went with its last object");
}

#[test]
fn several_versions_are_served_and_an_unserved_one_is_not() {
    let mut api = server();
    let mut v = crontab_definition();
    let v1 = v["spec"]["versions"][0].clone();
    let mut beta = v1.clone();
    beta["name"] = json!("v1beta1");
    beta["storage"] = json!(false);
    let mut alpha = v1.clone();
    alpha["name"] = json!("v1alpha1");
    alpha["storage"] = json!(false);
    alpha["served"] = json!(false);
    v["spec"]["versions"] = json!([v1, beta, alpha]);
    submit(&mut api, ApiRequest::Create(object(v))).unwrap();
    let in_version = |name: &str, version: &str| {
        object(json!({"apiVersion": format!("stable.example.com/{version}"), "kind": "CronTab", "metadata": {"name": name}, "spec": {}}))
    };
    submit(&mut api, ApiRequest::Create(in_version("a", "v1"))).unwrap();
    let beta_object = submit(&mut api, ApiRequest::Create(in_version("b", "v1beta1"))).unwrap();
    // Strategy None: the object keeps its fields and the apiVersion it was written in.
    assert_eq!(beta_object.object().unwrap().as_custom_object().unwrap().api_version(), "stable.example.com/v1beta1");
    let refused = submit(&mut api, ApiRequest::Create(in_version("c", "v1alpha1"))).unwrap_err();
    assert_eq!(refused, "Error from server (NotFound): the server could not find the requested resource");
    let d = api.definitions().get("crontabs.stable.example.com").unwrap();
    assert_eq!(d.storage_version().map(|v| v.name.as_str()), Some("v1"));
    assert!(api.definitions().resolve("crontabs.v1beta1.stable.example.com").is_some());
    assert!(api.definitions().resolve("crontabs.v1alpha1.stable.example.com").is_none());
    let stored = api.get(&ObjectKey::new(Kind::CustomResourceDefinition, "", "crontabs.stable.example.com")).unwrap().clone();
    let status = stored.as_custom_resource_definition().unwrap().status().cloned().unwrap();
    assert_eq!(status["storedVersions"], json!(["v1"]));
}

#[test]
fn versions_are_ordered_by_kubernetes_priority() {
    let mut names = vec!["foo1", "v1alpha1", "v10beta3", "v1", "v12alpha1", "v11beta2", "v2", "v1beta1", "v10", "foo10", "v11alpha2"];
    names.sort_by(|a, b| super::version_priority(a, b));
    // Upstream's own example order (CompareKubeAwareVersionStrings' documentation).
    assert_eq!(names, ["v10", "v2", "v1", "v11beta2", "v10beta3", "v1beta1", "v12alpha1", "v11alpha2", "v1alpha1", "foo1", "foo10"]);
}
