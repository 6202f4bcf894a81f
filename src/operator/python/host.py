"""kubeloop's operator host, Python side: one handler call at a time, over JSON lines.

The simulation (src/operator) decides everything kopf's reactor decides -- which handlers a
change calls, retries, progress, events -- and asks this process only to run one handler call.
A call's API requests are sent out one by one; each waits for its answer (the simulation sends
it after the request's round trip in simulated time). Time and randomness inside a call come
from the message that started it, so the same messages give the same replies.

Messages (one JSON object a line):
  in  {"op": "load", "modules": {NAME: SOURCE}, "path": P, "source": S}
  out {"op": "ready", "handlers": [...], "posting": {...}} | {"op": "failed", "error": TEXT}
  in  {"op": "call", "handler": ID, "kwargs": {...}, "now_ms": T, "epoch_ms": E, "seed": N, "budget": STEPS}
  out {"op": "request", "verb": ..., ...}   (then in {"op": "answer", ...}), repeated
  out {"op": "done", "outcome": "success|temporary|permanent|exception|budget", ...}
"""
import json
import sys
import types

_protocol_out = sys.stdout
_protocol_in = sys.stdin


def _send(message):
    _protocol_out.write(json.dumps(message, separators=(",", ":"), sort_keys=True) + "\n")
    _protocol_out.flush()


def _receive():
    line = _protocol_in.readline()
    if not line:
        raise SystemExit(0)
    return json.loads(line)


def _install(modules):
    for name in ("kubernetes", "kopf"):
        module = types.ModuleType(name)
        module.__file__ = "<kubeloop " + name + ">"
        sys.modules[name] = module
        exec(compile(modules[name], module.__file__, "exec"), module.__dict__)


def _load(message):
    import traceback
    try:
        _install(message["modules"])
    except Exception:
        return {"op": "failed", "error": "kubeloop's operator runtime failed to load:\n" + traceback.format_exc()}
    import kopf
    kopf._host.send = _send
    kopf._host.receive = _receive
    try:
        code = compile(message["source"], message["path"], "exec")
        namespace = {"__name__": "__main__", "__file__": message["path"]}
        exec(code, namespace)
    except SyntaxError as e:
        return {"op": "failed", "error": "".join(traceback.format_exception_only(type(e), e)).rstrip()}
    except BaseException as e:
        lines = traceback.format_exception(type(e), e, e.__traceback__)
        # The frames of this host are not the learner's: keep those of their file.
        kept = [lines[0]] + [l for l in lines[1:-1] if message["path"] in l] + [lines[-1]]
        return {"op": "failed", "error": "".join(kept).rstrip()}
    try:
        return {"op": "ready", "handlers": kopf._registry.describe(), "posting": kopf._registry.posting()}
    except ValueError as e:
        return {"op": "failed", "error": str(e)}


def _limit_memory():
    # A handler that allocates without end meets MemoryError at this ceiling (the address
    # space this process may map), is reported as a failed handler, and the machine is spared.
    try:
        import resource
        ceiling = 2 << 30
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > ceiling:
            resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    except (ImportError, ValueError, OSError):
        pass


def main():
    # A handler's print() must not write into the protocol, nor its input() read from it.
    sys.stdout = sys.stderr
    sys.stdin = open("/dev/null") if sys.platform != "win32" else None
    _limit_memory()
    first = _receive()
    reply = _load(first)
    _send(reply)
    if reply["op"] != "ready":
        return
    import kopf
    while True:
        message = _receive()
        if message.get("op") == "call":
            _send(kopf._host.call(message))
        else:
            _send({"op": "failed", "error": "unexpected message %r" % (message.get("op"),)})


# Run as the program natively; the page's replaying host (host_page.py) imports `_load` from it.
if __name__ == "__main__":
    main()
