"""A handler whose requests depend on state it changes between runs, for tests/operators.rs:
natively it runs once; the page's replaying host (host_page.py) runs it again from its start
at each answer, sees a different request at the same point, and fails the call saying why."""

import kopf
import kubernetes
from kubernetes.client.rest import ApiException

runs = [0]


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.posting.loggers = True


@kopf.on.create("configmaps", labels={"runaway": "drift"})
def drift(namespace, **_):
    runs[0] += 1
    core = kubernetes.client.CoreV1Api()
    for name in ("first-%d" % runs[0], "second"):
        try:
            core.read_namespaced_config_map(name, namespace)
        except ApiException:
            pass
