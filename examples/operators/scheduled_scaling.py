"""Template: scale a Deployment on a schedule. A Deployment annotated
`kubeloop.dev/scale-schedule: "08:00=4 18:00=1"` runs 4 replicas from 08:00 UTC and 1 from
18:00 UTC (each entry holds until the next; before the first entry of the day, the last one of
the day before holds). A timer looks every 5 seconds: it is level-triggered, so a Deployment
scaled by hand, or one looked at for the first time after the operator was stopped, is put
back on its schedule at the next look. The time is the cluster's clock: real time under kopf,
the simulation's in kubeloop (which starts at 2026-01-01 00:00 UTC).

Runs unchanged under kopf and in kubeloop.
"""

import time

import kopf
import kubernetes

SCHEDULE = "kubeloop.dev/scale-schedule"


def entries(text):
    """`"08:00=4 18:00=1"` as [(minute of the day, replicas)], in order."""
    found = []
    for part in text.replace(",", " ").split():
        at, _, replicas = part.partition("=")
        hours, _, minutes = at.partition(":")
        try:
            found.append((int(hours) * 60 + int(minutes), int(replicas)))
        except ValueError:
            raise kopf.PermanentError(f"{SCHEDULE}: {part!r} is not HH:MM=REPLICAS")
    if not found:
        raise kopf.PermanentError(f"{SCHEDULE} is empty")
    return sorted(found)


def replicas_at(schedule, seconds):
    """The replicas the schedule wants at `seconds` since 1970 (UTC)."""
    minute = int(seconds // 60) % (24 * 60)
    due = [replicas for at, replicas in schedule if at <= minute]
    return due[-1] if due else schedule[-1][1]


@kopf.timer("apps", "v1", "deployments", interval=5, annotations={SCHEDULE: kopf.PRESENT})
def scale_on_schedule(spec, meta, name, namespace, logger, **_):
    want = replicas_at(entries(meta["annotations"][SCHEDULE]), time.time())
    if spec.get("replicas") != want:
        kubernetes.client.AppsV1Api().patch_namespaced_deployment(name, namespace, {"spec": {"replicas": want}})
        logger.info(f"scaled {name} to {want} replicas")
