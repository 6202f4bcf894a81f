// The stage attached to a Kubernetes API (issue 30): the native `kubeloop serve` runs the default
// scenario (a Deployment of three nginx pods on two nodes), the machine's real `kubectl proxy
// --www=dist --www-prefix=/kubeloop/ --api-prefix=/` serves the built page and the API from one
// origin, and the page opened at /kubeloop/?cluster=/ lists and watches the cluster. A `kubectl
// delete pod` run from this test's shell must be seen on the stage: the pod going, its
// replacement waiting in the pending area, then bound and Running, with captions naming the
// ReplicaSet controller, kube-scheduler and the node's kubelet. A read-only proxy
// (`--reject-methods`) makes the Kill button's refusal visible as kubectl prints it. Also: axe on
// the attached page, `kubeloop serve --www` serving the page itself, and screenshots at 1440×900,
// a 360 px phone and 1920×1080 (test-results/attach-*.png).
//
// Needs the native binary (target/debug/kubeloop, built by `cargo build --bin kubeloop` or any
// `cargo test`) and a kubectl ($KUBECTL, the PATH's, or scripts/setup.sh's); without kubectl the
// tests are skipped, except in CI.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT, DIST, RESULTS, launchBrowser, withPage } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

function findKubectl() {
  if (process.env.KUBECTL) return process.env.KUBECTL;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'kubectl'))) return join(dir, 'kubectl');
  }
  const installed = join(ROOT, 'target/kubectl-venv/bin/kubectl');
  return existsSync(installed) ? installed : null;
}

const KUBECTL = findKubectl();
const SKIP = !KUBECTL && !process.env.CI ? 'no kubectl (set $KUBECTL or run scripts/setup.sh)' : false;

function kubeloopBinary() {
  const bin = process.env.KUBELOOP_BIN ?? join(ROOT, 'target/debug/kubeloop');
  if (!existsSync(bin)) {
    const built = spawnSync('cargo', ['build', '--bin', 'kubeloop'], { cwd: ROOT, stdio: 'inherit' });
    assert.equal(built.status, 0, 'cargo build --bin kubeloop');
  }
  return bin;
}

/** A free port on 127.0.0.1. */
function freePort() {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
}

/** Starts a child and waits until its output says `ready` (a pattern); returns it. */
function startChild(command, args, ready) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => fail(new Error(`${command} did not start:\n${output}`)), 30_000);
    const hear = (chunk) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        done(Object.assign(child, { output: () => output }));
      }
    };
    child.stdout.on('data', hear);
    child.stderr.on('data', hear);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${command} exited (${code}):\n${output}`));
    });
  });
}

function stop(child) {
  if (child && child.exitCode === null) {
    child.removeAllListeners('exit');
    child.kill('SIGINT');
  }
}

/** kubectl against the served cluster directly, with no kubeconfig or cache of the machine's. */
function kubectl(server, ...args) {
  const cache = join(ROOT, 'target', `attach-kubectl-cache-${process.pid}`);
  const out = spawnSync(KUBECTL, ['-s', server, '--cache-dir', cache, ...args], {
    env: { ...process.env, KUBECONFIG: '/dev/null' },
    encoding: 'utf8',
  });
  assert.equal(out.status, 0, `kubectl ${args.join(' ')}: ${out.stderr}`);
  return out.stdout.trim();
}

const live = { serve: null, server: '', proxies: [], browser: null };

/** `kubectl proxy` for the served cluster with the page under /kubeloop/; `extra` flags. */
async function proxy(extra = []) {
  const port = await freePort();
  const child = await startChild(
    KUBECTL,
    ['proxy', '-s', live.server, `--port=${port}`, `--www=${DIST}`, '--www-prefix=/kubeloop/', '--api-prefix=/', ...extra],
    /Starting to serve/,
  );
  live.proxies.push(child);
  return `http://127.0.0.1:${port}`;
}

before(async () => {
  if (SKIP) return;
  const port = await freePort();
  live.serve = await startChild(kubeloopBinary(), ['serve', 'default', '--address', `127.0.0.1:${port}`, '--www', DIST], /Ctrl-C stops it/);
  live.server = `http://127.0.0.1:${port}`;
  live.browser = await launchBrowser();
});

after(async () => {
  await live.browser?.close();
  live.proxies.forEach(stop);
  stop(live.serve);
});

/** Opens the attached page and waits until it has drawn both nodes and three running pods. */
async function openAttached(page, base) {
  await page.goto(`${base}/kubeloop/?cluster=/`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]');
  await page.getByTestId('attached').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="node"]').length === 2, null, { timeout: 30_000 });
  await page.waitForFunction(
    () => [...document.querySelectorAll('[data-testid="pod"]')].filter((p) => p.dataset.status === 'Running').length === 3,
    null,
    { timeout: 30_000 },
  );
}

