// End-to-end tests of the page past teaching scale (`?scenario=large`, 100 nodes / 3,000 pods):
// it marks itself large, draws every pod compactly with its status and test hooks, and the
// panels below the cluster, which the browser skips while they are off screen, are all there
// once scrolled to.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, RESULTS } from './harness.mjs';

const live = setUp();

test('a teaching-scale page is not marked large', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    await page.waitForSelector('[data-testid="pod"]', { timeout: 30_000 });
    assert.equal(await page.locator('.app.large').count(), 0);
    const skipped = await page.locator('.events-panel').evaluate((e) => getComputedStyle(e).contentVisibility);
    assert.equal(skipped, 'visible', 'a small page draws every panel');
  });
});

test('a large cluster draws its pods compactly and its off-screen panels when scrolled to', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, `${live.server.url}?scenario=large&seed=1`);
    await page.getByTestId('speed').selectOption('100');
    // Past 300 pods the page is large: compact pods, off-screen panels skipped.
    await page.waitForSelector('.app.large .stage.compact', { timeout: 90_000 });
    const pods = await page.$$eval('[data-testid="pod"]', (els) =>
      els.map((e) => ({ status: e.dataset.status, phase: e.dataset.phase, label: e.getAttribute('aria-label'), tone: e.classList[1] })),
    );
    assert.ok(pods.length > 0, 'pods are drawn');
    for (const p of pods.slice(0, 50)) {
      assert.ok(p.status && p.phase, `a pod keeps its data-status and data-phase: ${JSON.stringify(p)}`);
      assert.match(p.label, /^\S+: \S+, \d+\/\d+ ready, \d+ restarts/, 'a compact pod still names itself');
      assert.match(p.tone, /^(running|starting|pending|creating|terminating|succeeded|failed)$/, 'a pod shows its status colour');
    }
    assert.equal(await page.locator('[data-testid="node"]').count(), 100);

    for (const panel of ['.events-panel', '.command-log']) {
      const skipped = await page.locator(panel).evaluate((e) => getComputedStyle(e).contentVisibility);
      assert.equal(skipped, 'auto', `${panel} is skipped while off screen`);
    }
    // Every node box holds its kubelet and its kube-proxy; scrolled to, the events panel is drawn.
    assert.equal(await page.locator('[data-testid="node"] [data-testid="component"][data-name^="kubelet-"]').count(), 100);
    assert.equal(await page.locator('[data-testid="node"] [data-testid="component"][data-name^="kube-proxy-"]').count(), 100);
    assert.ok(await page.locator('[data-testid="node"] [data-testid="component"]').first().isVisible(), 'a kubelet row is visible');
    await page.locator('.events-panel').scrollIntoViewIfNeeded();
    await page.waitForSelector('[data-testid="event-row"][data-reason="SuccessfulCreate"]', { timeout: 30_000 });
    assert.ok(await page.locator('[data-testid="event-row"]').first().isVisible(), 'event rows are visible');
    const box = await page.locator('.events-panel').boundingBox();
    assert.ok(box.height > 100, `the events panel has its real height once shown: ${JSON.stringify(box)}`);
  });
});

test('a large cluster\'s node boxes are compact: at least 50 of 100 in the first screen at 1440×900', { timeout: 180_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, `${live.server.url}?scenario=large&seed=1`);
    await page.getByTestId('speed').selectOption('100');
    await page.waitForSelector('.app.large .stage.compact', { timeout: 90_000 });
    // Every node running its share of the 3,000 pods.
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="pod"][data-node^="node-"]').length >= 2900, undefined, { timeout: 150_000, polling: 1000 });
    await page.getByTestId('pause').click();
    await page.evaluate(() => window.scrollTo(0, 0));
    const inView = await page.$$eval('[data-testid="node"]', (nodes) =>
      nodes.filter((n) => {
        const r = n.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;
      }).length,
    );
    await page.screenshot({ path: join(RESULTS, 'large-1440.png') });
    assert.ok(inView >= 50, `${inView} node boxes are wholly in the first screen`);
    // Each box's header holds its kubelet's and kube-proxy's dials, named for assistive technology.
    const first = page.locator('[data-testid="node"]').first();
    for (const process of ['kubelet', 'kube-proxy']) {
      const box = first.locator(`[data-testid="component"][data-name^="${process}-"]`);
      assert.equal(await box.count(), 1);
      assert.ok(await box.locator('svg.dial').first().isVisible(), `${process} is a dial`);
    }
  });
});
