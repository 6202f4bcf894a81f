// Services on the stage (issue 15): the `service` scenario puts a Service in front of web and
// sends traffic from both nodes. Each connection is a dot from the sending node's kube-proxy to
// the pod its rules picked. The dots stop reaching a killed pod, and a pod whose readiness probe
// fails, once the EndpointSlice controller and every kube-proxy have turned; a stopped
// kube-proxy's node keeps sending to the gone pod. And lesson 8, "A Service is a loop", end to end.
//
// Dots are recorded in the page itself on every animation frame (each dot once, by its key), so
// the test reads what a learner saw instead of sampling it from outside. Simulated time moves
// only through the page's own controls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, waitForPods, RESULTS } from './harness.mjs';

const live = setUp();

/** Starts recording, each frame, every traffic dot that appears: where from, where to, how it ended. */
function recordDots() {
  const seen = { dots: new Map() };
  window.__traffic = seen;
  const look = () => {
    for (const d of document.querySelectorAll('[data-testid="traffic-dot"]')) {
      const key = d.dataset.seq;
      if (!seen.dots.has(key)) {
        seen.dots.set(key, { from: d.dataset.from, to: d.dataset.to, outcome: d.dataset.outcome, n: seen.dots.size, time: Number(document.querySelector('.app').dataset.simTime) });
      }
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}

/** The dots recorded so far, in the order they appeared. */
async function dotsSeen(page) {
  return page.evaluate(() => [...window.__traffic.dots.values()]);
}

/** Waits until `count` more dots have appeared than `after`. */
async function waitForDots(page, after, count, timeout = 30_000) {
  await page.waitForFunction(([a, c]) => window.__traffic.dots.size >= a + c, [after, count], { timeout, polling: 'raf' });
}

/** The endpoints the Service box lists: pod and state. */
function endpoints(page) {
  return page.$$eval('[data-testid="service"][data-name="web"] [data-testid="endpoint"]', (els) => els.map((e) => ({ pod: e.dataset.pod, state: e.dataset.state })));
}

/** Opens the service scenario with its pods running, every endpoint ready and traffic flowing, paused. */
async function openServed(page) {
  await openReady(page, `${live.server.url}?scenario=service`);
  await page.getByTestId('pause').click();
  await fastForward(page);
  await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'));
  await page.waitForFunction(() => document.querySelector('[data-testid="service"][data-name="web"]')?.dataset.ready === '3');
  assert.match(await page.getByTestId('service-traffic').innerText(), /traffic 4\/s from every node: \d+ answered/);
  for (const node of ['node-1', 'node-2']) {
    const row = page.locator(`[data-testid="component"][data-name="kube-proxy-${node}"] [data-testid="kube-proxy-detail"]`);
    assert.match(await row.innerText(), /^table: web → \S+ \S+ \S+$/, `${node}'s table routes to three pods`);
  }
}

test('traffic dots stop reaching a killed pod once the Service loops have turned', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openServed(page);
    const victim = (await endpoints(page))[0].pod;
    await page.evaluate(recordDots);
    await page.getByTestId('play').click();
    // Before the kill, connections reach every pod, the victim included.
    await page.waitForFunction((v) => [...window.__traffic.dots.values()].some((d) => d.to === v), victim, { timeout: 30_000 });
    await page.screenshot({ path: join(RESULTS, 'service-traffic.png') });
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('kill-pod').click();
    // The Service lists three ready endpoints again, none of them the killed pod.
    await page.waitForFunction(
      (v) => {
        const eps = [...document.querySelectorAll('[data-testid="service"][data-name="web"] [data-testid="endpoint"]')];
        return eps.filter((e) => e.dataset.state === 'ready').length === 3 && !eps.some((e) => e.dataset.pod === v);
      },
      victim,
      { timeout: 45_000, polling: 'raf' },
    );
    const before = (await dotsSeen(page)).length;
    await waitForDots(page, before, 10);
    const after = (await dotsSeen(page)).slice(before);
    assert.ok(after.every((d) => d.to !== victim), `no connection goes to ${victim} any more: ${JSON.stringify(after)}`);
    assert.ok(after.every((d) => d.outcome === 'answered'), `every connection is answered: ${JSON.stringify(after)}`);
    assert.ok(new Set(after.map((d) => d.to)).size >= 2, `spread over the pods: ${JSON.stringify(after)}`);
    assert.deepEqual([...new Set(after.map((d) => d.from))].sort(), ['node-1', 'node-2'], 'from both nodes');
    await page.screenshot({ path: join(RESULTS, 'service-after-kill.png') });
  });
});

