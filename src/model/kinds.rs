//! The kinds kubeloop serves, one row each: the only list of kinds in the code.
//!
//! A row names the `Object` variant and its struct, the typed accessor, and the kind's
//! discovery facts (`KindInfo`). `Kind`, `Kind::ALL`, `Object` and its dispatch, kubectl's
//! resource names (plural, singular, short names, `TYPE.GROUP`), field selectors and
//! `kubectl get all` are all derived from here. The order of the rows is `Kind`'s order, which
//! is the key order of etcd's keyspace and of every informer cache: a new kind goes at the end,
//! so the kinds before it keep their order (and every trace its hash).
//!
//! To add a kind, see "How to add a kind" in ARCHITECTURE.md.

use super::apps::{ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet};
use super::autoscaling::HorizontalPodAutoscaler;
use super::batch::{CronJob, Job};
use super::config::{ConfigMap, Namespace, Secret};
use super::custom::{CustomObject, CustomResourceDefinition};
use super::event::{Event, Lease};
use super::node::Node;
use super::object::kinds;
use super::pod::Pod;
use super::policy::PodDisruptionBudget;
use super::replication_controller::ReplicationController;
use super::service::{EndpointSlice, Endpoints, Service};
use super::storage::{PersistentVolume, PersistentVolumeClaim, StorageClass};

