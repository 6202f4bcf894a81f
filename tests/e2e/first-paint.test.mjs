// The first paint before the wasm arrives (issue 14): dist/index.html carries the default
// scenario's first picture, rendered at build time from the same Yew components
// (src/web/prerender.rs); the wasm then replaces it with the live app without an empty frame.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, RESULTS } from './harness.mjs';

const live = setUp();

test('without JavaScript the page still shows the cluster, marked not yet interactive', async () => {
  // Not withPage: its closing check runs a timer in the page, and with JavaScript off none runs.
  const context = await live.browser.newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(live.server.url, { waitUntil: 'load' });
    const nodes = page.locator('[data-testid="node"]');
    assert.equal(await nodes.count(), 2, 'the default scenario has two nodes');
    assert.deepEqual(await nodes.evaluateAll((els) => els.map((e) => e.dataset.name)), ['node-1', 'node-2']);
    for (const node of await nodes.all()) assert.ok(await node.isVisible(), 'a node box is drawn');
    assert.equal(await page.locator('#app').getAttribute('aria-busy'), 'true');
    // The page's opening frame (src/web/main.rs: play_opening): both Nodes registered, 16 ms in.
    assert.equal(await page.locator('.app').getAttribute('data-sim-time'), '16', 'the picture is the opening frame');
    assert.equal(await page.locator('body').getAttribute('data-ready'), null, 'nothing claims to be live');
    // Nothing in the picture reacts to the pointer while it is only a picture.
    const events = await page.getByTestId('play').evaluate((e) => getComputedStyle(e).pointerEvents);
    assert.equal(events, 'none');
    assert.match(await page.locator('body').innerText(), /needs JavaScript and WebAssembly/);
    await page.screenshot({ path: `${RESULTS}/first-paint-no-js.png` });
  } finally {
    await context.close();
  }
});

test('with the wasm the picture becomes the live page with no empty frame between', async () => {
  await withPage(live.browser, {}, async (page) => {
    // From the first frame on, the node boxes and the simulated time each frame would paint.
    await page.addInitScript(() => {
      window.__frames = [];
      const tick = () => {
        const time = document.querySelector('.app')?.dataset.simTime;
        window.__frames.push({ nodes: document.querySelectorAll('[data-testid="node"]').length, time: time && Number(time) });
        if (document.body?.dataset.ready !== 'true' || window.__frames.length < 5) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await page.goto(live.server.url, { waitUntil: 'load' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    await page.waitForFunction(() => Number(document.querySelector('.app')?.dataset.simTime) > 0, null, { timeout: 30_000 });
    assert.equal(await page.locator('#app').getAttribute('aria-busy'), null, 'the mounted app is interactive');
    assert.equal(await page.locator('[data-testid="node"]').count(), 2, 'one picture: the pre-render was replaced');
    assert.equal(await page.locator('#app > .app').count(), 1);
    const frames = await page.evaluate(() => window.__frames);
    const shown = JSON.stringify(frames);
    const first = frames.findIndex((f) => f.nodes > 0);
    assert.ok(first >= 0, `a node box was painted (frames: ${shown})`);
    const after = frames.slice(first);
    assert.ok(after.every((f) => f.nodes === 2), `after the first node box every frame had both nodes (${shown})`);
    // The live page goes on from the picture's time: it never shows an earlier one.
    assert.equal(after[0].time, 16, shown);
    assert.ok(after.every((f, i) => i === 0 || f.time >= after[i - 1].time), `simulated time never went back (${shown})`);
    // The live page answers a click: pausing stops the clock.
    await page.getByTestId('pause').click();
    await page.waitForSelector('.app[data-mode="paused"]');
  });
});