test('a pod whose readiness fails keeps running and stops getting traffic', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openServed(page);
    const target = (await endpoints(page))[1].pod;
    await page.evaluate(recordDots);
    await page.getByTestId('console-input').fill(`sim fail-probe ${target} readiness`);
    await page.getByTestId('console-input').press('Enter');
    await page.getByTestId('play').click();
    await page.waitForFunction(
      (t) => document.querySelector(`[data-testid="endpoint"][data-pod="${t}"]`)?.dataset.state === 'not ready',
      target,
      { timeout: 45_000, polling: 'raf' },
    );
    // Give every kube-proxy its next sync (at most minSyncPeriod, 1 s of simulated time) before judging.
    const notReadyAt = Number(await page.locator('.app').getAttribute('data-sim-time'));
    await page.waitForFunction((t) => Number(document.querySelector('.app').dataset.simTime) > t + 1500, notReadyAt, { timeout: 30_000 });
    const before = (await dotsSeen(page)).length;
    await waitForDots(page, before, 10);
    const after = (await dotsSeen(page)).slice(before);
    assert.ok(after.every((d) => d.to !== target), `no connection goes to the unready ${target}: ${JSON.stringify(after)}`);
    assert.ok(after.every((d) => d.outcome === 'answered'), JSON.stringify(after));
    const chip = page.locator(`[data-testid="pod"][data-name="${target}"]`);
    assert.equal(await chip.getAttribute('data-status'), 'Running', 'still Running: readiness never restarts a pod');
    assert.equal(await chip.getAttribute('data-ready'), 'false');
    await page.screenshot({ path: join(RESULTS, 'service-not-ready.png') });
  });
});

test('a stopped kube-proxy keeps its node sending connections to a deleted pod', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openServed(page);
    await page.locator('[data-testid="component-switch"][data-name="kube-proxy-node-1"]').click();
    await page.waitForSelector('[data-testid="component"][data-name="kube-proxy-node-1"][data-state="stopped"]');
    const victim = (await endpoints(page))[0].pod;
    const short = victim.slice(-5);
    await page.evaluate(recordDots);
    await page.getByTestId('console-input').fill(`kubectl delete pod ${victim} --grace-period=0 --force`);
    await page.getByTestId('console-input').press('Enter');
    await page.getByTestId('play').click();
    // node-2's kube-proxy drops the pod; node-1's table still routes to it.
    const detail = (node) => page.locator(`[data-testid="component"][data-name="kube-proxy-${node}"] [data-testid="kube-proxy-detail"]`);
    await page.waitForFunction((s) => !document.querySelector('[data-testid="component"][data-name="kube-proxy-node-2"] [data-testid="kube-proxy-detail"]').textContent.includes(s), short, { timeout: 30_000 });
    assert.ok((await detail('node-1').innerText()).includes(short), 'node-1 still routes to the deleted pod');
    // From here on only node-1's connections can still be routed to the gone pod (node-2's may
    // have been, in the second before its kube-proxy turned).
    const from = (await dotsSeen(page)).length;
    await page.waitForFunction(([v, n]) => [...window.__traffic.dots.values()].slice(n).some((d) => d.to === v && d.outcome !== 'answered'), [victim, from], { timeout: 45_000 });
    const failed = (await dotsSeen(page)).slice(from).filter((d) => d.to === victim);
    assert.ok(failed.every((d) => d.from === 'node-1' && d.outcome === 'timed-out'), `only node-1 sends to the gone pod, and nothing answers: ${JSON.stringify(failed)}`);
    assert.match(await page.getByTestId('service-traffic').innerText(), /failed/);
    await page.screenshot({ path: join(RESULTS, 'service-stale-kube-proxy.png') });
  });
});

