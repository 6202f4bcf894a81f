"""The Website operator (lesson 11's solution): for every Website, a Deployment that serves its
image with its replicas, and a Service in front of them.

It is a control loop like the Deployment controller: it reads the claim (the Website's spec),
compares it with what exists (the Deployment and the Service of the same name), and acts to
close the gap. Level-triggered: creation, update, a restart of the operator (resume) and a timer
every 5 seconds all run the same comparison, so nothing depends on having seen a particular
change -- a Deployment deleted by hand, or a change made while the operator was stopped, is
found the next time it looks. The children are adopted (owner references to the Website), so
when the Website is deleted the garbage collector removes them.

Runs unchanged under kopf (`kopf run --standalone website.py`) and in kubeloop.
"""

import kopf
import kubernetes
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "lessons.kubeloop.dev", "v1", "websites"


def desired(name, spec):
    """What should exist for a Website: its Deployment and its Service."""
    labels = {"app": name}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": spec.get("replicas", 1),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": spec.get("image", "nginx:1.14.2"),
                                         "ports": [{"containerPort": 80}]}]},
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": labels},
        "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 80}]},
    }
    return deployment, service


def create(make, namespace, body):
    """Creates a child; one that already exists (made by a look running beside this one) is fine."""
    try:
        make(namespace, body)
    except ApiException as e:
        if e.status != 409:
            raise


def ensure(body, spec, name, namespace, logger):
    """Observe, compare, act: one pass of the loop for one Website."""
    deployment, service = desired(name, spec)
    kopf.adopt([deployment, service], owner=body)
    apps = kubernetes.client.AppsV1Api()
    core = kubernetes.client.CoreV1Api()
    done = []

    try:
        current = apps.read_namespaced_deployment(name, namespace)
    except ApiException as e:
        if e.status != 404:
            raise
        current = None
    if current is None:
        create(apps.create_namespaced_deployment, namespace, deployment)
        logger.info(f"created deployment {name}")
        done.append("created deployment")
    else:
        want = deployment["spec"]
        image = current.spec.template.spec.containers[0].image
        if current.spec.replicas != want["replicas"] or image != want["template"]["spec"]["containers"][0]["image"]:
            apps.patch_namespaced_deployment(name, namespace, {"spec": {"replicas": want["replicas"], "template": want["template"]}})
            logger.info(f"updated deployment {name}")
            done.append("updated deployment")

    try:
        core.read_namespaced_service(name, namespace)
    except ApiException as e:
        if e.status != 404:
            raise
        create(core.create_namespaced_service, namespace, service)
        logger.info(f"created service {name}")
        done.append("created service")

    return ", ".join(done) or "in sync"


@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL)
@kopf.on.resume(GROUP, VERSION, PLURAL)
def reconcile(body, spec, name, namespace, logger, **_):
    return ensure(body, spec, name, namespace, logger)


@kopf.timer(GROUP, VERSION, PLURAL, interval=5)
def look_again(body, spec, name, namespace, logger, **_):
    ensure(body, spec, name, namespace, logger)
