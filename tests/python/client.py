"""The official Python `kubernetes` client against `kubeloop serve` (run by tests/python_client.rs).

Usage: client.py URL — a paused server of the default scenario, 30 s in. Every call decodes the
server's answers into the client's typed models, so a field written as no real API server would
write it fails here. Prints "ok" at the end; any failure raises.
"""

import sys
import threading
import urllib.request

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

url = sys.argv[1]
configuration = client.Configuration()
configuration.host = url
api = client.ApiClient(configuration)
core, apps = client.CoreV1Api(api), client.AppsV1Api(api)


def sim(line):
    urllib.request.urlopen(urllib.request.Request(url + "/kubeloop/sim", data=line.encode(), method="POST")).read()


# list: the Deployment's three pods, typed, with their times parsed.
pods = core.list_namespaced_pod("default", label_selector="app=web")
assert len(pods.items) == 3, pods.items
assert all(p.status.phase == "Running" and p.metadata.creation_timestamp.year == 2026 for p in pods.items)
rv = pods.metadata.resource_version
# managedFields, as kube-apiserver records them: the ReplicaSet controller created each pod, its
# node's kubelet wrote its status; each entry decodes into V1ManagedFieldsEntry.
for p in pods.items:
    managers = {(m.manager, m.operation, m.subresource) for m in p.metadata.managed_fields}
    assert ("kube-controller-manager", "Update", None) in managers, managers
    assert ("kubelet", "Update", "status") in managers, managers
    assert all(m.fields_type == "FieldsV1" and m.time.year == 2026 for m in p.metadata.managed_fields)

# create, then a watch from before the create hears it (the past comes with the watch's answer).
pod = client.V1Pod(
    metadata=client.V1ObjectMeta(name="py", labels={"app": "py"}),
    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.14.2")]),
)
created = core.create_namespaced_pod("default", pod)
assert created.metadata.uid and created.metadata.resource_version
events = [(e["type"], e["object"].metadata.name) for e in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1)]
assert ("ADDED", "py") in events, events

# patch (a strategic merge patch of the labels) and the scale subresource.
patched = core.patch_namespaced_pod("py", "default", {"metadata": {"labels": {"tier": "front"}}})
assert patched.metadata.labels == {"app": "py", "tier": "front"}, patched.metadata.labels
# Without a fieldManager the manager is the User-Agent's product name, the client's generator.
labeller = [m for m in patched.metadata.managed_fields if m.manager == "OpenAPI-Generator"]
assert labeller and "f:tier" in labeller[0].fields_v1["f:metadata"]["f:labels"], patched.metadata.managed_fields
apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 4}})
assert apps.read_namespaced_deployment_scale("web", "default").spec.replicas == 4
assert apps.read_namespaced_deployment("web", "default").spec.replicas == 4

# errors are ApiExceptions with kube-apiserver's Status.
try:
    core.read_namespaced_pod("nope", "default")
    raise AssertionError("no 404")
except ApiException as e:
    assert e.status == 404 and '"reason":"NotFound"' in e.body.replace(" ", ""), e.body

# A watch open across a compaction goes on (etcd does not cancel a watch that has caught up):
# it hears a pod created before the compaction (so it is open), then one created after it.
outlived = []
opened = threading.Event()


def watch_across(since):
    for e in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=since, timeout_seconds=3):
        outlived.append((e["type"], e["object"].metadata.name))
        opened.set()


def pod_named(name):
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name), spec=pod.spec)


since = core.list_namespaced_pod("default").metadata.resource_version
watcher = threading.Thread(target=watch_across, args=(since,))
watcher.start()
core.create_namespaced_pod("default", pod_named("before"))
# A change reaches a watch after the simulated watch latency, as a component's watch hears it:
# the paused server's clock must move for it to arrive.
sim("advance 1s")
assert opened.wait(5), "the watch heard nothing"
sim("advance 11m")
core.create_namespaced_pod("default", pod_named("after"))
sim("advance 1s")
watcher.join(10)
assert not watcher.is_alive() and ("ADDED", "before") in outlived and ("ADDED", "after") in outlived, outlived
for name in ("before", "after"):
    core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
try:  # the revision it started from is gone: the watch did outlive a compaction
    list(watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=since, timeout_seconds=1))
    raise AssertionError("no 410")
except ApiException as e:
    assert e.status == 410, e

# A watch from a revision etcd has compacted ends with 410; the client re-lists and watches on.
try:
    list(watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1))
    raise AssertionError("no 410")
except ApiException as e:
    assert e.status == 410, e
relisted = core.list_namespaced_pod("default")
assert len([p for p in relisted.items if p.metadata.labels.get("app") == "web"]) == 4
w = watch.Watch()
core.delete_namespaced_pod("py", "default")
seen = [(e["type"], e["object"].metadata.name) for e in w.stream(core.list_namespaced_pod, "default", resource_version=relisted.metadata.resource_version, timeout_seconds=1)]
assert ("MODIFIED", "py") in seen or ("DELETED", "py") in seen, seen

# `sim watch sever` ends an HTTP watch as it ends a component's: the client's re-watch from its
# last revision is 410 Gone, so it re-lists and watches on from the list.
severed = []
opened.clear()


def watch_until_severed(since):
    for e in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=since, timeout_seconds=30):
        severed.append(e["object"].metadata.resource_version)
        opened.set()


watcher = threading.Thread(target=watch_until_severed, args=(core.list_namespaced_pod("default").metadata.resource_version,))
watcher.start()
core.create_namespaced_pod("default", pod_named("severed"))
sim("advance 1s")
assert opened.wait(5), "the watch heard nothing"
# A change the pod watch does not hear, so that its last revision is behind the server's when
# the watch is severed (otherwise there would be nothing to re-list for).
core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="unheard")))
sim("watch sever")
watcher.join(10)
assert not watcher.is_alive(), "the severed watch ended"
try:
    list(watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=severed[-1], timeout_seconds=1))
    raise AssertionError("no 410 after the sever")
except ApiException as e:
    assert e.status == 410, e
relisted = core.list_namespaced_pod("default")
assert "severed" in [p.metadata.name for p in relisted.items]
core.delete_namespaced_pod("severed", "default", grace_period_seconds=0)
seen = [(e["type"], e["object"].metadata.name) for e in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=relisted.metadata.resource_version, timeout_seconds=1)]
assert ("DELETED", "severed") in seen, seen

# delete: the pod is going (its grace period) or gone.
try:
    going = core.read_namespaced_pod("py", "default")
    assert going.metadata.deletion_timestamp is not None
except ApiException as e:
    assert e.status == 404
print("ok")