test('lesson 8 end to end: predictions about traffic graded against what the cluster did', { timeout: 240_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    const lesson = page.getByTestId('lesson');
    const waitPhase = (phase) => page.waitForSelector(`[data-testid="lesson"][data-phase="${phase}"]`, { timeout: 90_000 });
    const next = async () => {
      const step = Number(await lesson.getAttribute('data-step'));
      await page.getByTestId('lesson-next').click();
      await page.waitForFunction((s) => Number(document.querySelector('[data-testid="lesson"]')?.dataset.step) !== s || document.querySelector('[data-testid="lesson"]')?.dataset.phase === 'finished', step);
    };
    await openReady(page, `${live.server.url}?lesson=service-loop`);
    assert.match(await page.getByRole('heading', { name: 'A Service is a loop' }).innerText(), /Service/);
    // Step 1: three ready endpoints and traffic flowing.
    await fastForward(page);
    await waitPhase('passed');
    assert.match(await page.getByTestId('lesson-checks').innerText(), /exactly 3 ready endpoints of service web/);
    assert.equal(await page.locator('[data-testid="service"][data-name="web"]').getAttribute('data-ready'), '3');
    await next();
    // Step 2: predict, then the kill runs; the answer is what the cluster measured fifteen seconds on.
    await waitPhase('predict');
    await page.locator('[data-testid="lesson-choice"][data-choice="3"]').click();
    await fastForward(page);
    await page.waitForSelector('[data-testid="lesson-feedback"][data-graded="right"]', { timeout: 60_000 });
    assert.match(await page.getByTestId('lesson-feedback').innerText(), /Right: 3\./);
    await waitPhase('passed');
    await next();
    // Step 3: the readiness failure. A learner who thinks Running means served says 3.
    await waitPhase('predict');
    await page.screenshot({ path: join(RESULTS, 'lesson-8-predict.png') });
    await page.locator('[data-testid="lesson-choice"][data-choice="3"]').click();
    await fastForward(page);
    await page.waitForSelector('[data-testid="lesson-feedback"][data-graded="wrong"]', { timeout: 60_000 });
    assert.match(await page.getByTestId('lesson-feedback').innerText(), /2/);
    await waitPhase('passed');
    assert.equal(await page.locator('[data-testid="endpoint"][data-state="not ready"]').count(), 1);
    await page.screenshot({ path: join(RESULTS, 'lesson-8-graded.png') });
    await next();
    // Step 4: the learner stops node-1's kube-proxy and deletes a pod.
    await page.locator('[data-testid="component-switch"][data-name="kube-proxy-node-1"]').click();
    const victim = (await endpoints(page)).find((e) => e.state === 'ready').pod;
    await page.getByTestId('console-input').fill(`kubectl delete pod ${victim}`);
    await page.getByTestId('console-input').press('Enter');
    await fastForward(page);
    await waitPhase('passed');
    await next();
    await waitPhase('passed');
    await page.getByTestId('lesson-next').click();
    await waitPhase('finished');
    assert.equal(await page.getByTestId('lesson-status').innerText(), 'Answers right: 1 of 2. Checks passed: 4 of 4.');
  });
});

for (const { name, viewport, query } of [
  { name: 'phone', viewport: { width: 360, height: 740 }, query: '' },
  { name: 'projector', viewport: { width: 1920, height: 1080 }, query: '&presentation=on' },
]) {
  test(`the Services band fits a ${name} (${viewport.width} px) without spilling sideways`, { timeout: 90_000 }, async () => {
    await withPage(live.browser, { viewport }, async (page) => {
      await openReady(page, `${live.server.url}?scenario=service${query}`);
      await page.getByTestId('pause').click();
      await fastForward(page);
      const box = await page.locator('[data-testid="service"][data-name="web"]').boundingBox();
      assert.ok(box && box.width > 0 && box.x >= 0 && box.x + box.width <= viewport.width, `inside the screen: ${JSON.stringify(box)}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no sideways scroll (${overflow} px)`);
      const sizes = await page.$$eval('[data-testid="service"] *', (els) => els.filter((e) => e.textContent.trim()).map((e) => parseFloat(getComputedStyle(e).fontSize)));
      if (query.includes('presentation')) assert.ok(Math.min(...sizes) >= 18, `no label under 18 px: ${Math.min(...sizes)}`);
      await page.locator('[data-testid="service"]').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(RESULTS, `service-${name}.png`) });
    });
  });
}
