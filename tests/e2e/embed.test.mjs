// End-to-end tests of embedding (issue 6): the page in an iframe driven by postMessage, the
// <kubeloop-sim> custom element (several on one page, host CSS kept out, removal destroys it),
// the origin allow-list, malformed parameters and messages shown in the widget, scenario files
// by URL, and the example course page under a strict Content-Security-Policy.
//
// Host pages are served by routing one extra address of the test server to inline HTML, so they
// share its origin (127.0.0.1); the harness still fails any test on a console error, an uncaught
// exception or a request off this machine.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, openReady } from './harness.mjs';

const live = setUp();

/** Serves `html` at `<server>/<name>` for this page only, and opens it. */
async function openHost(page, name, html) {
  const url = `${live.server.url}${name}`;
  await page.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: html }));
  await page.goto(url, { waitUntil: 'load' });
}

/** A host page with one iframe of the widget; it keeps every message from kubeloop in `window.received`. */
function iframeHost(query) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>host</title></head><body>
<iframe id="w" style="width:1000px;height:600px" src="index.html${query}"></iframe>
<script>
window.received = [];
window.addEventListener('message', (e) => {
  if (e.source === document.getElementById('w').contentWindow && e.data && e.data.source === 'kubeloop') window.received.push(e.data);
});
window.sendToWidget = (message) => document.getElementById('w').contentWindow.postMessage(message, location.origin);
</script></body></html>`;
}

/** Waits until the host has received a message matching `predicate` (a function source). */
function waitForMessage(page, predicate, timeout = 30_000) {
  return page.waitForFunction(`window.received.some(${predicate})`, undefined, { timeout, polling: 100 });
}

test('an iframe is driven by postMessage and posts ready, resize, events and command results', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openHost(page, 'iframe-host.html', iframeHost('?scenario=default&seed=2&speed=10'));
    await waitForMessage(page, "(m) => m.type === 'ready'");
    const ready = await page.evaluate(() => window.received.find((m) => m.type === 'ready'));
    assert.equal(ready.scenario, 'default');
    assert.equal(ready.seed, 2);
    assert.match(ready.version, /^\d+\.\d+\.\d+/);

    // The cluster comes up: the scheduler's events arrive as they are written.
    await waitForMessage(page, "(m) => m.type === 'event' && m.reason === 'Scheduled'");
    const scheduled = await page.evaluate(() => window.received.find((m) => m.type === 'event' && m.reason === 'Scheduled'));
    assert.equal(scheduled.involvedObject.kind, 'Pod');
    assert.equal(scheduled.eventType, 'Normal');
    assert.match(scheduled.message, /^Successfully assigned default\/web-[a-z0-9]+-[a-z0-9]+ to node-\d$/);
    assert.match(scheduled.time, /^2026-01-01T00:00:\d\dZ$/);

    const resize = await page.evaluate(() => window.received.find((m) => m.type === 'resize'));
    assert.ok(resize && resize.height > 200, `resize reports the content height: ${JSON.stringify(resize)}`);

    // A command from the host: its result and the events it causes come back.
    await page.evaluate(() => window.sendToWidget({ type: 'command', command: 'kubectl scale deployment web --replicas=5' }));
    await waitForMessage(page, "(m) => m.type === 'command' && m.command === 'kubectl scale deployment web --replicas=5'");
    const result = await page.evaluate(() => window.received.find((m) => m.type === 'command'));
    assert.equal(result.ok, true);
    assert.equal(result.output, 'deployment.apps/web scaled');
    await waitForMessage(page, "(m) => m.type === 'event' && m.reason === 'ScalingReplicaSet' && / to 5/.test(m.message)");
    const frame = page.frameLocator('#w');
    await frame.locator('[data-testid="pod"] >> nth=4').waitFor({ timeout: 30_000 });

    // Pause, speed and reset from the host.
    await page.evaluate(() => window.sendToWidget({ type: 'pause' }));
    await frame.locator('.app[data-mode="paused"]').waitFor();
    await page.evaluate(() => window.sendToWidget(JSON.stringify({ type: 'speed', speed: 25 })));
    await page.evaluate(() => window.sendToWidget({ type: 'play' }));
    await frame.locator('.app[data-mode="playing"]').waitFor();
    assert.equal(await frame.getByTestId('speed').inputValue(), '25');
    await page.evaluate(() => window.sendToWidget({ type: 'scenario', scenario: 'scale-up' }));
    await frame.getByTestId('scenario').filter({ hasText: 'scenario scale-up' }).waitFor();
    assert.equal(await frame.getByTestId('page-error').count(), 0, 'no error so far');
  });
});

test('messages an iframe host posts before ready are kept and handled in order once it is ready', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    // The wasm is held back until the host has posted, so the messages surely arrive before the
    // app exists, let alone listens.
    let release;
    const held = new Promise((done) => (release = done));
    let requested;
    const wasmRequested = new Promise((done) => (requested = done));
    await page.route('**/kubeloop-web_bg.wasm', async (route) => {
      requested();
      await held;
      await route.continue();
    });
    const url = `${live.server.url}iframe-early.html`;
    await page.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: iframeHost('?scenario=default&seed=2&speed=10') }));
    // Not 'load': the frame cannot finish loading while its wasm is held.
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await wasmRequested;
    const before = await page.evaluate(() => {
      window.sendToWidget({ type: 'command', command: 'kubectl scale deployment web --replicas=5' });
      window.sendToWidget({ type: 'command', command: 'kubectl scale deployment web --replicas=4' });
      return window.received.length;
    });
    assert.equal(before, 0, 'posted before the widget said anything, ready included');
    release();
    await waitForMessage(page, "(m) => m.type === 'command' && m.command.endsWith('--replicas=4')");
    const seen = await page.evaluate(() => window.received.filter((m) => m.type === 'ready' || m.type === 'command').map((m) => m.type === 'ready' ? 'ready' : `${m.ok} ${m.command}`));
    assert.deepEqual(seen, [
      'ready',
      'true kubectl scale deployment web --replicas=5',
      'true kubectl scale deployment web --replicas=4',
    ], 'handled once ready, in the order posted');
    // Their effect: the cluster settles at four pods.
    const frame = page.frameLocator('#w');
    await frame.locator('[data-testid="pod"][data-status="Running"] >> nth=3').waitFor({ timeout: 30_000 });
    assert.equal(await frame.getByTestId('page-error').count(), 0);
  });
});

test('malformed and unknown messages are ignored with a clear error in the widget and to the host', { timeout: 90_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openHost(page, 'iframe-bad.html', iframeHost('?seed=1'));
    await waitForMessage(page, "(m) => m.type === 'ready'");
    await page.evaluate(() => {
      window.sendToWidget('{not json');
      window.sendToWidget({ type: 'explode' });
      window.sendToWidget({ type: 'speed', speed: 'fast' });
      window.sendToWidget(42);
    });
    await page.waitForFunction(() => window.received.filter((m) => m.type === 'error').length === 4, undefined, { timeout: 30_000 });
    const errors = await page.evaluate(() => window.received.filter((m) => m.type === 'error').map((m) => m.message));
    assert.deepEqual(errors, [
      'error: ignored a message that is not a kubeloop message (expected a JSON object with a string "type")',
      'error: ignored message of unknown type "explode"; known types: command, scenario, speed, play, pause, reset, step, fast-forward, select-pod',
      'error: ignored message "speed": field "speed" must be a number above 0',
      'error: ignored a message that is not a kubeloop message (expected a JSON object with a string "type")',
    ]);
    const banner = page.frameLocator('#w').getByTestId('page-error');
    await banner.waitFor();
    assert.match(await banner.innerText(), /ignored message of unknown type "explode"/);
    // The widget still runs.
    await page.frameLocator('#w').locator('[data-testid="node"][data-ready="True"] >> nth=1').waitFor({ timeout: 30_000 });
  });
});

test('messages from an origin off the allow-list are ignored, and nothing is posted to it', { timeout: 90_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openHost(page, 'iframe-other.html', iframeHost('?seed=1&speed=25&origins=https://course.example'));
    const frame = page.frameLocator('#w');
    await frame.locator('body[data-ready="true"]').waitFor({ timeout: 30_000 });
    await page.evaluate(() => window.sendToWidget({ type: 'command', command: 'kubectl scale deployment web --replicas=7' }));
    await page.evaluate(() => window.sendToWidget({ type: 'pause' }));
    // Let simulated time run on well past any latency: the widget keeps playing, unpaused.
    await frame.locator('.app').evaluate((app) => {
      const start = Number(app.dataset.simTime);
      return new Promise((done) => {
        const check = () => (Number(app.dataset.simTime) > start + 20_000 ? done() : requestAnimationFrame(check));
        check();
      });
    });
    assert.equal(await frame.locator('.app').getAttribute('data-mode'), 'playing', 'the pause was ignored');
    assert.equal(await frame.locator('[data-testid="pod"]').count(), 3, 'the scale was ignored');
    assert.equal(await frame.getByTestId('page-error').count(), 0, 'ignored silently');
    assert.deepEqual(await page.evaluate(() => window.received), [], 'nothing posted to an origin off the list');
  });
});

test('malformed URL parameters each get a clear error and the page runs with the defaults', { timeout: 90_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, `${live.server.url}?seed=abc&speed=fast&theme=blue&panels=cluster,nope&autoplay=maybe&origins=nope&cmd=x`);
    const banner = page.getByTestId('page-error');
    assert.ok(await banner.isVisible());
    const lines = await banner.locator('.error-line').allInnerTexts();
    assert.deepEqual(lines, [
      'error: invalid value "abc" for parameter "seed": must be a whole number from 0 to 18446744073709551615',
      'error: invalid value "fast" for parameter "speed": must be a number above 0 (offered: 0.25 to 100)',
      'error: invalid value "blue" for parameter "theme": must be one of light, dark, auto',
      'error: unknown panel "nope" in parameter "panels"; known: header, cluster, gap, pod, hints, loops, flow, events, commands, console, editor, lesson, or none',
      'error: invalid value "maybe" for parameter "autoplay": must be true or false',
      'error: invalid value "nope" for parameter "origins": each origin must be scheme://host[:port] with no path, or *',
      'error: invalid value "x" for parameter "cmd": must be MILLISECONDS:COMMAND, the simulated time and the command line run then',
    ]);
    await page.waitForSelector('[data-testid="node"][data-ready="True"] >> nth=1', { timeout: 30_000 });
    assert.equal(await page.locator('.plane').count(), 1, 'all panels, the default');
    await page.getByRole('button', { name: 'Dismiss the errors' }).click();
    assert.equal(await banner.count(), 0);
  });
  // A scenario on another origin is refused before any request is made (the harness would flag one).
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, `${live.server.url}?scenario=https://evil.example/x.yaml`);
    await page.getByTestId('page-error').filter({ hasText: 'refusing to load scenario "https://evil.example/x.yaml"' }).waitFor();
    await page.waitForSelector('[data-testid="node"] >> nth=1', { timeout: 30_000 });
  });
});

