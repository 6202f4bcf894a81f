// The page's Python, loaded only when the Operator panel opens (src/web/operator_view.rs adds
// this module's <script>): Pyodide from this build's own python/ folder (npm `pyodide`, copied
// by Trunk; never a CDN), with kubeloop's operator runtime — host_page.py, host.py, kopf.py and
// kubernetes.py from src/operator/python, copied beside it — installed in it.
//
// It sets `globalThis.kubeloopPython`: `start()` (a promise, once) and `exchange(text)`, one
// protocol message in and the reply out, synchronously — the Rust side's `Interpreter`.
import { loadPyodide } from './pyodide.mjs';

const HERE = new URL('./', import.meta.url);
const RUNTIME = ['host_page.py', 'host.py', 'kopf.py', 'kubernetes.py'];

async function text(name) {
  const response = await fetch(new URL(name, HERE));
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  return response.text();
}

let starting = null;
let handle = null;

function start() {
  starting ??= (async () => {
    const began = performance.now();
    const [python, sources] = await Promise.all([
      // The learner's print()s and log lines go to the browser's console.
      loadPyodide({ indexURL: HERE.href, stdout: (l) => console.log('[operator]', l), stderr: (l) => console.log('[operator]', l) }),
      Promise.all(RUNTIME.map(text)),
    ]);
    const [hostPage, host, kopf, kubernetes] = sources;
    python.runPython(hostPage);
    handle = python.globals.get('handle');
    const ready = JSON.parse(handle(JSON.stringify({ op: 'runtime', host, modules: { kopf, kubernetes } })));
    if (ready.op !== 'ok') throw new Error(`the operator runtime did not install: ${JSON.stringify(ready)}`);
    globalThis.kubeloopPython.startMs = performance.now() - began;
  })();
  return starting;
}

function exchange(message) {
  if (!handle) throw new Error('Python has not finished loading');
  return handle(message);
}

globalThis.kubeloopPython = { start, exchange, startMs: null };
