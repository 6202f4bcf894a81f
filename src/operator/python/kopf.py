"""The shape of kopf, for operators run by kubeloop: decorators, errors, handler kwargs, adopt.

kopf's reactor -- which handlers a change calls, their retries, progress and results, the
finalizer, the events -- is the simulation's (src/operator/kopf.rs), so that it is the same in
every interpreter and deterministic. This module registers the handlers a file declares and runs
one handler call when the host asks (`_host.call`), counting its Python lines against a budget.
"""
import datetime as _datetime
import json as _json
import logging as _logging
import random as _random
import sys as _sys
import time as _time
import uuid as _uuid

import kubernetes as _kubernetes


class TemporaryError(Exception):
    """A handler failed but may succeed later: retried after `delay` seconds."""

    def __init__(self, __msg=None, delay=60):
        super().__init__(__msg) if __msg is not None else super().__init__()
        self.delay = delay


class PermanentError(Exception):
    """A handler failed for good: not retried."""


class HandlerTimeoutError(PermanentError):
    pass


class HandlerRetriesError(PermanentError):
    pass


class ErrorsMode:
    IGNORED = "ignored"
    TEMPORARY = "temporary"
    PERMANENT = "permanent"


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "kopf." + self.name


PRESENT = _Marker("PRESENT")
ABSENT = _Marker("ABSENT")


class Memo(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


class _Section:
    pass


class OperatorSettings:
    """kopf's settings as a startup handler sees them. kubeloop's reactor reads `posting`
    (whether log lines become Events: kopf posts only explicit `kopf.event()`s unless
    `posting.loggers` is set); the other sections are accepted and not used."""

    def __init__(self):
        self.posting = _Section()
        self.posting.enabled = True
        self.posting.loggers = False
        self.posting.level = _logging.INFO
        self.persistence = _Section()
        self.execution = _Section()
        self.watching = _Section()
        self.peering = _Section()
        self.batching = _Section()
        self.networking = _Section()


_settings = OperatorSettings()


class _Registry:
    def __init__(self):
        self.handlers = []

    def add(self, reason, fn, args, options):
        supported = {"id", "retries", "backoff", "errors", "labels", "annotations", "optional", "param",
                     "interval", "initial_delay", "group", "version", "plural", "kind"}
        for key, value in options.items():
            if key not in supported and value is not None:
                raise ValueError("kopf.%s(%s=...) is not supported by kubeloop's operator host" % (
                    "timer" if reason == "timer" else "on." + reason, key))
        for key in ("labels", "annotations"):
            for value in (options.get(key) or {}).values():
                if callable(value):
                    raise ValueError("kopf filters by callable (%s=) are not supported by kubeloop's operator host" % key)
        group, version, name = _selector(args, options)
        handler_id = options.get("id") or _callable_id(fn)

        def filters(values):
            return {k: ("*present*" if v is PRESENT else "*absent*" if v is ABSENT else str(v)) for k, v in (values or {}).items()}

        self.handlers.append({
            "fn": fn, "id": handler_id, "reason": reason, "group": group, "version": version, "name": name,
            "interval": options.get("interval"), "initial_delay": options.get("initial_delay"),
            "optional": bool(options.get("optional")), "retries": options.get("retries"),
            "backoff": options.get("backoff"), "errors": options.get("errors"), "param": options.get("param"),
            "labels": filters(options.get("labels")), "annotations": filters(options.get("annotations")),
        })

    def posting(self):
        p = _settings.posting
        return {"enabled": bool(getattr(p, "enabled", True)), "loggers": bool(getattr(p, "loggers", False)),
                "level": int(getattr(p, "level", _logging.INFO))}

    def describe(self):
        seen = set()
        out = []
        for h in self.handlers:
            key = (h["reason"], h["id"])
            if key in seen:
                raise ValueError("Handler %r is registered twice for %s (kopf needs unique ids: id=...)" % (h["id"], h["reason"]))
            seen.add(key)
            out.append({k: v for k, v in h.items() if k not in ("fn", "param")})
        return out


_registry = _Registry()


def _callable_id(fn):
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    if getattr(fn, "__name__", "") == "<lambda>":
        return "lambda:%s:%d" % (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    return str(getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn))))


