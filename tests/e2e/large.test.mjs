// End-to-end tests of the page past teaching scale (`?scenario=large`, 100 nodes / 3,000 pods):
// it marks itself large, draws every pod compactly with its status and test hooks, and the
// panels below the cluster, which the browser skips while they are off screen, are all there
// once scrolled to.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, openReady } from './harness.mjs';

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
