// Lesson 11, "Write your own loop", end to end in the page: the lesson opens the Operator panel
// on its starting file (Python loads meanwhile), the learner's completed operator runs as the
// loop operator/website when the lesson's step starts it, and the lesson's predictions are graded
// against what the cluster did: the Deployment deleted by hand comes back, the stopped operator
// converges when started again, and the garbage collector removes the Website's children.
//
// Simulated time moves only through the page's own controls; the tests wait for DOM conditions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, RESULTS } from './harness.mjs';

const live = setUp();
const LOAD_TIMEOUT = 120_000;
const lesson = (page) => page.getByTestId('lesson');

async function waitPhase(page, phase, timeout = 90_000) {
  await page.waitForSelector(`[data-testid="lesson"][data-phase="${phase}"]`, { timeout });
}

async function next(page) {
  const step = Number(await lesson(page).getAttribute('data-step'));
  await page.getByTestId('lesson-next').click();
  await page.waitForFunction((s) => Number(document.querySelector('[data-testid="lesson"]')?.dataset.step) !== s, step);
}

/** Answers the open question with a choice, then plays until the step's check passes. */
async function answerAndPass(page, choice) {
  await waitPhase(page, 'predict');
  await page.locator(`[data-testid="lesson-choice"][data-choice="${choice}"]`).click();
  await fastForward(page);
  await waitPhase(page, 'passed');
}

test('lesson 11 end to end: the learner completes the operator in the page and the lesson checks it like a controller', { timeout: 600_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=write-your-own-loop`);
    await page.getByRole('heading', { name: 'Write your own loop' }).waitFor({ timeout: 30_000 });
    // The lesson opened the panel on its starting file; Python loads while the first steps play.
    await page.getByTestId('operator-panel').waitFor();
    await page.waitForFunction(() => /YOUR PART/.test(document.querySelector('[data-testid="operator-editor"]')?.value ?? ''));
    assert.equal(await page.getByTestId('operator-template').inputValue(), 'website');

    // Step 1: the definition is applied.
    await fastForward(page);
    await waitPhase(page, 'passed');
    await next(page);
    // Step 2: a claim nobody acts on: no pods.
    await answerAndPass(page, '0');
    assert.match(await page.getByTestId('lesson-feedback').innerText(), /Right: 0\./);

    // The learner completes the handler: here, the finished file from the same build.
    const solution = await page.evaluate(async () => (await fetch('operators/website.py')).text());
    assert.match(solution, /def ensure/);
    await page.getByTestId('operator-editor').fill(solution);
    await page.waitForSelector('[data-testid="operator-status"]:not([data-state="loading"])', { timeout: LOAD_TIMEOUT });
    await next(page);
    // Step 3: the step starts the editor's code as operator/website: a loop on the stage.
    await page.locator('[data-name="operator/website"]').first().waitFor({ timeout: LOAD_TIMEOUT });
    assert.notEqual(await lesson(page).getAttribute('data-phase'), 'refused');
    await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
    assert.match(await page.getByTestId('operator-status').innerText(), /running as operator\/website/);
    await fastForward(page);
    await waitPhase(page, 'passed');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(RESULTS, 'lesson-11-operator-running-1440.png'), fullPage: true });
    await next(page);

    // Step 4: the Deployment deleted by hand comes back: two pods. Played at the page's own
    // speed, the operator's requests fly as tokens between its box and kube-apiserver.
    await waitPhase(page, 'predict');
    await page.locator('[data-testid="lesson-choice"][data-choice="2"]').click();
    await page.getByTestId('play').click();
    await page.locator('[data-testid="token"][data-from="operator/website"]').first().waitFor({ state: 'attached', timeout: 60_000 });
    await fastForward(page);
    await waitPhase(page, 'passed');
    assert.match(await page.getByTestId('lesson-feedback').innerText(), /Right: 2\./);
    await next(page);
    // Step 5: the operator stopped while the Website changes: still two.
    await answerAndPass(page, '2');
    await next(page);
    // Step 6: started again, it converges (level-triggered).
    await answerAndPass(page, 'It makes the Deployment match the Website');
    await next(page);
    // Step 7: the Website deleted: the garbage collector removes its children.
    await answerAndPass(page, '0');
    await next(page);
    await waitPhase(page, 'finished');
    assert.match(await page.getByTestId('lesson-status').innerText(), /Answers right: 5 of 5\. Checks passed: 6 of 6\./);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(RESULTS, 'lesson-11-finished-1440.png'), fullPage: true });
  });
});
