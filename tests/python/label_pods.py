"""A small kopf operator on a built-in kind, run against `kubeloop serve` by tests/kopf_operator.rs.

Every pod kopf sees for the first time (the ones already there when it starts, and every new one)
gets the label `seen-by: kopf`, through kopf's own patch of the object (a JSON merge patch), and
a core/v1 Event (reason `Labelled`, from component `kopf`) says so. Run:
    kopf run --standalone --all-namespaces tests/python/label_pods.py
with a kubeconfig naming the server (serve's --kubeconfig).
"""

import kopf


@kopf.on.create("pods")
def label(body, patch, name, namespace, logger, **_):
    patch.metadata.labels["seen-by"] = "kopf"
    # An Event on the pod: kopf POSTs it to /api/v1/namespaces/NS/events in the background.
    kopf.info(body, reason="Labelled", message="labelled seen-by=kopf")
    logger.info(f"labelled {namespace}/{name}")