test('a malformed scenario file is named in the banner and the default cluster runs', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await page.route(`${live.server.url}examples/broken.yaml`, (route) =>
      route.fulfill({ contentType: 'text/yaml', body: 'name: broken\nnodes: [{name: n1, cpu: lots}]\n' }),
    );
    await openReady(page, `${live.server.url}?scenario=examples/broken.yaml`);
    const banner = page.getByTestId('page-error').filter({ hasText: 'error: scenario "examples/broken.yaml": ' });
    await banner.waitFor({ timeout: 30_000 });
    assert.match(await page.getByTestId('scenario').innerText(), /scenario default/);
    await page.waitForSelector('[data-testid="node"] >> nth=1', { timeout: 30_000 });
  });
});

test('parameters choose the scenario file, panels, controls and theme', { timeout: 90_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?scenario=examples/three-nodes.yaml&panels=cluster,events&controls=play,pause&theme=dark&autoplay=false`);
    await page.getByTestId('scenario').filter({ hasText: 'examples/three-nodes.yaml' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.app').getAttribute('data-mode'), 'paused', 'autoplay=false');
    assert.equal(await page.locator('.app').getAttribute('data-sim-time'), '0');
    await page.getByTestId('play').click();
    await page.waitForSelector('[data-testid="node"] >> nth=2', { timeout: 30_000 });
    assert.deepEqual(await page.$$eval('[data-testid="node"]', (els) => els.map((e) => e.dataset.name)), ['node-a', 'node-b', 'node-c']);
    assert.equal(await page.locator('.app').getAttribute('data-theme'), 'dark');
    assert.equal(await page.locator('.plane').count(), 0, 'no loops panel: the stage has no control plane row');
    assert.equal(await page.locator('.header').count(), 0);
    assert.equal(await page.locator('.events-panel').count(), 1);
    assert.equal(await page.getByTestId('reset').count(), 0);
    assert.equal(await page.getByTestId('play').count(), 1);
    const background = await page.locator('.app').evaluate((e) => getComputedStyle(e).backgroundColor);
    assert.equal(background, 'rgb(15, 19, 24)', 'dark although the system is light');
  });
});

/** A host page with `<kubeloop-sim>` elements and hostile CSS. */
const ELEMENT_HOST = `<!doctype html><html><head><meta charset="utf-8"><title>host</title>
<style>.app, .panel, .node { display: none !important; } div { border: 9px solid red; }</style>
<script type="module" src="kubeloop-sim.js"></script></head><body>
<kubeloop-sim id="a" scenario="default" seed="1" speed="10"></kubeloop-sim>
<kubeloop-sim id="b" scenario="scale-up" seed="2" speed="10" panels="cluster,events" controls="none"></kubeloop-sim>
<kubeloop-sim id="c" seed="nope" theme="purple" speed="10"></kubeloop-sim>
<script type="module">
window.got = { a: [], b: [], c: [] };
for (const id of ['a', 'b', 'c']) document.getElementById(id).addEventListener('kubeloop', (e) => window.got[id].push(e.detail));
</script></body></html>`;

/** The pods of the widget `id`, from its shadow root. */
function widgetPods(page, id) {
  return page.evaluate(
    (id) => [...document.getElementById(id).shadowRoot.querySelectorAll('[data-testid="pod"]')].map((e) => e.dataset.name),
    id,
  );
}

test('custom elements run independently in shadow roots, take messages, and are destroyed on removal', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openHost(page, 'element-host.html', ELEMENT_HOST);
    await page.waitForSelector('kubeloop-sim#a[data-ready="true"]', { timeout: 30_000 });
    await page.waitForSelector('kubeloop-sim#b[data-ready="true"]', { timeout: 30_000 });
    await page.waitForSelector('kubeloop-sim#c[data-ready="true"]', { timeout: 30_000 });

    // Host CSS stays out: the widget's .app is laid out and unbordered.
    const look = await page.evaluate(() => {
      const app = document.getElementById('a').shadowRoot.querySelector('.app');
      const box = app.getBoundingClientRect();
      return { height: box.height, border: getComputedStyle(app).borderTopWidth };
    });
    assert.ok(look.height > 200, `the widget is visible: ${JSON.stringify(look)}`);
    assert.equal(look.border, '0px');

    // Each is its own simulation with its own options.
    await page.waitForFunction(() => document.getElementById('a').shadowRoot.querySelectorAll('[data-testid="pod"]').length === 3);
    await page.waitForFunction(() => document.getElementById('b').shadowRoot.querySelectorAll('[data-testid="pod"]').length === 3);
    assert.equal(await page.evaluate(() => document.getElementById('b').shadowRoot.querySelectorAll('.plane, .toolbar').length), 0);
    assert.equal(await page.evaluate(() => document.getElementById('a').shadowRoot.querySelectorAll('.plane, .toolbar').length), 2);
    const ready = await page.evaluate(() => window.got.b.find((m) => m.type === 'ready'));
    assert.deepEqual([ready.scenario, ready.seed], ['scale-up', 2]);

    // A bad attribute: the error is shown in that widget only, which runs with the default.
    const error = await page.evaluate(() => document.getElementById('c').shadowRoot.querySelector('[data-testid="page-error"]')?.innerText);
    assert.match(error, /invalid value "nope" for parameter "seed"/);
    assert.match(error, /invalid value "purple" for parameter "theme"/);
    assert.equal(await page.evaluate(() => document.getElementById('a').shadowRoot.querySelector('[data-testid="page-error"]')), null);

    // Messages in by send(), out as `kubeloop` events.
    await page.evaluate(() => document.getElementById('a').send({ type: 'command', command: 'kubectl scale deployment web --replicas=5' }));
    await page.waitForFunction(() => document.getElementById('a').shadowRoot.querySelectorAll('[data-testid="pod"]').length === 5, undefined, { timeout: 30_000 });
    await page.waitForFunction(() => window.got.a.some((m) => m.type === 'event' && m.reason === 'SuccessfulCreate'));
    assert.equal((await widgetPods(page, 'b')).length >= 3, true);
    assert.ok(!(await page.evaluate(() => window.got.b.some((m) => m.type === 'command'))), 'the other widget heard nothing');

    // Removing an element destroys its app; the others go on.
    await page.evaluate(() => document.getElementById('a').remove());
    const time = () => page.evaluate(() => Number(document.getElementById('b').shadowRoot.querySelector('.app').dataset.simTime));
    const before = await time();
    await page.waitForFunction((t) => Number(document.getElementById('b').shadowRoot.querySelector('.app').dataset.simTime) > t + 1000, before);
    assert.equal(await page.locator('kubeloop-sim#a').count(), 0);
    const afterRemoval = await page.evaluate(() => window.got.a.length);
    await page.waitForFunction((t) => Number(document.getElementById('b').shadowRoot.querySelector('.app').dataset.simTime) > t + 2000, before);
    assert.equal(await page.evaluate(() => window.got.a.length), afterRemoval, 'a removed widget posts nothing more');
  });
});

test('the example course page renders three widgets under a strict CSP without console errors', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    const violations = [];
    page.on('console', (m) => /Content.Security.Policy/i.test(m.text()) && violations.push(m.text()));
    await page.goto(`${live.server.url}course.html`, { waitUntil: 'load' });
    assert.match(await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content'), /script-src 'self' 'wasm-unsafe-eval'/);
    await page.waitForSelector('kubeloop-sim#scale[data-ready="true"]', { timeout: 30_000 });
    await page.waitForSelector('kubeloop-sim#zones[data-ready="true"]', { timeout: 30_000 });
    const frame = page.frameLocator('#frame');
    await frame.locator('body[data-ready="true"]').waitFor({ timeout: 30_000 });
    // The scenario file loads in the second widget.
    await page.waitForFunction(() => document.getElementById('zones').shadowRoot.querySelectorAll('[data-testid="node"]').length === 3, undefined, { timeout: 30_000 });
    // The iframe is fitted to its content and driven by the host's external script.
    await page.waitForFunction(() => document.getElementById('frame').style.height.endsWith('px'), undefined, { timeout: 30_000 });
    await page.locator('#kill:not([disabled])').click();
    await frame.locator('[data-testid="pod"] >> nth=4').waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => /events: [1-9]/.test(document.getElementById('events').textContent));
    assert.deepEqual(violations, []);
  });
});

test('a lesson in an iframe tells its host when a step is completed', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openHost(page, 'lesson-host.html', iframeHost('?lesson=examples/scale-lesson.yaml&speed=100'));
    await waitForMessage(page, "(m) => m.type === 'step-completed'", 60_000);
    const done = await page.evaluate(() => window.received.filter((m) => m.type === 'step-completed'));
    assert.equal(done.length, 1, JSON.stringify(done));
    assert.equal(done[0].lesson, 'scale-lesson');
    assert.equal(done[0].step, 0);
    assert.equal(done[0].title, 'Ask for one more');
    assert.ok(done[0].timeMs > 0);
  });
});
