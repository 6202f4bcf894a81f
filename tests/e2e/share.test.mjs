// End-to-end tests of sharing (issue 6): a permalink opened in a fresh page reproduces the same
// state (same pods on the same nodes at the same simulated time), a trace exported as JSON and
// imported elsewhere replays to the same trace hash, and "copy as kubectl" lists what was run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setUp, withPage, openReady, pods, waitForPods } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const live = setUp();

/** Runs a small exercise on a fresh page: scale, kill a pod, add a node; then pauses. */
async function exercise(page) {
  await openReady(page, `${live.server.url}?seed=5&speed=25`);
  await waitForPods(page, (ps) => ps.filter((p) => p.status === 'Running').length === 3);
  // A command through the page's own message API (its own origin is always allowed).
  await page.evaluate(() => window.postMessage({ type: 'command', command: 'kubectl scale deployment web --replicas=4' }, location.origin));
  await waitForPods(page, (ps) => ps.filter((p) => p.status === 'Running').length === 4);
  await page.locator('[data-testid="pod"]').first().click();
  await page.getByTestId('kill-pod').click();
  await page.getByTestId('add-node').click();
  await waitForPods(page, (ps) => ps.filter((p) => p.status === 'Running').length === 4 && ps.length === 4);
  await page.getByTestId('pause').click();
  await page.waitForSelector('.app[data-mode="paused"]');
  return { pods: await pods(page), time: await page.locator('.app').getAttribute('data-sim-time') };
}

/** The state a page shows once its replay is done. */
async function state(page) {
  await page.waitForSelector('.app[data-mode="paused"]');
  return { pods: await pods(page), time: await page.locator('.app').getAttribute('data-sim-time') };
}

test('a permalink opened in a fresh page reproduces the same state', { timeout: 120_000 }, async () => {
  let expected;
  let permalink;
  let kubectl;
  await withPage(live.browser, {}, async (page) => {
    expected = await exercise(page);
    await page.getByTestId('share').click();
    permalink = await page.getByTestId('permalink').inputValue();
    kubectl = await page.getByTestId('share-kubectl').inputValue();
  });
  assert.ok(Number(expected.time) > 0);
  assert.equal(expected.pods.length, 4);
  assert.match(permalink, /^http:\/\/127\.0\.0\.1:\d+\/\?scenario=default&seed=5&cmd=\d+%3Akubectl%20scale%20deployment%20web%20--replicas%3D4&cmd=\d+%3Akubectl%20delete%20pod%20web-/);
  assert.ok(permalink.endsWith(`&at=${expected.time}`), permalink);

  const lines = kubectl.trim().split('\n');
  assert.equal(lines[0], '# kubeloop: scenario default, seed 5');
  assert.equal(lines[1], 'kubectl scale deployment web --replicas=4');
  assert.match(lines[2], /^kubectl delete pod web-[a-z0-9]+-[a-z0-9]+$/);
  assert.equal(lines[3], '# sim node add node-3  (simulator only)');

  await withPage(live.browser, {}, async (page) => {
    await openReady(page, permalink);
    assert.deepEqual(await state(page), expected);
    assert.equal(await page.getByTestId('page-error').count(), 0);
    assert.equal(await page.locator('[data-testid="node"]').count(), 3, 'the added node too');
  });
});

test('a trace exported as JSON imports into another page and replays to the same trace hash', { timeout: 120_000 }, async () => {
  let expected;
  let trace;
  await withPage(live.browser, {}, async (page) => {
    expected = await exercise(page);
    await page.getByTestId('share').click();
    const href = await page.getByTestId('export-trace').getAttribute('href');
    assert.equal(await page.getByTestId('export-trace').getAttribute('download'), 'kubeloop-trace.json');
    assert.ok(href.startsWith('data:application/json;charset=utf-8,'));
    trace = decodeURIComponent(href.slice(href.indexOf(',') + 1));
  });
  const file = JSON.parse(trace);
  assert.equal(file.format, 'kubeloop-trace/v1');
  assert.equal(file.scenario, 'default');
  assert.equal(file.seed, 5);
  assert.equal(String(file.at), expected.time);
  assert.match(file.traceHash, /^[0-9a-f]{16}$/);
  assert.deepEqual(file.commands.map((c) => c.command.split(' ').slice(0, 3).join(' ')), ['kubectl scale deployment', 'kubectl delete pod', 'sim node add']);
  assert.ok(file.messages.length > 0 && file.messages[0].from);

  await withPage(live.browser, {}, async (page) => {
    await openReady(page, `${live.server.url}?seed=9&scenario=scale-up`);
    await page.getByTestId('share').click();
    await page.getByTestId('import-trace-file').setInputFiles({ name: 'kubeloop-trace.json', mimeType: 'application/json', buffer: Buffer.from(trace) });
    await page.getByRole('status').filter({ hasText: `trace imported: same state, trace hash ${file.traceHash}` }).waitFor();
    assert.deepEqual(await state(page), expected);

    // A broken file is refused with a clear error and changes nothing.
    await page.getByTestId('share').click();
    await page.getByTestId('import-trace').fill('{"format": "something else"}');
    await page.getByTestId('import-trace-button').click();
    await page.getByTestId('page-error').filter({ hasText: 'error: this is not a kubeloop trace file: missing field' }).waitFor();
    assert.deepEqual(await state(page), expected);
  });
});

test('the share panel and the error banner pass axe in both forced themes', { timeout: 90_000 }, async () => {
  for (const theme of ['light', 'dark']) {
    await withPage(live.browser, { reducedMotion: 'reduce' }, async (page) => {
      await openReady(page, `${live.server.url}?seed=oops&theme=${theme}&autoplay=false`);
      await page.getByTestId('page-error').waitFor();
      await page.getByTestId('share').click();
      await page.getByTestId('share-panel').waitFor();
      await page.addScriptTag({ path: AXE });
      const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
      const bad = result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      assert.deepEqual(bad, [], `${theme}: ${bad.join('\n')}`);
    });
  }
});
