"""kubeloop's operator host in the page: the same protocol as host.py, one message in and one
reply out per `handle(text)` call, with no blocking read.

In the page the interpreter (Pyodide) runs on the page's own thread and must return to it
between messages, so a handler cannot wait inside an API request for its answer. Instead a
call is REPLAYED: when a handler reaches a request whose answer has not come, the run is unwound
(kopf._Suspend) and the request is the reply. When the answer comes, the call runs again from
its start; its earlier requests are answered from the call's log, in order, without leaving the
interpreter, and it goes one request further. Everything a run depends on is reset from the
call's message (time, the random seed, the body), so each run repeats the one before up to the
new answer, and the simulation sees the same requests and the same outcome as natively.

What replay cannot repeat is said, never hidden: if a run's k-th request differs from the
logged one (the handler read state that survives between runs, such as a module-level counter
it changes) the call ends as a failed handler with a message saying so. Output a run already
printed is not printed again. The step budget counts each run's lines, and a run repeats the
lines of the runs before it, so a call is stopped at the same line as natively.

Natively (the tests compare it with host.py) it reads and writes JSON lines like host.py. In
the page, www/operator-python.js first sends `{"op": "runtime", "modules": {...}, "host": SOURCE}`
(the files it fetched beside itself), so a `load` carries only the learner's file.
"""
import json
import sys

_KOPF = "kopf"


class _Diverged(BaseException):
    """A replayed run asked for something else than the run before it at the same point."""


class _Output:
    """Collects one call's print()s and log lines across its runs; only the part beyond what an
    earlier run printed goes out."""

    def __init__(self, target):
        self.target = target
        self.text = []
        self.shown = 0

    def write(self, s):
        self.text.append(s)
        return len(s)

    def flush(self):
        pass

    def release(self):
        whole = "".join(self.text)
        self.text = []
        if len(whole) > self.shown:
            self.target.write(whole[self.shown:])
            self.target.flush()
            self.shown = len(whole)


class _Call:
    def __init__(self, message):
        self.message = message
        self.log = []  # [(request text, answer text)] answered so far, in order
        self.output = _Output(sys.__stderr__)
        self.pending = None  # the request this run stopped at
        self.cursor = 0
        self.diverged = None


_call = None
# The runtime's sources (kopf, kubernetes, host.py), when the page hands them over once
# (`{"op": "runtime", ...}`) instead of in every `load`.
_runtime = {}


def _dumps(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _request(request):
    # kopf._host.request, replaying: answers from the log, or unwinds at the first request not
    # answered yet. A handler that catches the unwinding and asks again is unwound again.
    call = _call
    if call.pending is not None or call.diverged is not None:
        raise sys.modules[_KOPF]._Suspend()
    sent = _dumps({"op": "request", **request})
    if call.cursor < len(call.log):
        logged, answer = call.log[call.cursor]
        if logged != sent:
            call.diverged = (
                "kubeloop replays a handler call from its start in the page, and this run's "
                "request %d differs from the one before it (%s, then %s): the handler depends on "
                "state that changes between runs, such as a module-level variable it changes"
                % (call.cursor + 1, logged[:200], sent[:200])
            )
            raise _Diverged(call.diverged)
        call.cursor += 1
        return json.loads(answer)
    call.pending = sent
    raise sys.modules[_KOPF]._Suspend()


def _run():
    """One run of the current call from its start; the reply: a request or the outcome."""
    global _call
    call = _call
    kopf = sys.modules[_KOPF]
    call.pending = None
    call.cursor = 0
    call.diverged = None
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = call.output
    try:
        outcome = kopf._host.call(json.loads(_dumps(call.message)))
    except kopf._Suspend:
        outcome = None
    finally:
        sys.stdout, sys.stderr = saved
    if call.pending is not None and call.diverged is None:
        # The handler stopped at a request (or swallowed the unwinding: what it did after is
        # discarded, as it went on without the answer).
        return json.loads(call.pending)
    call.output.release()
    _call = None
    if call.diverged is not None:
        outcome = outcome or {"op": "done"}
        outcome.update(outcome="exception", message=call.diverged)
    return outcome


def _load(message):
    global _call
    _call = None
    message = {**_runtime, **message}
    # A restarted operator starts afresh: the runtime and the learner's module are loaded
    # again (kopf's time patches are undone first, so they do not stack).
    old = sys.modules.get(_KOPF)
    if old is not None:
        import datetime
        datetime.datetime = old._real_datetime
    host = sys.modules.get("kubeloop_host")
    if host is None:
        import types
        host = types.ModuleType("kubeloop_host")
        host.__file__ = "<kubeloop host>"
        exec(compile(message["host"], host.__file__, "exec"), host.__dict__)
        sys.modules["kubeloop_host"] = host
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        reply = host._load(message)
    finally:
        sys.stdout = saved
    if reply.get("op") == "ready":
        sys.modules[_KOPF]._host.request = _request
    return reply


def handle(text):
    """One message in (JSON text), one reply out (JSON text)."""
    global _call
    message = json.loads(text)
    op = message.get("op")
    if op == "runtime":
        _runtime.update(modules=message["modules"], host=message["host"])
        reply = {"op": "ok"}
    elif op == "load":
        reply = _load(message)
    elif op == "call":
        _call = _Call(message)
        reply = _run()
    elif op == "answer" and _call is not None and _call.pending is not None:
        _call.log.append((_call.pending, _dumps(message)))
        reply = _run()
    else:
        reply = {"op": "failed", "error": "unexpected message %r" % (op,)}
    return _dumps(reply)


if __name__ == "__main__" and sys.platform != "emscripten":
    for _line in sys.stdin:
        sys.__stdout__.write(handle(_line) + "\n")
        sys.__stdout__.flush()