def _selector(args, options):
    """kopf's resource selector: (name), (version or group/version, name), (group, version, name)."""
    group, version, name = options.get("group"), options.get("version"), options.get("plural") or options.get("kind")
    args = [a for a in args if a is not None]
    if len(args) == 1:
        name = args[0]
    elif len(args) == 2:
        if "/" in args[0]:
            group, version = args[0].split("/", 1)
        else:
            version = args[0]
        name = args[1]
    elif len(args) == 3:
        group, version, name = args
    elif len(args) > 3:
        raise TypeError("kopf resource selectors take at most (group, version, plural), got %r" % (args,))
    if not name:
        raise TypeError("kopf handlers need a resource: (group, version, plural) or a plural")
    return group, version, name


def _decorator(reason):
    def on(*args, **options):
        def register(fn):
            _registry.add(reason, fn, args, options)
            return fn
        return register
    return on


def _unsupported(name):
    def refuse(*args, **options):
        raise ValueError("%s is not supported by kubeloop's operator host (it runs kopf.on.create, update, "
                         "delete, resume and kopf.timer)" % name)
    return refuse


class on:
    create = staticmethod(_decorator("create"))
    event = staticmethod(_unsupported("kopf.on.event"))
    field = staticmethod(_unsupported("kopf.on.field"))
    validate = staticmethod(_unsupported("kopf.on.validate"))
    mutate = staticmethod(_unsupported("kopf.on.mutate"))
    probe = staticmethod(_unsupported("kopf.on.probe"))
    update = staticmethod(_decorator("update"))
    delete = staticmethod(_decorator("delete"))
    resume = staticmethod(_decorator("resume"))

    @staticmethod
    def startup(**options):
        # Operator-level activities run once at start in kopf; here a startup handler is called
        # with `settings` and `logger` when the file loads.
        def register(fn):
            fn(settings=_settings, logger=_logging.getLogger("kopf"), memo=Memo(), retry=0, param=options.get("param"))
            return fn
        return register

    @staticmethod
    def cleanup(**options):
        return lambda fn: fn

    @staticmethod
    def login(**options):
        return lambda fn: fn


timer = _decorator("timer")
daemon = _unsupported("kopf.daemon")
index = _unsupported("kopf.index")


def _owner_body():
    if _host.body is None:
        raise LookupError("kopf.adopt() needs an owner outside a handler")
    return _host.body


def append_owner_reference(objs, owner=None, *, controller=True, block_owner_deletion=True):
    owner = owner if owner is not None else _owner_body()
    meta = owner.get("metadata", {})
    reference = {"apiVersion": owner.get("apiVersion"), "kind": owner.get("kind"), "name": meta.get("name"),
                 "uid": meta.get("uid"), "controller": controller, "blockOwnerDeletion": block_owner_deletion}
    for obj in objs if isinstance(objs, (list, tuple)) else [objs]:
        refs = obj.setdefault("metadata", {}).setdefault("ownerReferences", [])
        if not any(r.get("uid") == reference["uid"] for r in refs):
            refs.append(dict(reference))


def harmonize_naming(objs, name=None, strict=False):
    name = name if name is not None else _owner_body().get("metadata", {}).get("name")
    for obj in objs if isinstance(objs, (list, tuple)) else [objs]:
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and not meta.get("generateName"):
            if strict:
                meta["name"] = name
            else:
                meta["generateName"] = name + "-"


def adjust_namespace(objs, namespace=None):
    namespace = namespace if namespace is not None else _owner_body().get("metadata", {}).get("namespace")
    for obj in objs if isinstance(objs, (list, tuple)) else [objs]:
        meta = obj.setdefault("metadata", {})
        if namespace and not meta.get("namespace"):
            meta["namespace"] = namespace


def label(objs, labels=None, *, forced=False, nested=None):
    labels = labels if labels is not None else _owner_body().get("metadata", {}).get("labels", {})
    for obj in objs if isinstance(objs, (list, tuple)) else [objs]:
        current = obj.setdefault("metadata", {}).setdefault("labels", {})
        for k, v in labels.items():
            if forced or k not in current:
                current[k] = v


def adopt(objs, owner=None, *, forced=False, strict=False, nested=None):
    """kopf.adopt: owner reference, name and namespace from the owner (the handler's object)."""
    plain = objs if isinstance(objs, (list, tuple)) else [objs]
    dicts = []
    for obj in plain:
        if isinstance(obj, dict):
            dicts.append(obj)
        else:
            dicts.append(object.__getattribute__(obj, "_data") if isinstance(obj, _kubernetes.Model) else obj.to_dict())
    append_owner_reference(dicts, owner)
    harmonize_naming(dicts, owner.get("metadata", {}).get("name") if owner else None, strict=strict)
    adjust_namespace(dicts, owner.get("metadata", {}).get("namespace") if owner else None)
    label(dicts, owner.get("metadata", {}).get("labels", {}) if owner else None, forced=forced)


