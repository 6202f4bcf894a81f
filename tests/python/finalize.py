"""A delete handler, for tests/operators.rs: kopf puts its finalizer on every ConfigMap labelled
`finalize`, calls `goodbye` when one is deleted, and takes the finalizer off after it."""

import kopf
import kubernetes


@kopf.on.create("configmaps", labels={"finalize": "yes"})
def hello(name, **_):
    return {"greeted": name}


@kopf.on.delete("configmaps", labels={"finalize": "yes"})
def goodbye(name, namespace, logger, **_):
    core = kubernetes.client.CoreV1Api()
    core.create_namespaced_config_map(namespace, {"metadata": {"name": name + "-gone"}, "data": {"was": name}})
    logger.info(f"said goodbye to {name}")
