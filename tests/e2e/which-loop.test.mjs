// The which-loop lesson (issue 14): while a case's question is open the stage must not say which
// component the lesson stopped — no switches, no "stopped" look, no hints naming the loop — and
// once answered, the truth is shown again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, RESULTS } from './harness.mjs';

const live = setUp();

/** What the stage reveals about which component is stopped. */
async function revealed(page) {
  return page.evaluate(() => ({
    switches: document.querySelectorAll('[data-testid="component-switch"]').length,
    stoppedLook: document.querySelectorAll('[data-testid="component"].stopped').length,
    stoppedWords: [...document.querySelectorAll('[data-testid="component"] .state')].map((e) => e.textContent),
    hints: document.querySelectorAll('[data-testid="hints-toggle"]').length,
    loopSwitches: document.querySelectorAll('[data-testid="loop-switch"]').length,
    stoppedLoops: document.querySelectorAll('.loop[data-phase="stopped"]').length,
  }));
}

test('the which-loop lesson shows no component stopped while its question is open', { timeout: 180_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=which-loop`);
    // Step 1 (how to look) passes once the cluster runs; then case 1 stops a component in secret.
    await page.getByTestId('pause').click();
    await fastForward(page);
    await page.waitForSelector('[data-testid="lesson-next"]:not([disabled])', { timeout: 60_000 });
    const before = await revealed(page);
    assert.ok(before.switches > 0, 'outside a question the switches are there');
    await page.getByTestId('lesson-next').click();
    await page.waitForSelector('[data-testid="lesson"][data-step="1"]');
    // The case's check looks 20 s of simulated time after the action: play there quickly.
    await page.getByTestId('speed').selectOption({ label: '10×' });
    await page.getByTestId('play').click();
    await page.waitForSelector('[data-testid="lesson-question"]:not([disabled])', { timeout: 60_000 });
    const open = await revealed(page);
    assert.deepEqual(open, { switches: 0, stoppedLook: 0, stoppedWords: [], hints: 0, loopSwitches: 0, stoppedLoops: 0 }, 'nothing tells which loop stopped');
    // Nor does the console: `sim status` would list the stopped component.
    const input = page.getByTestId('console-input');
    const output = page.getByTestId('console-output');
    await input.fill('sim status');
    await input.press('Enter');
    await page.waitForFunction(() => document.querySelector('[data-testid="console-output"]').innerText.includes('sim status is hidden until you answer'));
    assert.doesNotMatch(await output.innerText(), /Stopped/, 'sim status named no stopped component');
    await page.screenshot({ path: join(RESULTS, 'which-loop-question.png') });
    await page.locator('[data-testid="lesson-choice"][data-choice="kube-scheduler"]').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="component"].stopped').length > 0);
    const answered = await revealed(page);
    assert.ok(answered.switches > 0 && answered.stoppedWords.includes('stopped'), JSON.stringify(answered));
    // Answered, the console tells again.
    await input.fill('sim status');
    await input.press('Enter');
    await page.waitForFunction(() => /kube-scheduler\s+Stopped/.test(document.querySelector('[data-testid="console-output"]').innerText));
  });
});

test('the which-controller lesson hides which loop of kube-controller-manager it switched off until answered', { timeout: 180_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=which-controller`);
    await page.getByTestId('pause').click();
    await fastForward(page);
    await page.waitForSelector('[data-testid="lesson-next"]:not([disabled])', { timeout: 60_000 });
    assert.ok((await revealed(page)).loopSwitches >= 15, 'outside a question every loop has its switch');
    await page.getByTestId('lesson-next').click();
    await page.waitForSelector('[data-testid="lesson"][data-step="1"]');
    await page.getByTestId('speed').selectOption({ label: '10×' });
    await page.getByTestId('play').click();
    await page.waitForSelector('[data-testid="lesson-question"]:not([disabled])', { timeout: 60_000 });
    const open = await revealed(page);
    assert.deepEqual(open, { switches: 0, stoppedLook: 0, stoppedWords: [], hints: 0, loopSwitches: 0, stoppedLoops: 0 }, 'nothing tells which loop is off');
    await page.screenshot({ path: join(RESULTS, 'which-controller-question.png') });
    await page.locator('[data-testid="lesson-choice"][data-choice="replicaset-controller"]').click();
    await page.locator('[data-testid="component"][data-name="kube-controller-manager"] .loop[data-loop="replicaset-controller"][data-phase="stopped"]').waitFor();
    const answered = await revealed(page);
    assert.equal(answered.stoppedLoops, 1, JSON.stringify(answered));
    await page.screenshot({ path: join(RESULTS, 'which-controller-answered.png') });
  });
});
