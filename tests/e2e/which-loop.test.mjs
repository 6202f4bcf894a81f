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

test('a which-loop case starts in the present: its clock moves at once, and nothing tells of its stopped component', { timeout: 180_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=which-loop`);
    await page.getByTestId('pause').click();
    await fastForward(page);
    await page.waitForSelector('[data-testid="lesson-next"]:not([disabled])', { timeout: 60_000 });
    // Playing at the default speed, story mode on, as a learner would be.
    assert.equal(await page.getByTestId('story').getAttribute('aria-pressed'), 'true');
    await page.getByTestId('play').click();
    await page.waitForSelector('.app[data-mode="playing"]');
    // Recorded every frame from the click on: the caption, any spotlight on kube-scheduler (the
    // part case 1 stops), and the simulated time.
    await page.evaluate(() => {
      const seen = { frames: [], started: performance.now() };
      window.__case = seen;
      const look = (now) => {
        const c = document.querySelector('[data-testid="caption"]');
        const scheduler = document.querySelector('[data-testid="component"][data-name="kube-scheduler"]');
        seen.frames.push({
          at: now - seen.started,
          step: document.querySelector('[data-testid="lesson"]')?.dataset.step,
          time: document.querySelector('.app').dataset.simTime,
          caption: c ? `${c.dataset.component}: ${c.textContent}` : null,
          spotlight: Boolean(scheduler && (scheduler.classList.contains('spotlight') || scheduler.querySelector('.spotlight'))),
          asking: Boolean(document.querySelector('[data-testid="lesson-question"]:not([disabled])')),
          choices: document.querySelectorAll('[data-testid="lesson-choice"]').length,
        });
        if (!seen.stop) requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    });
    await page.getByTestId('lesson-next').click();
    await page.waitForSelector('[data-testid="lesson"][data-step="1"]');
    // The case's wait shows, and moves.
    const status = page.getByTestId('lesson-status');
    assert.equal(await status.innerText(), 'Waiting for the check.');
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="lesson-wait"]')?.value) > 0, undefined, { timeout: 5_000 });
    await page.screenshot({ path: join(RESULTS, 'which-loop-case-start.png') });
    // Then quickly to the question.
    await page.getByTestId('speed').selectOption({ label: '10×' });
    await page.waitForSelector('[data-testid="lesson-question"]:not([disabled])', { timeout: 60_000 });
    const frames = await page.evaluate(() => {
      window.__case.stop = true;
      return window.__case.frames;
    });
    const inCase = frames.filter((f) => f.step === '1');
    assert.ok(inCase.length > 30, `frames of the case: ${inCase.length}`);
    const start = inCase[0];
    const moved = inCase.find((f) => f.time !== start.time);
    assert.ok(moved, 'the clock moved');
    assert.ok(moved.at - start.at <= 2000, `the clock stood at ${start.time} for ${Math.round(moved.at - start.at)} ms`);
    const told = inCase.filter((f) => f.caption?.startsWith('kube-scheduler'));
    assert.deepEqual(told, [], 'no caption of the stopped kube-scheduler');
    assert.deepEqual(inCase.filter((f) => f.spotlight), [], 'no spotlight on kube-scheduler');
    const early = inCase.filter((f) => !f.asking && f.choices > 0);
    assert.deepEqual(early, [], 'the answer buttons wait for the question');
    const captions = [...new Set(inCase.map((f) => f.caption))];
    assert.ok(captions.every((c) => c === null || !/register node|0 of 3/.test(c)), `no replay of the boot: ${captions.join(' | ')}`);
  });
});
