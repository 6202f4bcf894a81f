"""Template: a config copier. Every ConfigMap annotated `kubeloop.dev/copy: "yes"` is kept
copied into a ConfigMap named `NAME-copy` beside it: the same data, keys removed from the
original removed from the copy. The copy is owned by the original (an owner reference), so
Kubernetes' garbage collector removes it with the original (kubeloop's does not yet follow a
ConfigMap's dependents).

Level-triggered: creation, update, resume and a timer every 5 seconds run the same comparison,
so a copy deleted or edited by hand is put back. Runs unchanged under kopf and in kubeloop.
"""

import kopf
import kubernetes
from kubernetes.client.rest import ApiException

SOURCE = {"kubeloop.dev/copy": "yes"}


def ensure(body, name, namespace, logger):
    want = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-copy", "namespace": namespace, "labels": {"kubeloop.dev/copy-of": name}},
        "data": dict(body.get("data") or {}),
    }
    # An owner reference only: kopf.adopt would also copy the original's labels onto the copy.
    kopf.append_owner_reference(want, owner=body)
    core = kubernetes.client.CoreV1Api()
    try:
        current = core.read_namespaced_config_map(f"{name}-copy", namespace)
    except ApiException as e:
        if e.status != 404:
            raise
        try:
            core.create_namespaced_config_map(namespace, want)
        except ApiException as e:
            if e.status != 409:
                raise
        logger.info(f"created {name}-copy")
        return "created"
    have = dict(current.data or {})
    if have == want["data"]:
        return "in sync"
    # A merge patch: a key set to None is removed.
    data = {key: None for key in have if key not in want["data"]}
    data.update(want["data"])
    core.patch_namespaced_config_map(f"{name}-copy", namespace, {"data": data})
    logger.info(f"updated {name}-copy")
    return "updated"


@kopf.on.create("configmaps", annotations=SOURCE)
@kopf.on.update("configmaps", annotations=SOURCE)
@kopf.on.resume("configmaps", annotations=SOURCE)
def copy(body, name, namespace, logger, **_):
    return ensure(body, name, namespace, logger)


@kopf.timer("configmaps", interval=5, annotations=SOURCE)
def look_again(body, name, namespace, logger, **_):
    ensure(body, name, namespace, logger)
