// Level- versus edge-triggered, side by side on one page (issue 5): two <kubeloop-sim> widgets on
// the same seed run the same timeline — watch events to kube-controller-manager dropped, every web
// pod deleted, the drop lifted, its watches severed so it re-lists. The level-triggered widget ends
// with three Running pods; the edge-triggered one ends with none, its room of loops saying so.
//
// The widgets play at 100× and the test waits for their simulated clocks, never for wall time.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, RESULTS } from './harness.mjs';

const live = setUp();

/** The widget's pods (Playwright's CSS locators pierce its open shadow root). */
const widgetPods = (page, id) =>
  page.locator(`#${id} [data-testid="pod"]`).evaluateAll((els) => els.map((e) => ({ name: e.dataset.name, status: e.dataset.status })));

test('with dropped watch events the level-triggered widget heals and the edge-triggered one never does', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1600, height: 1000 } }, async (page) => {
    await page.goto(`${live.server.url}level-vs-edge.html`, { waitUntil: 'load' });
    for (const id of ['level', 'edge']) {
      await page.waitForSelector(`kubeloop-sim#${id}[data-ready="true"]`, { timeout: 30_000 });
    }
    // Both clusters first meet the claim: three Running pods each, before anything goes wrong.
    for (const id of ['level', 'edge']) {
      await page.waitForFunction(
        (id) => document.getElementById(id).shadowRoot.querySelectorAll('[data-testid="pod"][data-status="Running"]').length === 3,
        id,
        { timeout: 30_000 },
      );
      await page.locator(`#${id} [data-testid="speed"]`).selectOption('100');
    }
    // Past the timeline's last step (32 s) with time for the re-list to close the gap.
    for (const id of ['level', 'edge']) {
      await page.waitForFunction((id) => Number(document.getElementById(id).shadowRoot.querySelector('.app')?.dataset.simTime) > 70_000, id, {
        timeout: 60_000,
      });
      await page.locator(`#${id} [data-testid="pause"]`).click();
    }
    const level = await widgetPods(page, 'level');
    const edge = await widgetPods(page, 'edge');
    assert.equal(level.filter((p) => p.status === 'Running').length, 3, `level-triggered heals: ${JSON.stringify(level)}`);
    assert.deepEqual(edge, [], 'edge-triggered never hears of the deletions, so it never replaces them');
    assert.equal(await page.locator('#edge [data-loop="replicaset-controller (edge-triggered)"]').count(), 1);
    assert.equal(await page.locator('#level [data-loop="replicaset-controller"]').count(), 1);
    await page.screenshot({ path: join(RESULTS, 'level-vs-edge.png'), fullPage: true });
  });
});