kinds! {
    Node(Node) as_node {
        api_version: "v1", plural: "nodes", singular: "node", short_names: &["no"], namespaced: false, generation: false,
        field_labels: &["spec.unschedulable"],
        categories: &[],
    }
    Pod(Pod) as_pod {
        api_version: "v1", plural: "pods", singular: "pod", short_names: &["po"], namespaced: true, generation: true,
        field_labels: &["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "status.phase", "status.podIP", "status.nominatedNodeName"],
        categories: &["all"],
    }
    ReplicaSet(ReplicaSet) as_replica_set {
        api_version: "apps/v1", plural: "replicasets", singular: "replicaset", short_names: &["rs"], namespaced: true, generation: true,
        field_labels: &["status.replicas"],
        categories: &["all"],
    }
    Deployment(Deployment) as_deployment {
        api_version: "apps/v1", plural: "deployments", singular: "deployment", short_names: &["deploy"], namespaced: true, generation: true,
        field_labels: &[],
        categories: &["all"],
    }
    Event(Event) as_event {
        api_version: "v1", plural: "events", singular: "event", short_names: &["ev"], namespaced: true, generation: false,
        field_labels: &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.fieldPath",
            "reason",
            "source",
            "type",
        ],
        categories: &[],
    }
    Lease(Lease) as_lease {
        api_version: "coordination.k8s.io/v1", plural: "leases", singular: "lease", short_names: &[], namespaced: true, generation: false,
        field_labels: &[],
        categories: &[],
    }
    Namespace(Namespace) as_namespace {
        api_version: "v1", plural: "namespaces", singular: "namespace", short_names: &["ns"], namespaced: false, generation: false,
        field_labels: &["status.phase"],
        categories: &[],
    }
    ConfigMap(ConfigMap) as_config_map {
        api_version: "v1", plural: "configmaps", singular: "configmap", short_names: &["cm"], namespaced: true, generation: false,
        field_labels: &[],
        categories: &[],
    }
    Secret(Secret) as_secret {
        api_version: "v1", plural: "secrets", singular: "secret", short_names: &[], namespaced: true, generation: false,
        field_labels: &["type"],
        categories: &[],
    }
    Service(Service) as_service {
        api_version: "v1", plural: "services", singular: "service", short_names: &["svc"], namespaced: true, generation: false,
        field_labels: &[],
        categories: &["all"],
    }
    EndpointSlice(EndpointSlice) as_endpoint_slice {
        api_version: "discovery.k8s.io/v1", plural: "endpointslices", singular: "endpointslice", short_names: &[], namespaced: true, generation: true,
        field_labels: &[],
        categories: &[],
    }
    Endpoints(Endpoints) as_endpoints {
        api_version: "v1", plural: "endpoints", singular: "endpoints", short_names: &["ep"], namespaced: true, generation: false,
        field_labels: &[],
        categories: &[],
    }
    Job(Job) as_job {
        api_version: "batch/v1", plural: "jobs", singular: "job", short_names: &[], namespaced: true, generation: true,
        field_labels: &[],
        categories: &["all"],
    }
    DaemonSet(DaemonSet) as_daemon_set {
        api_version: "apps/v1", plural: "daemonsets", singular: "daemonset", short_names: &["ds"], namespaced: true, generation: true,
        field_labels: &[],
        categories: &["all"],
    }
    PodDisruptionBudget(PodDisruptionBudget) as_pod_disruption_budget {
        api_version: "policy/v1", plural: "poddisruptionbudgets", singular: "poddisruptionbudget", short_names: &["pdb"], namespaced: true, generation: true,
        field_labels: &[],
        categories: &[],
    }
    ReplicationController(ReplicationController) as_replication_controller {
        api_version: "v1", plural: "replicationcontrollers", singular: "replicationcontroller", short_names: &["rc"], namespaced: true, generation: true,
        field_labels: &["status.replicas"],
        categories: &["all"],
    }
    HorizontalPodAutoscaler(HorizontalPodAutoscaler) as_horizontal_pod_autoscaler {
        api_version: "autoscaling/v2", plural: "horizontalpodautoscalers", singular: "horizontalpodautoscaler", short_names: &["hpa"], namespaced: true, generation: true,
        field_labels: &[],
        categories: &["all"],
    }
    CronJob(CronJob) as_cron_job {
        api_version: "batch/v1", plural: "cronjobs", singular: "cronjob", short_names: &["cj"], namespaced: true, generation: true,
        field_labels: &[],
        categories: &["all"],
    }
    StatefulSet(StatefulSet) as_stateful_set {
        api_version: "apps/v1", plural: "statefulsets", singular: "statefulset", short_names: &["sts"], namespaced: true, generation: true,
        field_labels: &[],
        categories: &["all"],
    }
    ControllerRevision(ControllerRevision) as_controller_revision {
        api_version: "apps/v1", plural: "controllerrevisions", singular: "controllerrevision", short_names: &[], namespaced: true, generation: false,
        field_labels: &[],
        categories: &[],
    }
    PersistentVolumeClaim(PersistentVolumeClaim) as_persistent_volume_claim {
        api_version: "v1", plural: "persistentvolumeclaims", singular: "persistentvolumeclaim", short_names: &["pvc"], namespaced: true, generation: false,
        field_labels: &[],
        categories: &[],
    }
    PersistentVolume(PersistentVolume) as_persistent_volume {
        api_version: "v1", plural: "persistentvolumes", singular: "persistentvolume", short_names: &["pv"], namespaced: false, generation: false,
        field_labels: &[],
        categories: &[],
    }
    StorageClass(StorageClass) as_storage_class {
        api_version: "storage.k8s.io/v1", plural: "storageclasses", singular: "storageclass", short_names: &["sc"], namespaced: false, generation: false,
        field_labels: &[],
        categories: &[],
    }
    CustomResourceDefinition(CustomResourceDefinition) as_custom_resource_definition {
        api_version: "apiextensions.k8s.io/v1", plural: "customresourcedefinitions", singular: "customresourcedefinition", short_names: &["crd", "crds"], namespaced: false, generation: true,
        field_labels: &[],
        categories: &["api-extensions"],
    }
    /// Every custom resource's objects: which resource is the object's (and its key's)
    /// `resource`, the name of its CustomResourceDefinition. Not a kind any manifest names
    /// (its `api_version` is empty, so it serves no version and discovery skips it); the
    /// definitions give the names kubectl and discovery use (`api::crd`).
    CustomObject(CustomObject) as_custom_object {
        api_version: "", plural: "", singular: "", short_names: &[], namespaced: true, generation: true,
        field_labels: &[],
        categories: &[],
    }
}
