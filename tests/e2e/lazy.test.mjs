// The wasm in two parts (issue 14's slow link): the page comes alive on the primary module
// alone, fetches kubeloop-web_lazy.wasm in the background once it is live, and a lazy function
// needed before that has arrived still runs (src/bin/kubeloop-split). `kubeloopLazy()` is the
// glue's own report: whether the lazy module is in, and which call, if any, had to wait for it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, openReady } from './harness.mjs';

const live = setUp();
const LAZY = '**/kubeloop-web_lazy.wasm';

const lazyState = (page) => page.evaluate(() => globalThis.kubeloopLazy());
const simTime = async (page) => Number(await page.locator('.app').getAttribute('data-sim-time'));

test('the page comes alive and plays on the primary module, then fetches the lazy one', async () => {
  await withPage(live.browser, {}, async (page) => {
    // Hold the lazy module back: whatever the page runs meanwhile must not need it. A function the
    // keep list missed would fetch it synchronously, through this same route, and say so.
    let release;
    const held = new Promise((done) => (release = done));
    const requests = [];
    let asked;
    const firstRequest = new Promise((done) => (asked = done));
    await page.route(LAZY, async (route) => {
      requests.push(route.request().resourceType());
      asked();
      await held;
      await route.continue();
    });
    await openReady(page, live.server.url);
    await firstRequest; // asked for once the page is live (the glue waits for data-ready)
    const start = await simTime(page);
    await page.waitForFunction((t) => Number(document.querySelector('.app').dataset.simTime) >= t + 1000, start, {
      timeout: 60_000,
    });
    await page.getByTestId('pod').first().waitFor();
    assert.deepEqual(
      await lazyState(page),
      { loaded: false, demandedBy: null },
      'a second of the default scenario ran without the lazy module (if not, rerun node scripts/split-profile.mjs --write)',
    );
    release();
    await page.waitForFunction(() => globalThis.kubeloopLazy().loaded, null, { timeout: 30_000 });
    assert.deepEqual(await lazyState(page), { loaded: true, demandedBy: null });
    assert.deepEqual(requests, ['fetch'], 'fetched once, in the background');
  });
});

test('a lazy function needed before its module arrived still runs', async () => {
  await withPage(live.browser, {}, async (page) => {
    // The background fetch fails (a flaky link); the console's kubectl describe, which the first
    // picture never runs, then needs the lazy module and loads it on the spot.
    let aborted;
    const prefetchFailed = new Promise((done) => (aborted = done));
    let tries = 0;
    await page.route(LAZY, async (route) => {
      tries += 1;
      if (tries === 1) {
        await route.abort('connectionreset');
        return aborted();
      }
      return route.continue();
    });
    const warned = page.waitForEvent('console', {
      predicate: (message) => message.type() === 'warning' && message.text().includes('lazy module will be loaded when first needed'),
      timeout: 30_000,
    });
    await openReady(page, live.server.url);
    await prefetchFailed;
    await warned;
    assert.equal((await lazyState(page)).loaded, false, 'nothing has needed it yet');
    const input = page.getByTestId('console-input');
    await input.fill('kubectl describe deployment web');
    await input.press('Enter');
    await page.waitForFunction(
      () => /Name:\s+web[\s\S]*Replicas:/.test(document.querySelector('[data-testid="console-output"]').innerText),
      null,
      { timeout: 30_000 },
    );
    const state = await lazyState(page);
    assert.equal(state.loaded, true);
    assert.notEqual(state.demandedBy, null, 'the call that needed it is named');
    assert.equal(tries, 2, 'fetched again, on demand');
  }, { expectedErrors: [/Failed to load resource: net::ERR_CONNECTION_RESET/] });
});
