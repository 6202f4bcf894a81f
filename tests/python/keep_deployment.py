"""An operator that keeps a Deployment for every ConfigMap labelled `kubeloop.dev/site`: the
ConfigMap's `image` and `replicas` are the claim, the Deployment of the same name (owned by the
ConfigMap, so the garbage collector removes it with it) is what exists. The same file runs under
real kopf (`kopf run --standalone`) and under kubeloop's operator host (tests/operators.rs).

Level-triggered: creation, update and resume all ensure the same state, and a timer looks again
every 10 seconds, so a Deployment deleted by hand comes back.
"""

import kopf
import kubernetes
from kubernetes.client.rest import ApiException

SITE = {"kubeloop.dev/site": kopf.PRESENT}


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    # kopf posts only explicit kopf.event()s by default; this posts its log lines too
    # ("Handler 'x' succeeded.", "... failed temporarily: ..."), as Events on the object.
    settings.posting.loggers = True


def desired(name, data):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": int(data.get("replicas", "1")),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": data.get("image", "nginx")}]},
            },
        },
    }


def ensure(body, name, namespace, logger):
    apps = kubernetes.client.AppsV1Api()
    want = desired(name, body.get("data") or {})
    kopf.adopt(want, owner=body)
    try:
        current = apps.read_namespaced_deployment(name, namespace)
    except ApiException as e:
        if e.status != 404:
            raise
        try:
            apps.create_namespaced_deployment(namespace, want)
        except ApiException as e:
            # Real kopf runs the timer beside the change handlers: the other one was first.
            if e.status != 409:
                raise
            return "exists"
        logger.info(f"created deployment {name}")
        return "created"
    image = current.spec.template.spec.containers[0].image
    if current.spec.replicas == want["spec"]["replicas"] and image == want["spec"]["template"]["spec"]["containers"][0]["image"]:
        return "unchanged"
    apps.patch_namespaced_deployment(name, namespace, {"spec": {
        "replicas": want["spec"]["replicas"],
        "template": want["spec"]["template"],
    }})
    logger.info(f"updated deployment {name}")
    return "updated"


@kopf.on.create("configmaps", labels=SITE)
@kopf.on.update("configmaps", labels=SITE)
@kopf.on.resume("configmaps", labels=SITE)
def site(body, name, namespace, logger, **_):
    return ensure(body, name, namespace, logger)


@kopf.timer("configmaps", interval=10, labels=SITE)
def drift(body, name, namespace, logger, **_):
    ensure(body, name, namespace, logger)
