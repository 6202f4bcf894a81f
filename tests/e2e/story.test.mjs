// Story mode (issue 14): at the default speed a Kill's chain is told hop by hop — the
// ReplicaSet controller, kube-scheduler, then the chosen node's kubelet — slow enough to follow,
// and the replacement is seen waiting in the pending area before it lands on a node.
//
// What the page shows is recorded in the page itself, on every animation frame, so the test
// reads the order and timing of what a learner saw without sampling it from outside.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, pods, waitForPods, RESULTS } from './harness.mjs';

const live = setUp();

/** Starts recording, each frame: the caption (when it changes) and the pods in the pending area. */
function record() {
  const seen = { captions: [], pending: new Set(), started: performance.now() };
  window.__story = seen;
  const look = () => {
    const c = document.querySelector('[data-testid="caption"]');
    const last = seen.captions[seen.captions.length - 1];
    if (c && (!last || last.component !== c.dataset.component || last.text !== c.textContent)) {
      seen.captions.push({ component: c.dataset.component, object: c.dataset.object, text: c.textContent, at: performance.now() - seen.started });
    }
    for (const p of document.querySelectorAll('[data-testid="pending"] [data-testid="pod"]')) {
      if (!p.dataset.node) seen.pending.add(p.dataset.name);
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}

test('story mode at the default speed tells a Kill hop by hop, in order, within 30 s', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, live.server.url);
    const toggle = page.getByTestId('story');
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true', 'story mode is on by default');
    await page.getByTestId('pause').click();
    await fastForward(page);
    await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'));
    const before = await pods(page);
    const victim = before[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('play').click();
    await page.waitForSelector('.app[data-mode="playing"]');
    const started = Date.now();
    await page.evaluate(record);
    await page.getByTestId('kill-pod').click();
    // The chain is complete when three pods run again, none of them the killed one.
    await waitForPods(
      page,
      `(list) => list.length === 3 && list.every((p) => p.status === 'Running' && p.name !== ${JSON.stringify(victim)})`,
      30_000,
    );
    const wall = Date.now() - started;
    const after = await pods(page);
    const replacement = after.find((p) => !before.some((b) => b.name === p.name));
    assert.ok(replacement, `a new pod: ${JSON.stringify(after)}`);
    const seen = await page.evaluate(() => ({ captions: window.__story.captions, pending: [...window.__story.pending] }));
    const order = seen.captions.map((c) => c.component);
    const first = (component) => {
      const i = order.indexOf(component);
      assert.ok(i >= 0, `a caption from ${component}: ${JSON.stringify(seen.captions, null, 1)}`);
      return i;
    };
    const rs = first('kube-controller-manager/replicaset-controller');
    const scheduler = first('kube-scheduler');
    const kubelet = first(`kubelet-${replacement.node}`);
    assert.ok(rs < scheduler && scheduler < kubelet, `in the chain's order: ${order.join(' → ')}`);
    assert.ok(seen.pending.includes(replacement.name), `the replacement waited in the pending area: ${seen.pending}`);
    // Slow enough to follow (each hop stays up about half a second), and done well within 30 s.
    const shown = seen.captions.slice(rs, kubelet + 1);
    assert.ok(shown.at(-1).at - shown[0].at >= 1000, `the hops were paced: ${JSON.stringify(shown)}`);
    assert.ok(wall < 30_000, `${wall} ms`);
    await page.screenshot({ path: join(RESULTS, 'story-kill.png') });
  });
});

test('Step in story mode moves to the next meaningful hop and says it', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    await page.getByTestId('pause').click();
    await fastForward(page);
    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('kill-pod').click();
    const told = [];
    for (let i = 0; i < 6; i++) {
      await page.getByTestId('step').click();
      const caption = page.getByTestId('caption');
      await caption.waitFor();
      const text = await caption.innerText();
      if (told.at(-1) !== text) told.push(text);
    }
    assert.ok(told.length >= 4, `each step told a new hop: ${told.join(' | ')}`);
    assert.ok(told.some((t) => t.startsWith('ReplicaSet controller')), told.join(' | '));
    assert.equal(await page.locator('.app').getAttribute('data-mode'), 'paused');
  });
});

test('with story mode off the page plays without captions', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    const toggle = page.getByTestId('story');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await page.getByTestId('pause').click();
    await fastForward(page);
    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('kill-pod').click();
    await page.getByTestId('play').click();
    await waitForPods(page, `(list) => list.length === 3 && list.every((p) => p.status === 'Running' && p.name !== ${JSON.stringify(victim)})`);
    assert.equal(await page.getByTestId('caption').count(), 0, 'no hop is captioned');
  });
});
