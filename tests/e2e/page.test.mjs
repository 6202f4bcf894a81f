// End-to-end tests of the page at this stage: it mounts, names itself, shows the empty
// cluster frame, follows the system's colour scheme and works under a sub-path.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, launchBrowser, withPage, openReady, RESULTS } from './harness.mjs';

let server;
let browser;

before(async () => {
  await mkdir(RESULTS, { recursive: true });
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('the page mounts, shows kubeloop, its version and an empty cluster frame', { timeout: 60_000 }, async () => {
  await withPage(browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, server.url);
    assert.equal(await page.title(), 'kubeloop');
    assert.ok(await page.getByRole('heading', { level: 1, name: 'kubeloop' }).isVisible(), 'heading visible');
    assert.match(await page.locator('.version').innerText(), /^v\d+\.\d+\.\d+/);

    const frame = page.getByRole('region', { name: 'Cluster' });
    assert.ok(await frame.isVisible(), 'cluster frame visible');
    const box = await frame.boundingBox();
    assert.ok(box.width > 300 && box.height > 200, `cluster frame is too small: ${JSON.stringify(box)}`);
    assert.equal(await frame.getByRole('listitem').count(), 0, 'no nodes yet');
    assert.equal(await page.locator('.panic-overlay').count(), 0, 'no error overlay');

    await page.screenshot({ path: join(RESULTS, 'page-light.png'), fullPage: true });
  });
});

test('the page follows a dark colour scheme', { timeout: 60_000 }, async () => {
  const background = async (colorScheme) => {
    let color;
    await withPage(browser, { colorScheme }, async (page) => {
      await openReady(page, server.url);
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
  await withPage(browser, {}, async (page) => {
    await openReady(page, server.subUrl);
    assert.ok(await page.getByRole('heading', { level: 1, name: 'kubeloop' }).isVisible());
  });
});
