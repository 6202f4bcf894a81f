// End-to-end tests of the page shell: it mounts, names itself, draws the cluster as it comes up,
// follows the system's colour scheme, works under a sub-path and from 360 px wide, and shows a
// clear error for a bad address instead of breaking.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, RESULTS } from './harness.mjs';

const live = setUp();

test('the page mounts, shows kubeloop and its version, and the cluster comes up', { timeout: 60_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, live.server.url);
    assert.equal(await page.title(), 'kubeloop');
    assert.ok(await page.getByRole('heading', { level: 1, name: 'kubeloop' }).isVisible(), 'heading visible');
    assert.match(await page.locator('.version').innerText(), /^v\d+\.\d+\.\d+/);
    assert.match(await page.locator('.app').getAttribute('data-sim-time'), /^\d+$/);

    const frame = page.getByRole('region', { name: 'Cluster' });
    assert.ok(await frame.isVisible(), 'cluster frame visible');
    const box = await frame.boundingBox();
    assert.ok(box.width > 300 && box.height > 200, `cluster frame is too small: ${JSON.stringify(box)}`);
    // The page plays from the start: the kubelets register their nodes.
    await page.waitForSelector('[data-testid="node"][data-ready="True"] >> nth=1', { timeout: 30_000 });
    assert.deepEqual(
      await page.$$eval('[data-testid="node"]', (els) => els.map((e) => e.dataset.name)),
      ['node-1', 'node-2'],
    );
    const names = await page.$$eval('[data-testid="component"]', (els) => els.map((e) => `${e.dataset.name}:${e.dataset.state}`));
    assert.deepEqual(names, [
      'kube-apiserver:running',
      'etcd:running',
      'kube-controller-manager:running',
      'kube-scheduler:running',
      'kubelet-node-1:running',
      'kube-proxy-node-1:running',
      'kubelet-node-2:running',
      'kube-proxy-node-2:running',
    ]);
    assert.equal(await page.locator('.panic-overlay').count(), 0, 'no error overlay');
    await page.screenshot({ path: join(RESULTS, 'page-light.png'), fullPage: true });
  });
});

test('the page follows a dark colour scheme', { timeout: 60_000 }, async () => {
  const background = async (colorScheme) => {
    let color;
    await withPage(live.browser, { colorScheme }, async (page) => {
      await openReady(page, live.server.url);
      color = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      await page.screenshot({ path: join(RESULTS, `page-${colorScheme}.png`), fullPage: true });
    });
    return color;
  };
  const light = await background('light');
  const dark = await background('dark');
  assert.notEqual(light, dark, 'dark scheme changes the background');
});

test('one build works under a sub-path', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.subUrl);
    assert.ok(await page.getByRole('heading', { level: 1, name: 'kubeloop' }).isVisible());
  });
});

test('a 360 px wide phone gets every panel without sideways scrolling', { timeout: 60_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 360, height: 740 } }, async (page) => {
    await openReady(page, live.server.url);
    await page.waitForSelector('[data-testid="node"] >> nth=1', { timeout: 30_000 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    for (const name of ['Cluster', 'The gap', 'Events']) {
      assert.ok(await page.getByRole('region', { name, exact: false }).first().isVisible(), `${name} visible`);
    }
    await page.screenshot({ path: join(RESULTS, 'page-360px.png'), fullPage: true });
  });
});

test('a bad scenario or seed in the address is named on the page, which still runs', { timeout: 60_000 }, async () => {
  for (const [query, message] of [
    ['?scenario=nope', 'error: unknown scenario "nope" in parameter "scenario"'],
    ['?seed=abc', 'error: invalid value "abc" for parameter "seed"'],
  ]) {
    await withPage(live.browser, {}, async (page) => {
      await openReady(page, `${live.server.url}${query}`);
      const error = page.getByTestId('page-error');
      assert.ok(await error.isVisible(), `${query}: error shown`);
      assert.match(await error.innerText(), new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      assert.equal(await page.getByRole('alert').count(), 1);
      await page.waitForSelector('[data-testid="node"] >> nth=1', { timeout: 30_000 });
    });
  }
});

test('?scenario and ?seed pick the run', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, `${live.server.url}?scenario=scale-up&seed=42`);
    assert.equal(await page.getByTestId('seed-input').inputValue(), '42');
    assert.match(await page.locator('.scenario').innerText(), /scale-up/);
    assert.equal(await page.getByTestId('page-error').count(), 0);
  });
});