/** Records, in the page, every state a pod is drawn in and every caption shown, as they come. */
async function record(page) {
  await page.evaluate(() => {
    const seen = (window.__seen = { pods: {}, captions: [] });
    const look = () => {
      for (const p of document.querySelectorAll('[data-testid="pod"]')) {
        const where = p.closest('[data-testid="pending"]') ? 'pending' : p.dataset.node || 'unbound';
        const states = (seen.pods[p.dataset.name] ??= []);
        const state = `${where}:${p.dataset.status}`;
        if (states.at(-1) !== state) states.push(state);
      }
      const c = document.querySelector('[data-testid="caption"]');
      if (c && seen.captions.at(-1)?.text !== c.textContent) seen.captions.push({ text: c.textContent, component: c.dataset.component });
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    look();
  });
}

const shot = (page, name) => page.screenshot({ path: join(RESULTS, `attach-${name}.png`), fullPage: true });

test('kubeloop serve --www serves the page under /kubeloop/ beside an unchanged API', { skip: SKIP }, async () => {
  assert.match(live.serve.output(), new RegExp(`The stage, attached to this cluster: ${live.server}/kubeloop/\\?cluster=/`));
  const page = await fetch(`${live.server}/kubeloop/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type'), /^text\/html/);
  assert.match(await page.text(), /kubeloop-web/);
  const wasm = await fetch(`${live.server}/kubeloop/kubeloop-web_bg.wasm`);
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  assert.equal((await fetch(`${live.server}/kubeloop/../Cargo.toml`)).status, 404);
  const pods = await (await fetch(`${live.server}/api/v1/namespaces/default/pods`)).json();
  assert.equal(pods.kind, 'PodList');
});

test('attached through kubectl proxy --www: a kubectl delete pod is told loop by loop on the stage', { skip: SKIP, timeout: 180_000 }, async () => {
  const base = await proxy();
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openAttached(page, base);
    const status = await page.getByTestId('attached-status').textContent();
    assert.match(status, /^watching nodes, pods and events/);
    // The simulation's tools are not there: this is a real cluster.
    assert.equal(await page.getByTestId('console-input').count(), 0);
    assert.equal(await page.getByTestId('fast-forward').count(), 0);
    assert.equal(await page.getByTestId('component-switch').count(), 0);
    assert.match(await page.getByTestId('attached').textContent(), /Real cluster/);
    await shot(page, 'before-1440');
    await record(page);
    const before = await page.$$eval('[data-testid="pod"]', (els) => els.map((e) => e.dataset.name));
    const victim = before[0];
    kubectl(live.server, 'delete', 'pod', victim, '--wait=false');
    // The replacement: a pod that was not there, shown in the pending area first, then on a node, Running.
    const replacement = await page.waitForFunction(
      (old) => {
        const seen = window.__seen.pods;
        const name = Object.keys(seen).find((n) => !old.includes(n) && seen[n].some((s) => s.endsWith(':Running') && !s.startsWith('pending')));
        return name ?? false;
      },
      before,
      { timeout: 90_000, polling: 200 },
    );
    const name = await replacement.jsonValue();
    await page.waitForFunction((v) => !document.querySelector(`[data-testid="pod"][data-name="${v}"]`), victim, { timeout: 90_000 });
    const seen = await page.evaluate(() => window.__seen);
    const states = seen.pods[name];
    assert.match(states[0], /^pending:/, `the replacement waited in the pending area first: ${states}`);
    assert.ok(states.some((s) => /^node-\d:/.test(s)), `then it was bound: ${states}`);
    assert.ok(seen.pods[victim].some((s) => s.endsWith(':Terminating')), `the victim was drawn going: ${seen.pods[victim]}`);
    const node = states.find((s) => /^node-\d:/.test(s)).split(':')[0];
    const said = (pattern) => seen.captions.find((c) => pattern.test(c.text));
    const created = said(/^ReplicaSet controller: create pod /);
    const bound = said(new RegExp(`^kube-scheduler: bind .* → ${node}`));
    const started = said(new RegExp(`^kubelet ${node}: .* Running`));
    assert.ok(created && bound && started, `captions: ${JSON.stringify(seen.captions, null, 1)}`);
    assert.equal(created.component, 'kube-controller-manager/replicaset-controller');
    assert.equal(bound.component, 'kube-scheduler');
    assert.equal(started.component, `kubelet-${node}`);
    // Each says how its loop is known: an Event the loop reported, or labelled as inferred.
    for (const c of [created, bound, started]) assert.match(c.text, /\((event \w+|managedFields: [\w-]+|inferred: [^)]+)\)$/, c.text);
    assert.match(bound.text, /\(event Scheduled\)$/, 'kube-scheduler reported Scheduled');
    const told = await page.getByTestId('told').textContent();
    assert.match(told, /ReplicaSet controller/);
    await page.getByTestId('pod').first().click();
    await shot(page, 'after-1440');
  });
});

test('a read-only proxy (--reject-methods) refuses the Kill button as kubectl would print it', { skip: SKIP, timeout: 90_000 }, async () => {
  const base = await proxy(['--reject-methods=^(POST|PUT|PATCH|DELETE)$']);
  await withPage(
    live.browser,
    { viewport: { width: 360, height: 740 } },
    async (page) => {
      await openAttached(page, base);
      const pod = page.getByTestId('pod').first();
      const name = await pod.getAttribute('data-name');
      await pod.click();
      await page.getByTestId('pod-kill').click();
      const banner = page.getByTestId('page-error');
      await banner.waitFor();
      assert.match(await banner.textContent(), new RegExp(`Error from server \\(Forbidden\\): Forbidden \\(delete pods ${name}\\)`));
      await shot(page, 'read-only-phone');
      // Nothing was deleted.
      assert.match(kubectl(live.server, 'get', 'pod', name, '-o', 'name'), new RegExp(`pod/${name}`));
    },
    { expectedErrors: [/403 \(Forbidden\)/] },
  );
});

test('the attached page passes axe and reads on a projector (1920×1080)', { skip: SKIP, timeout: 90_000 }, async () => {
  const base = await proxy();
  for (const colorScheme of ['light', 'dark']) {
    await withPage(live.browser, { viewport: { width: 1920, height: 1080 }, colorScheme, reducedMotion: 'reduce' }, async (page) => {
      await openAttached(page, base);
      await page.getByTestId('pod').first().click();
      await page.addScriptTag({ path: AXE });
      const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
      const bad = result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      assert.deepEqual(bad, [], bad.join('\n'));
      await shot(page, `projector-${colorScheme}`);
    });
  }
});