class Patch(dict):
    """The handler's `patch`: a dict kopf merges into the object, whose stanzas are also
    attributes that appear when first touched (`patch.metadata.labels['x'] = 'y'`)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = self.get(name)
        if not isinstance(value, Patch):
            value = Patch(value or {})
            self[name] = value
        return value

    def __setattr__(self, name, value):
        self[name] = value

    @property
    def meta(self):
        return self.__getattr__("metadata")


def _prune(value):
    """A patch without the stanzas a handler only looked at (`patch.spec` read, never set)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _prune(v)
            if not (isinstance(v, dict) and not v and isinstance(value.get(k), Patch)):
                out[k] = v
        return out
    return value


def _reference(obj):
    if isinstance(obj, _kubernetes.Model):
        obj = object.__getattribute__(obj, "_data")
    elif not isinstance(obj, dict) and hasattr(obj, "to_dict"):
        obj = obj.to_dict()
    meta = obj.get("metadata", {}) if isinstance(obj, dict) else {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta.get("name"),
            "uid": meta.get("uid"), "namespace": meta.get("namespace")}


def event(objs, *, type, reason, message=""):
    """kopf.event: an Event on each object, posted by the simulation when the handler returns."""
    for obj in objs if isinstance(objs, (list, tuple)) else [objs]:
        _host.events.append({"object": _reference(obj), "type": type, "reason": reason, "message": str(message)})


def info(objs, *, reason, message=""):
    event(objs, type="Normal", reason=reason, message=message)


def warn(objs, *, reason, message=""):
    event(objs, type="Warning", reason=reason, message=message)


def exception(objs, *, reason="", message="", exc=None):
    if exc is None:
        exc = _sys.exc_info()[1]
    reason = reason or (type(exc).__name__ if exc is not None else "Error")
    message = "%s %s" % (message, exc) if message and exc is not None else (message or str(exc or ""))
    event(objs, type="Error", reason=reason, message=message)


class _Logger:
    """The handler's `logger`: kopf posts INFO and above as Events on the object."""

    def __init__(self, records):
        self.records = records

    def _log(self, level, msg, *args, **kw):
        text = str(msg) % args if args else str(msg)
        self.records.append({"level": level, "message": text})
        _sys.stderr.write("[%s] %s\n" % (level.upper(), text))

    def debug(self, msg, *args, **kw):
        _sys.stderr.write("[DEBUG] %s\n" % (str(msg) % args if args else msg))

    def info(self, msg, *args, **kw):
        self._log("info", msg, *args)

    def warning(self, msg, *args, **kw):
        self._log("warning", msg, *args)

    warn = warning

    def error(self, msg, *args, **kw):
        self._log("error", msg, *args)

    def exception(self, msg, *args, **kw):
        self._log("error", msg, *args)

    def critical(self, msg, *args, **kw):
        self._log("critical", msg, *args)


class _StepBudgetExceeded(BaseException):
    """Raised into a handler that ran past its budget of Python lines; not an `Exception`, so a
    handler's `except Exception` does not swallow it."""


class _Suspend(BaseException):
    """Unwinds a handler at an API request whose answer has not come yet: raised only by the
    page's replaying host (host_page.py), which runs the call again from its start once the
    answer arrives. Natively a request waits for its answer and this is never raised."""


class _Clock:
    """Simulated time for one handler call: `time.time()` and friends read it; `time.sleep` moves
    it on without waiting."""
    now = 0.0
    epoch = 0.0


def _sim_time():
    return _Clock.epoch + _Clock.now


def _sim_monotonic():
    return _Clock.now


def _sim_sleep(seconds):
    _Clock.now += max(0.0, float(seconds))


