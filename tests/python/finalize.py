"""A delete handler, for tests/operators.rs: kopf puts its finalizer on every ConfigMap labelled
`finalize`, calls `goodbye` when one is deleted, and takes the finalizer off after it."""

import kopf
import kubernetes


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    # kopf posts only explicit kopf.event()s by default; this posts its log lines too
    # ("Handler 'x' succeeded.", "... failed temporarily: ..."), as Events on the object.
    settings.posting.loggers = True


@kopf.on.create("configmaps", labels={"finalize": "yes"})
def hello(name, **_):
    return {"greeted": name}


@kopf.on.delete("configmaps", labels={"finalize": "yes"})
def goodbye(name, namespace, logger, **_):
    core = kubernetes.client.CoreV1Api()
    core.create_namespaced_config_map(namespace, {"metadata": {"name": name + "-gone"}, "data": {"was": name}})
    logger.info(f"said goodbye to {name}")
