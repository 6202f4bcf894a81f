// The lesson's worked example played in the page, in real Chromium, through the page's own
// controls: three pods Running on two nodes; kill one; the replacement appears outside every
// node, is scheduled, reaches Running, with its events in order; desired = ready = 3 again.
// Then the claim changes: 5 replicas, then 1. Screenshots of each moment go to test-results/.
//
// Simulated time moves only by the page's controls (fast-forward, step); the tests wait for DOM
// conditions, never for wall-clock time.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, pods, gap, waitForPods, RESULTS } from './harness.mjs';

const live = setUp();

/** Opens the default scenario and fast-forwards until it settles. */
async function settledPage(page) {
  await openReady(page, `${live.server.url}?seed=1`);
  await page.getByTestId('pause').click();
  await fastForward(page);
}

const running = (list) => list.filter((p) => p.status === 'Running' && p.phase === 'Running');

test('the worked example: a killed pod is replaced, scheduled and Running, events in order', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await settledPage(page);
    const before = await pods(page);
    assert.equal(running(before).length, 3, `three Running: ${JSON.stringify(before)}`);
    assert.equal(new Set(before.map((p) => p.node)).size, 2, 'spread over both nodes');
    assert.deepEqual(await gap(page), { desired: 3, current: 3, ready: 3 });
    await page.screenshot({ path: join(RESULTS, 'worked-1-three-running.png'), fullPage: true });

    // Select a pod, then Kill: the page runs `kubectl delete pod NAME` through the session.
    const victim = before[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    assert.match(await page.getByTestId('explanation').innerText(), /chose node-\d/);
    await page.getByTestId('kill-pod').click();
    assert.equal(await page.locator('[data-testid="command"] code').first().innerText(), `$ kubectl delete pod ${victim}`);
    await page.locator(`[data-testid="pod"][data-name="${victim}"][data-status="Terminating"]`).waitFor();

    // Step, message by message, until the replacement exists; it has no node yet.
    const names = new Set(before.map((p) => p.name));
    let replacement;
    for (let i = 0; i < 300 && !replacement; i++) {
      await page.getByTestId('step').click();
      replacement = (await pods(page)).find((p) => !names.has(p.name));
    }
    assert.ok(replacement, 'a replacement pod appeared');
    assert.equal(replacement.node, '', 'it waits outside every node until the scheduler binds it');
    assert.equal(replacement.status, 'Pending');
    assert.equal(await page.locator(`[data-testid="pending"] [data-name="${replacement.name}"]`).count(), 1);
    // A trail joins the two chips: the new pod names the pod it replaces, and back.
    const back = page.locator(`[data-testid="pending"] [data-testid="trail"][data-role="replaces"]`);
    assert.equal(await back.getAttribute('data-other'), victim);
    assert.match(await back.innerText(), /^← /);
    const forth = page.locator(`[data-testid="trail"][data-role="replaced-by"][data-other="${replacement.name}"]`);
    assert.equal(await forth.count(), 1, 'the killed pod, still terminating, points to its replacement');
    await page.screenshot({ path: join(RESULTS, 'worked-2-replacement-unscheduled.png'), fullPage: true });

    // Step on until kube-scheduler has bound it: it moves into a node's box.
    let bound;
    for (let i = 0; i < 300 && !bound; i++) {
      await page.getByTestId('step').click();
      bound = (await pods(page)).find((p) => p.name === replacement.name && p.node !== '');
    }
    assert.ok(bound, 'the replacement was scheduled');
    assert.equal(
      await page.locator(`[data-testid="node"][data-name="${bound.node}"] [data-testid="pod"][data-name="${replacement.name}"]`).count(),
      1,
    );

    await fastForward(page);
    await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'));
    const after = await pods(page);
    assert.ok(!after.some((p) => p.name === victim), 'the killed pod is gone');
    assert.ok(after.some((p) => p.name === replacement.name && p.status === 'Running'));
    assert.deepEqual(await gap(page), { desired: 3, current: 3, ready: 3 });

    // Its chain in the event log: select it, read the marked rows (newest first) oldest first.
    await page.locator(`[data-testid="pod"][data-name="${replacement.name}"]`).click();
    await page.locator('[data-testid="event-row"][data-chain="true"] >> nth=4').waitFor();
    const chain = await page.$$eval('[data-testid="event-row"][data-chain="true"]', (rows) => rows.map((r) => r.dataset.reason).reverse());
    // Story mode links the killed pod to its replacement: the victim's chain (ending in Killing)
    // is marked too, and the replacement's own five come last.
    assert.deepEqual(chain.slice(-5), ['SuccessfulCreate', 'Scheduled', 'Pulled', 'Created', 'Started']);
    assert.equal(chain.at(-6), 'Killing', `the killed pod's chain is marked with it: ${chain}`);
    await page.screenshot({ path: join(RESULTS, 'worked-3-healed.png'), fullPage: true });
    // The README's picture (docs/screenshot.png is this, reduced to a small palette).
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.screenshot({ path: join(RESULTS, 'readme.png') });
  });
});

