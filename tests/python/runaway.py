"""Handlers that never finish or always fail, for tests/operators.rs: the operator host stops
each within its budget, reports it as kopf reports a failed handler, and retries it."""

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    # kopf posts only explicit kopf.event()s by default; this posts its log lines too
    # ("Handler 'x' succeeded.", "... failed temporarily: ..."), as Events on the object.
    settings.posting.loggers = True


@kopf.on.create("configmaps", labels={"runaway": "loop"})
def spin(**_):
    while True:
        pass


@kopf.on.create("configmaps", labels={"runaway": "recurse"})
def dive(**_):
    def down(n):
        return down(n + 1)
    return down(0)


@kopf.on.create("configmaps", labels={"runaway": "raise"})
def fail(**_):
    raise ValueError("no such thing")


@kopf.on.create("configmaps", labels={"runaway": "temporary"})
def later(retry, **_):
    if retry < 2:
        raise kopf.TemporaryError("not yet", delay=5)
    return {"tries": retry + 1}


@kopf.on.create("configmaps", labels={"runaway": "permanent"})
def never(**_):
    raise kopf.PermanentError("give up")


@kopf.on.create("configmaps", labels={"runaway": "hog"})
def hog(**_):
    return len(bytearray(10 ** 11))
