//! The reference run: one fixed scenario that native tests and the browser tests both replay,
//! so that equal trace hashes prove the simulation behaves identically on both targets.

use super::{NodeConfig, Sim};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::{Duration, Kind, Object, ObjectKey};

const REPLICA_SET: &str = "apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        resources: {requests: {cpu: 100m, memory: 128Mi}}
";

/// Two nodes, three replicas, one pod deleted and replaced; returns the trace hash and the
/// number of messages. Errors say which step of the run went wrong.
pub fn worked_example(seed: u64) -> Result<(u64, u64), String> {
    let mut sim = Sim::new(seed);
    for name in ["node-1", "node-2"] {
        sim.add_node(NodeConfig::new(name))?;
    }
    // Read as kubectl apply reads it (kubeloop's own YAML reader), so the page's build needs no
    // YAML library.
    let value = crate::command::yaml::documents(REPLICA_SET)?.into_iter().next().ok_or("the reference manifest is empty")?;
    let rs = Object::from_json(value)?;
    sim.submit(ApiRequest::Create(rs)).map_err(|e| e.kubectl_message())?;
    sim.settle(Duration::mins(1)).map_err(|_| "the cluster did not settle after creating the ReplicaSet")?;
    let victim = sim.objects(Kind::Pod).next().map(|p| p.meta().name.clone()).ok_or("no pod was created")?;
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", &victim)))).map_err(|e| e.kubectl_message())?;
    sim.settle(Duration::mins(2)).map_err(|_| "the cluster did not settle after the delete")?;
    Ok((sim.trace().hash(), sim.trace().count()))
}