test('setting replicas to 5 gives 5 Running, then 1 leaves 1', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await settledPage(page);
    const input = page.getByTestId('replicas-input');
    await input.fill('5');
    await input.press('Enter');
    await page.locator('[data-testid="command"] code', { hasText: 'kubectl scale deployment web --replicas=5' }).waitFor();
    assert.equal((await gap(page)).desired, 5);
    await fastForward(page);
    await waitForPods(page, (list) => list.length === 5 && list.every((p) => p.status === 'Running'));
    assert.deepEqual(await gap(page), { desired: 5, current: 5, ready: 5 });
    await page.screenshot({ path: join(RESULTS, 'replicas-5.png'), fullPage: true });

    await input.fill('1');
    await input.press('Enter');
    await page.locator('[data-testid="command"] code', { hasText: 'kubectl scale deployment web --replicas=1' }).waitFor();
    await fastForward(page);
    await waitForPods(page, (list) => list.length === 1 && list[0].status === 'Running');
    assert.deepEqual(await gap(page), { desired: 1, current: 1, ready: 1 });
    await page.screenshot({ path: join(RESULTS, 'replicas-1.png'), fullPage: true });

    // The − and + buttons are the same command with one more or fewer.
    await page.getByTestId('replicas-plus').click();
    await page.locator('[data-testid="command"] code', { hasText: 'kubectl scale deployment web --replicas=2' }).waitFor();
    assert.equal((await gap(page)).desired, 2);
  });
});

test('play, pause, speed and step drive the simulated clock', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    const time = async () => Number(await page.locator('.app').getAttribute('data-sim-time'));
    await page.getByTestId('speed').selectOption('100');
    await page.waitForFunction(() => Number(document.querySelector('.app').dataset.simTime) > 20_000, undefined, { timeout: 30_000 });
    await page.getByTestId('pause').click();
    const paused = await time();
    // Let a few animation frames pass; a paused clock stays where it is.
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(done)))));
    assert.equal(await time(), paused);
    await page.getByTestId('step').click();
    await page.waitForFunction((t) => Number(document.querySelector('.app').dataset.simTime) > t, paused);
    assert.equal(await page.locator('.app').getAttribute('data-mode'), 'paused');
    await page.getByTestId('play').click();
    assert.equal(await page.locator('.app').getAttribute('data-mode'), 'playing');
  });
});

test('add node and reset run their command lines', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    await page.getByTestId('add-node').click();
    await page.locator('[data-testid="command"] code', { hasText: '$ sim node add node-3' }).waitFor();
    await fastForward(page);
    await page.locator('[data-testid="node"][data-name="node-3"][data-ready="True"]').waitFor();
    await page.locator('[data-testid="component"][data-name="kubelet-node-3"][data-state="running"]').waitFor();
    await page.getByTestId('reset').click();
    await page.locator('[data-testid="command"] code', { hasText: '$ sim seed 1' }).waitFor();
    await fastForward(page);
    assert.equal(await page.locator('[data-testid="node"]').count(), 2, 'the scenario starts over with its two nodes');
  });
});

test('the keyboard alone can select and kill a pod', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await settledPage(page);
    const first = page.locator('[data-testid="pod"]').first();
    const name = await first.getAttribute('data-name');
    await first.focus();
    await page.keyboard.press('Enter');
    assert.equal(await first.getAttribute('aria-pressed'), 'true');
    await page.getByTestId('kill-pod').focus();
    await page.keyboard.press('Space');
    await page.locator(`[data-testid="pod"][data-name="${name}"][data-status="Terminating"]`).waitFor();
  });
});
