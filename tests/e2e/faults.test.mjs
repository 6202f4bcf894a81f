// Breaking a loop from the page and watching the symptom a real cluster shows (issue 5): the
// scheduler stopped leaves new pods Pending with no Scheduled event until it starts again; the
// controller manager stopped leaves a killed pod unreplaced until it starts again and re-lists.
// The switches are the room of loops' own, and the "what is wrong?" panel names the loop.
//
// Simulated time moves only by the page's controls; the tests wait for DOM conditions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, pods, RESULTS } from './harness.mjs';

const live = setUp();

async function settledPage(page) {
  await openReady(page, `${live.server.url}?seed=3`);
  await page.getByTestId('pause').click();
  await fastForward(page);
}

const reasons = (page, reason) => page.locator(`[data-testid="event-row"][data-reason="${reason}"]`).count();
const component = (page, name) => page.locator(`[data-testid="component"][data-name="${name}"]`);

/** Opens the hint panel and plays at 100× until a hint names `suspect` (symptoms count once they last 10 s). */
async function hintNames(page, suspect) {
  await page.getByTestId('hints-toggle').click();
  await page.getByTestId('speed').selectOption('100');
  await page.getByTestId('play').click();
  await page.locator(`[data-testid="hint"][data-suspect="${suspect}"]`).waitFor();
  await page.getByTestId('pause').click();
}

async function flip(page, name, want) {
  await page.locator(`[data-testid="component-switch"][data-name="${name}"]`).click();
  await component(page, name).and(page.locator(`[data-state="${want}"]`)).waitFor();
}

test('scheduler stopped: new pods stay Pending with no Scheduled event; started, they run', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await settledPage(page);
    assert.equal(await reasons(page, 'Scheduled'), 3);
    await flip(page, 'kube-scheduler', 'stopped');
    assert.equal(await page.locator('[data-testid="component-switch"][data-name="kube-scheduler"]').getAttribute('aria-checked'), 'false');

    const input = page.getByTestId('replicas-input');
    await input.fill('5');
    await input.press('Enter');
    await fastForward(page);
    const waiting = (await pods(page)).filter((p) => p.node === '');
    assert.equal(waiting.length, 2, `two pods without a node: ${JSON.stringify(await pods(page))}`);
    assert.ok(waiting.every((p) => p.status === 'Pending'), JSON.stringify(waiting));
    assert.equal(await reasons(page, 'Scheduled'), 3, 'no Scheduled event while the scheduler is down');
    assert.equal(await reasons(page, 'FailedScheduling'), 0, 'and no FailedScheduling either');

    // The hint panel reads the symptom and points at the loop that assigns nodes.
    await hintNames(page, 'kube-scheduler');
    await page.screenshot({ path: join(RESULTS, 'faults-scheduler-stopped.png'), fullPage: true });

    await flip(page, 'kube-scheduler', 'running');
    await fastForward(page);
    const after = await pods(page);
    assert.equal(after.filter((p) => p.status === 'Running' && p.node !== '').length, 5, JSON.stringify(after));
    assert.equal(await reasons(page, 'Scheduled'), 5);
  });
});

test('controller manager stopped: a killed pod is not replaced until it starts again', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'dark' }, async (page) => {
    await settledPage(page);
    assert.equal(await reasons(page, 'SuccessfulCreate'), 3);
    await flip(page, 'kube-controller-manager', 'stopped');

    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('kill-pod').click();
    await fastForward(page);
    const left = await pods(page);
    assert.equal(left.length, 2, `the victim is gone and nothing replaced it: ${JSON.stringify(left)}`);
    assert.ok(!left.some((p) => p.name === victim));
    assert.equal(await reasons(page, 'SuccessfulCreate'), 3, 'no SuccessfulCreate while the controller manager is down');
    await hintNames(page, 'kube-controller-manager');
    await page.screenshot({ path: join(RESULTS, 'faults-controller-manager-stopped.png'), fullPage: true });

    await flip(page, 'kube-controller-manager', 'running');
    await fastForward(page);
    const healed = await pods(page);
    assert.equal(healed.filter((p) => p.status === 'Running').length, 3, JSON.stringify(healed));
    assert.equal(await reasons(page, 'SuccessfulCreate'), 4, 'one replacement, created after the restart');
  });
});

test('one loop of kube-controller-manager is switched off by its dial: only its gap stays open', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await settledPage(page);
    // Idle long enough, the loop is folded into its dial in the process's head: unfold it.
    const folded = component(page, 'kube-controller-manager').locator('[data-testid="folded-loop"][data-loop="replicaset-controller"]');
    if (await folded.count()) await folded.click();
    const dial = page.locator('[data-testid="loop-switch"][data-name="kube-controller-manager/replicaset-controller"]');
    const row = component(page, 'kube-controller-manager').locator('[data-loop="replicaset-controller"]');
    assert.equal(await dial.getAttribute('aria-checked'), 'true');
    await dial.click();
    await row.and(page.locator('[data-phase="stopped"]')).waitFor();
    assert.equal(await dial.getAttribute('aria-checked'), 'false');
    assert.equal(await dial.getAttribute('aria-label'), 'Start kube-controller-manager/replicaset-controller');
    assert.equal(await component(page, 'kube-controller-manager').getAttribute('data-state'), 'running', 'the process runs on');

    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('kill-pod').click();
    await fastForward(page);
    assert.equal((await pods(page)).length, 2, 'the ReplicaSet loop is off: nothing replaced the pod');
    assert.equal(await reasons(page, 'SuccessfulCreate'), 3);
    await page.screenshot({ path: join(RESULTS, 'faults-replicaset-controller-stopped.png') });

    // Keyboard: the dial is a focusable switch.
    await dial.focus();
    await page.keyboard.press('Enter');
    await row.and(page.locator(':not([data-phase="stopped"])')).waitFor();
    await fastForward(page);
    const healed = await pods(page);
    assert.equal(healed.filter((p) => p.status === 'Running').length, 3, JSON.stringify(healed));
    assert.equal(await reasons(page, 'SuccessfulCreate'), 4, 'switched on, it listed the ReplicaSet and closed the gap');
  });
});

test('a node can be powered off and recovered from its box', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await settledPage(page);
    await page.locator('[data-testid="node-fail"][data-node="node-2"]').click();
    await page.locator('[data-testid="command"] code', { hasText: 'sim node fail node-2' }).waitFor();
    await component(page, 'kubelet-node-2').and(page.locator('[data-state="stopped"]')).waitFor();
    await page.locator('[data-testid="node-recover"][data-node="node-2"]').click();
    await component(page, 'kubelet-node-2').and(page.locator('[data-state="running"]')).waitFor();
  });
});
