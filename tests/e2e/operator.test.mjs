// The Operator panel (issue 31): a learner's operator in Python, run by Pyodide in the page as
// one more loop. Python is fetched only when the panel opens; a template's operator does its
// work in the cluster; a runaway handler is stopped by its step budget and reported as kopf
// reports a failed handler while frames keep coming; the page's trace agrees with the native
// binary's for the same scenario, seed and code; axe finds nothing serious on the panel.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setUp, withPage, openReady, ROOT, RESULTS } from './harness.mjs';

const live = setUp();
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const PYTHON = /\/python\//;
// Pyodide's first start takes seconds on these 2 cores.
const LOAD_TIMEOUT = 120_000;

const simTime = async (page) => Number(await page.locator('.app').getAttribute('data-sim-time'));

async function console_(page, line) {
  await page.getByTestId('console-input').fill(line);
  await page.getByTestId('console-input').press('Enter');
}

/** Opens the panel and waits for Python to be ready (the status leaves "loading"). */
async function openPanel(page) {
  if ((await page.getByTestId('operator-open').getAttribute('aria-expanded')) !== 'true') await page.getByTestId('operator-open').click();
  await page.getByTestId('operator-status').waitFor();
  await page.waitForSelector('[data-testid="operator-status"]:not([data-state="loading"])', { timeout: LOAD_TIMEOUT });
  await page.waitForSelector('[data-testid="operator-run"]:not([disabled])');
}

test('Python is fetched only when the panel opens, and a template operator does its work as a loop', { timeout: 240_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    const requested = [];
    page.on('request', (r) => requested.push(r.url()));
    await openReady(page, `${live.server.url}?scenario=default&seed=3`);
    await page.getByTestId('pause').click();
    // The first load and its background lazy fetch are done; nothing of Python was asked for.
    await page.waitForFunction(() => globalThis.kubeloopLazy?.().loaded, null, { timeout: 30_000 });
    assert.deepEqual(requested.filter((u) => PYTHON.test(u)), [], 'no Python on the first load');

    await page.getByTestId('operator-open').click();
    assert.equal(await page.getByTestId('operator-status').getAttribute('data-state'), 'loading');
    await openPanel(page);
    for (const file of ['operator-python.js', 'pyodide.asm.wasm', 'python_stdlib.zip', 'kopf.py', 'templates/keep_deployment.py']) {
      assert.ok(requested.some((u) => u.endsWith(`/python/${file}`)), `${file} fetched when the panel opened`);
    }
    assert.match(await page.getByTestId('operator-status').innerText(), /stopped/);

    await page.getByTestId('operator-template').selectOption('label_pods');
    await page.waitForFunction(() => document.querySelector('[data-testid="operator-editor"]').value.includes('seen-by'));
    await page.getByTestId('operator-run').click();
    await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
    await page.waitForSelector('[data-testid="component"][data-name="operator/label-pods"]');
    await page.getByTestId('play').click();
    // Every pod gets the label, through the simulated API server.
    await console_(page, 'sim advance 20s');
    await console_(page, 'kubectl get pods -l seen-by=kopf --no-headers');
    await page.waitForFunction(() => (document.querySelector('[data-testid="console-output"]').innerText.match(/web-\S+\s+1\/1\s+Running/g) ?? []).length >= 3, null, {
      timeout: 30_000,
    });
    // The console's sim verbs reach it: stopped, the status says so.
    await console_(page, 'sim stop operator/label-pods');
    await page.waitForSelector('[data-testid="component"][data-name="operator/label-pods"][data-state="stopped"]');
    await page.waitForSelector('[data-testid="operator-status"][data-state="stopped"]');
    await console_(page, 'sim start operator/label-pods');
    await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.screenshot({ path: join(RESULTS, 'operator-1440.png') });
  });
});

test('a runaway handler is stopped by its budget, reported as a failed handler, and frames keep coming', { timeout: 240_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, `${live.server.url}?scenario=default&seed=5`);
    await page.getByTestId('pause').click();
    await openPanel(page);
    // A file that does not load: its traceback is the status, and nothing is added to the stage.
    await page.getByTestId('operator-editor').fill('import kopf\n\n@kopf.on.create("configmaps")\ndef broken(**_)\n    pass\n');
    await page.getByTestId('operator-run').click();
    await page.waitForSelector('[data-testid="operator-status"][data-state="error"]');
    assert.match(await page.getByTestId('operator-status').innerText(), /SyntaxError: expected ':'/);
    assert.equal(await page.locator('[data-testid="component"][data-name^="operator/"]').count(), 0);
    const code = [
      'import kopf',
      '',
      '@kopf.on.startup()',
      'def configure(settings: kopf.OperatorSettings, **_):',
      '    settings.posting.loggers = True  # kopf posts its log lines as Events too',
      '',
      '@kopf.on.create("configmaps")',
      'def spin(**_):',
      '    while True:',
      '        pass',
      '',
    ].join('\n');
    await page.getByTestId('operator-editor').fill(code);
    await page.getByTestId('operator-run').click();
    await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
    await page.getByTestId('play').click();
    await console_(page, 'kubectl create configmap spinner --from-literal=a=b');
    await console_(page, 'sim advance 5s');
    await console_(page, 'kubectl get events');
    const output = page.getByTestId('console-output');
    await page.waitForFunction(
      () => /Handler 'spin' failed with an exception and will try again in 60 seconds: the handler ran past its budget of 100000 Python lines/.test(
        document.querySelector('[data-testid="console-output"]').innerText,
      ),
      null,
      { timeout: 60_000 },
    ).catch(async (e) => assert.fail(`${e.message}\n${await output.innerText()}`));
    // The page goes on drawing: simulated time moves frame by frame.
    const before = await simTime(page);
    await page.waitForFunction((t) => Number(document.querySelector('.app').dataset.simTime) > t + 500, before, { timeout: 30_000 });
    assert.equal(await page.getByTestId('operator-status').getAttribute('data-state'), 'running', 'the operator lives on; only the call failed');
  });
});