class _SimDatetime(_datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        moment = _datetime.datetime.fromtimestamp(_sim_time(), tz or _datetime.timezone.utc)
        return moment if tz is not None else moment.replace(tzinfo=None)

    @classmethod
    def utcnow(cls):
        return _datetime.datetime.fromtimestamp(_sim_time(), _datetime.timezone.utc).replace(tzinfo=None)

    @classmethod
    def today(cls):
        return cls.now()


_real_datetime = _datetime.datetime


def _install_determinism():
    _time.time = _sim_time
    _time.monotonic = _sim_monotonic
    _time.perf_counter = _sim_monotonic
    _time.sleep = _sim_sleep
    _time.time_ns = lambda: int(_sim_time() * 1e9)
    _time.monotonic_ns = lambda: int(_sim_monotonic() * 1e9)
    _datetime.datetime = _SimDatetime
    _uuid.uuid4 = lambda: _uuid.UUID(int=_random.getrandbits(128), version=4)


_install_determinism()


def _plain_result(value):
    try:
        return _json.loads(_json.dumps(_kubernetes._plain(value)))
    except (TypeError, ValueError):
        return str(value)


class _Host:
    send = None
    receive = None
    body = None
    events = []

    def request(self, request):
        self.send({"op": "request", **request})
        answer = self.receive()
        if answer.get("op") != "answer":
            raise RuntimeError("kubeloop: expected an answer, got %r" % answer.get("op"))
        return answer

    def call(self, message):
        kw = message.get("kwargs", {})
        handler = next((h for h in _registry.handlers if h["id"] == message["handler"] and h["reason"] == kw.get("reason_of")), None)
        if handler is None:
            handler = next((h for h in _registry.handlers if h["id"] == message["handler"]), None)
        if handler is None:
            return {"op": "done", "outcome": "exception", "message": "no handler %r" % message["handler"]}
        _Clock.now = message.get("now_ms", 0) / 1000.0
        _Clock.epoch = message.get("epoch_ms", 0) / 1000.0
        _random.seed(message.get("seed", 0))
        records = []
        body = kw.get("body") or {}
        self.body = body
        meta = body.setdefault("metadata", {})
        patch = Patch()
        self.events = []
        kwargs = {
            "body": body, "spec": body.get("spec", {}), "meta": meta, "metadata": meta,
            "status": body.get("status", {}), "name": meta.get("name"), "namespace": meta.get("namespace"),
            "uid": meta.get("uid"), "labels": meta.get("labels", {}), "annotations": meta.get("annotations", {}),
            "patch": patch, "logger": _Logger(records), "retry": kw.get("retry", 0),
            "started": _SimDatetime.now(), "runtime": _datetime.timedelta(0),
            "diff": tuple(tuple(d[:1]) + (tuple(d[1]),) + tuple(d[2:]) for d in kw.get("diff", [])),
            "old": kw.get("old"), "new": kw.get("new"), "reason": kw.get("reason"),
            "memo": Memo(), "param": handler.get("param"), "resource": kw.get("resource"),
            "event": kw.get("reason"), "type": None,
        }
        budget = message.get("budget", 100000)
        steps = [0]

        def local(frame, event, arg):
            if event == "line":
                steps[0] += 1
                if steps[0] > budget:
                    raise _StepBudgetExceeded()
            return local

        def tracer(frame, event, arg):
            if frame.f_code.co_filename.startswith("<kubeloop"):
                return None
            if steps[0] > budget:
                raise _StepBudgetExceeded()
            return local

        outcome = {"op": "done"}
        previous = _kubernetes._transport
        _kubernetes._transport = self.request
        _sys.settrace(tracer)
        try:
            result = handler["fn"](**kwargs)
        except _Suspend:
            raise
        except _StepBudgetExceeded:
            outcome.update(outcome="budget", message="the handler ran past its budget of %d Python lines" % budget)
        except TemporaryError as e:
            outcome.update(outcome="temporary", message=str(e) or repr(e), delay=e.delay)
        except PermanentError as e:
            outcome.update(outcome="permanent", message=str(e) or repr(e))
        except RecursionError as e:
            outcome.update(outcome="exception", message=str(e) or repr(e))
        except Exception as e:
            outcome.update(outcome="exception", message=str(e) or repr(e))
        except BaseException as e:
            outcome.update(outcome="exception", message=str(e) or repr(e))
        else:
            outcome.update(outcome="success", result=_plain_result(result))
        finally:
            _sys.settrace(None)
            _kubernetes._transport = previous
            self.body = None
        outcome["patch"] = _plain_result(_prune(patch))
        outcome["logs"] = records
        outcome["events"] = self.events
        self.events = []
        outcome["steps"] = steps[0]
        return outcome


_host = _Host()
