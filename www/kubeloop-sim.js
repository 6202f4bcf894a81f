// <kubeloop-sim>: the kubeloop widget as a custom element, for course pages.
//
//   <script type="module" src="kubeloop/kubeloop-sim.js"></script>
//   <kubeloop-sim scenario="default" seed="1" panels="cluster,events"></kubeloop-sim>
//
// It loads the page's own wasm-bindgen module (built by Trunk without file hashes, next to this
// file), attaches a shadow root so the host page's CSS stays out, injects the widget's
// stylesheet into it and calls the exported `mount`. Each element is its own simulation; removing
// the element destroys it. Attributes are the page's query parameters (docs/embedding.md).
// Messages: `element.send({type: 'command', command: 'kubectl get pods'})` in, and a `kubeloop`
// CustomEvent per message out (`event.detail` is the message). It is an external module script,
// so it runs under a host's Content-Security-Policy of script-src 'self' 'wasm-unsafe-eval'.

const HERE = new URL('./', import.meta.url);
const OPTIONS = ['scenario', 'seed', 'speed', 'autoplay', 'panels', 'controls', 'theme', 'lesson'];
// The widget's stylesheets, injected into each shadow root.
const STYLESHEETS = ['style.css', 'lessons.css'];

let bindings;
/** Loads and initialises the wasm module once per page; every element shares it. */
function load() {
  bindings ??= import(new URL('kubeloop-web.js', HERE).href).then(async (module) => {
    await module.default({ module_or_path: new URL('kubeloop-web_bg.wasm', HERE) });
    return module;
  });
  return bindings;
}

class KubeloopSim extends HTMLElement {
  static observedAttributes = OPTIONS;
  #handle = null;
  #starting = null;
  #queue = [];

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
  }

  connectedCallback() {
    this.#start();
  }

  disconnectedCallback() {
    this.#stop();
  }

  attributeChangedCallback() {
    // A changed option starts the widget again with it (only once it has started).
    if (this.isConnected && (this.#handle || this.#starting)) {
      this.#stop();
      this.#start();
    }
  }

  /**
   * Sends a message to the widget (see docs/embedding.md). Before it has mounted (the module
   * still loading, or the element restarting) messages wait here, in order; the widget handles
   * them at its first frame, after `ready`. None is dropped: if the module cannot load, each
   * waiting message is answered with an `error` message.
   */
  send(message) {
    if (this.#handle) this.#handle.send(message);
    else this.#queue.push(message);
  }

  async #start() {
    const token = Symbol('start');
    this.#starting = token;
    let module;
    try {
      module = await load();
    } catch (error) {
      this.shadowRoot.textContent = `kubeloop could not load: ${error.message}`;
      for (const m of this.#queue.splice(0)) {
        this.#deliver({ source: 'kubeloop', type: 'error', message: `error: kubeloop could not load, so the message ${JSON.stringify(m)} was not handled` });
      }
      throw error;
    }
    // Removed, or restarted, while the module loaded.
    if (this.#starting !== token || !this.isConnected) return;
    this.#starting = null;
    const styles = STYLESHEETS.map((name) => {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = new URL(name, HERE).href;
      return link;
    });
    const mountPoint = document.createElement('div');
    this.shadowRoot.replaceChildren(...styles, mountPoint);
    const options = { base: HERE.href, onmessage: (message) => this.#deliver(message) };
    for (const name of OPTIONS) {
      if (this.hasAttribute(name)) options[name] = this.getAttribute(name);
    }
    this.#handle = module.mount(mountPoint, options);
    for (const message of this.#queue.splice(0)) this.#handle.send(message);
  }

  #stop() {
    this.#starting = null;
    if (this.#handle) {
      this.#handle.destroy();
      this.#handle.free();
      this.#handle = null;
    }
    this.removeAttribute('data-ready');
    this.shadowRoot.replaceChildren();
  }

  #deliver(message) {
    if (message.type === 'ready') this.setAttribute('data-ready', 'true');
    this.dispatchEvent(new CustomEvent('kubeloop', { detail: message }));
  }
}

if (!customElements.get('kubeloop-sim')) customElements.define('kubeloop-sim', KubeloopSim);