/** The native trace hash for the default scenario, seed 3 and label_pods.py (tests/operators.rs
 * `native_trace_hash_for_the_page`, run by cargo: python3 as the interpreter). */
function nativeHash() {
  try {
    const out = execFileSync('cargo', ['test', '--offline', '--test', 'operators', 'native_trace_hash_for_the_page', '--', '--exact', '--nocapture'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const labels = out.match(/native trace hash: ([0-9a-f]{16})/)?.[1];
    const site = out.match(/native trace hash with a site: ([0-9a-f]{16})/)?.[1];
    return labels && site ? { labels, site } : null;
  } catch {
    return null;
  }
}

/** Runs `template` in the page from time 0 of the default scenario, seed 3 (applying `manifest`
 * from the editor at time 0 if given), 30 seconds on; the page's trace hash (Share → Export). */
async function pageHash(page, template, marker, manifest) {
  await openReady(page, `${live.server.url}?scenario=default&seed=3`);
  await page.getByTestId('pause').click();
  // The operator starts at time 0, as `kubeloop run --operator` starts it.
  await console_(page, 'sim seed 3');
  await openPanel(page);
  await page.getByTestId('operator-template').selectOption(template);
  await page.waitForFunction((m) => document.querySelector('[data-testid="operator-editor"]').value.includes(m), marker);
  assert.equal(await simTime(page), 0);
  await page.getByTestId('operator-run').click();
  await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
  if (manifest) {
    await page.getByTestId('editor-text').fill(manifest);
    await page.getByTestId('editor-apply').click();
  }
  await console_(page, 'sim advance 30s');
  await page.waitForFunction(() => Number(document.querySelector('.app').dataset.simTime) === 30_000);
  await page.getByTestId('share').click();
  // The operator's code is in neither the permalink nor the trace file, and the panel says so.
  assert.match(await page.getByTestId('share-omits').innerText(), /operator\/[a-z-]+/);
  const href = await page.getByTestId('export-trace').getAttribute('href');
  const file = JSON.parse(decodeURIComponent(href.slice(href.indexOf(',') + 1)));
  assert.equal(file.at, 30_000);
  return file.trace_hash ?? file.traceHash;
}

test('the page and the native binary give the same trace for the same scenario, seed and operator', { timeout: 240_000 }, async (t) => {
  const native = nativeHash();
  if (native === null) return t.skip('no native hash (cargo or python3 missing)');
  // label_pods.py: calls with no requests (kopf's patch).
  await withPage(live.browser, {}, async (page) => {
    assert.equal(await pageHash(page, 'label_pods', 'seen-by'), native.labels);
  });
  // keep_deployment.py: calls whose requests' answers replay them (tests/operators.rs's SITE).
  const site = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop\n  labels: {kubeloop.dev/site: "yes"}\ndata:\n  image: nginx:1.14.2\n  replicas: "2"\n';
  await withPage(live.browser, {}, async (page) => {
    assert.equal(await pageHash(page, 'keep_deployment', 'kubeloop.dev/site', site), native.site);
  });
});

for (const { colorScheme, viewport, name } of [
  { colorScheme: 'light', viewport: { width: 1440, height: 900 }, name: 'light-1440' },
  { colorScheme: 'dark', viewport: { width: 1920, height: 1080 }, name: 'dark-1920' },
  { colorScheme: 'light', viewport: { width: 360, height: 740 }, name: 'phone-360' },
]) {
  test(`axe finds no serious or critical violation on the Operator panel (${name})`, { timeout: 240_000 }, async () => {
    await withPage(live.browser, { colorScheme, viewport, reducedMotion: 'reduce' }, async (page) => {
      await openReady(page, live.server.url);
      await page.getByTestId('pause').click();
      await openPanel(page);
      await page.getByTestId('operator-run').click();
      await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
      await page.getByTestId('operator-panel').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(RESULTS, `operator-${name}.png`), fullPage: viewport.width < 600 });
      await page.addScriptTag({ path: AXE });
      const result = await page.evaluate(() => window.axe.run(document.querySelector('[data-testid="operator-panel"]'), { resultTypes: ['violations'] }));
      const bad = result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      assert.deepEqual(bad, [], bad.join('\n'));
    });
  });
}
