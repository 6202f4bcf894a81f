// A guided lesson played end to end in the page: lesson 1 ("desired state is a claim") chosen by
// `?lesson=desired-state`. The learner waits for the cluster, answers a prediction while the
// simulation holds still, sees it graded against what the cluster really did, watches the check
// pass, performs a task in the console, and finishes with a score. A bad lesson name gets a
// clear error in the page instead of a blank one.
//
// Simulated time moves only through the page's own controls; the tests wait for DOM conditions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, RESULTS } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** Serious or critical axe violations on the page as it is now. */
async function axeViolations(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

const live = setUp();

const lesson = (page) => page.getByTestId('lesson');

async function waitPhase(page, phase, timeout = 60_000) {
  await page.waitForSelector(`[data-testid="lesson"][data-phase="${phase}"]`, { timeout });
}

async function next(page) {
  const step = Number(await lesson(page).getAttribute('data-step'));
  await page.getByTestId('lesson-next').click();
  await page.waitForFunction((s) => Number(document.querySelector('[data-testid="lesson"]')?.dataset.step) !== s || document.querySelector('[data-testid="lesson"]')?.dataset.phase === 'finished', step);
}

test('lesson 1 end to end: a prediction graded against the cluster, checks, a task, a score', { timeout: 180_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=desired-state`);
    assert.equal(await lesson(page).getAttribute('data-step'), '0');
    assert.match(await page.getByRole('heading', { name: 'Desired state is a claim' }).innerText(), /Desired state/);
    assert.ok(await page.getByTestId('lesson-next').isDisabled(), 'Next waits for the check');

    // Step 1: the cluster comes up; the check turns green.
    await fastForward(page);
    await waitPhase(page, 'passed');
    assert.match(await page.getByTestId('lesson-checks').innerText(), /exactly 3 pods with app=web Running/);
    await next(page);

    // Step 2: a prediction. The simulation holds still until it is answered.
    await waitPhase(page, 'predict');
    const held = await page.locator('.app').getAttribute('data-sim-time');
    await page.getByTestId('play').click();
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    assert.equal(await page.locator('.app').getAttribute('data-sim-time'), held, 'the clock waits for the answer');
    assert.match(await page.getByTestId('lesson-question').innerText(), /How many web pods exist/);
    await page.screenshot({ path: join(RESULTS, 'lesson-1-predict.png'), fullPage: true });
    await page.locator('[data-testid="lesson-choice"][data-choice="3"]').click();
    // Graded against what the cluster showed the moment kubectl returned: still three pods.
    await page.waitForSelector('[data-testid="lesson-feedback"][data-graded="right"]');
    assert.match(await page.getByTestId('lesson-feedback').innerText(), /Right: 3\./);
    assert.match(await page.getByTestId('console-output').innerText(), /\$ kubectl scale deployment\/web --replicas=5\ndeployment.apps\/web scaled/);
    await fastForward(page);
    await waitPhase(page, 'passed');
    assert.match(await page.getByTestId('lesson-checks').innerText(), /deployment web: readyReplicas 5/);
    await page.screenshot({ path: join(RESULTS, 'lesson-1-graded.png'), fullPage: true });
    await next(page);

    // Step 3: a task the learner performs in the console.
    assert.match(await page.getByTestId('lesson-task').innerText(), /Scale the Deployment web to 2 replicas/);
    await page.getByTestId('console-input').fill('kubectl scale deployment/web --replicas=2');
    await page.getByTestId('console-input').press('Enter');
    await fastForward(page);
    await waitPhase(page, 'passed');
    await next(page);

    // Step 4: text only, then the score.
    await waitPhase(page, 'passed');
    await page.getByTestId('lesson-next').click();
    await waitPhase(page, 'finished');
    assert.equal(await page.getByTestId('lesson-status').innerText(), 'Answers right: 1 of 1. Checks passed: 3 of 3.');
    await page.screenshot({ path: join(RESULTS, 'lesson-1-finished.png'), fullPage: true });
  });
});

test('a wrong prediction is graded wrong, with the real answer', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'dark' }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=desired-state`);
    await fastForward(page);
    await waitPhase(page, 'passed');
    await next(page);
    await page.locator('[data-testid="lesson-choice"][data-choice="5"]').click();
    await page.waitForSelector('[data-testid="lesson-feedback"][data-graded="wrong"]');
    assert.match(await page.getByTestId('lesson-feedback').innerText(), /you said 5, the answer is 3/);
  });
});

test('an unknown lesson in the address is a clear error, and the page still works', { timeout: 60_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=nope`);
    assert.match(
      await page.getByTestId('page-error').innerText(),
      /unknown lesson "nope" in parameter "lesson"; the built-in lessons are desired-state, worked-example, level-vs-edge/,
    );
    assert.equal(await page.getByTestId('lesson').count(), 0);
    await page.waitForSelector('[data-testid="node"] >> nth=1', { timeout: 30_000 });
  });
});

for (const colorScheme of ['light', 'dark']) {
  test(`the lesson panel has no serious accessibility problem, question open and graded (${colorScheme})`, { timeout: 120_000 }, async () => {
    await withPage(live.browser, { colorScheme, reducedMotion: 'reduce' }, async (page) => {
      await openReady(page, `${live.server.url}?lesson=desired-state`);
      await fastForward(page);
      await waitPhase(page, 'passed');
      await next(page);
      await waitPhase(page, 'predict');
      assert.deepEqual(await axeViolations(page), []);
      // Keyboard only: Tab to the first choice and press Enter.
      await page.locator('[data-testid="lesson-choice"]').first().focus();
      await page.keyboard.press('Enter');
      await page.waitForSelector('[data-testid="lesson-feedback"]');
      assert.deepEqual(await axeViolations(page), []);
    });
  });
}

test('a lesson file served next to the page loads by URL and runs', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=examples/scale-lesson.yaml`);
    await page.getByRole('heading', { name: 'Three becomes four' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId('page-error').count(), 0);
    await fastForward(page);
    await waitPhase(page, 'passed');
    assert.match(await page.getByTestId('lesson-checks').innerText(), /exactly 4 pods with app=web Running/);
  });
});

test('lesson 11 in the page: its own file and the example files it names are fetched when it starts, and its first step applies the Website definition', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    const fetched = [];
    page.on('request', (request) => fetched.push(new URL(request.url()).pathname));
    await openReady(page, live.server.url);
    assert.deepEqual(
      fetched.filter((p) => p.includes('/lessons/') || p.includes('/operators/')),
      [],
      'no lesson text is fetched on a page without a lesson',
    );
    await page.goto(`${live.server.url}?lesson=write-your-own-loop`);
    await page.getByRole('heading', { name: 'Write your own loop' }).waitFor({ timeout: 30_000 });
    // (The Operator panel, which the lesson opens, fetches the starting file again for its editor.)
    const asked = new Set(fetched.filter((p) => p.includes('/lessons/') || p.includes('/operators/')).map((p) => p.slice(p.lastIndexOf('/', p.lastIndexOf('/') - 1))));
    assert.deepEqual([...asked].sort(), ['/lessons/write-your-own-loop.yaml', '/operators/shop-v2.yaml', '/operators/shop.yaml', '/operators/website-crd.yaml', '/operators/website.py', '/operators/website_start.py']);
    assert.equal(await page.getByTestId('page-error').count(), 0);
    await fastForward(page);
    await waitPhase(page, 'passed');
    // The step's action ran in the console: the definition applied, the new resource listed.
    await page.waitForFunction(() => /websites\.lessons\.kubeloop\.dev created/.test(document.querySelector('[data-testid="console-output"]')?.innerText ?? ''));
  });
});

test('a malformed lesson file, or one off this origin, is a clear error and the page still runs', { timeout: 60_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=examples/broken-lesson.yaml`);
    await page.getByTestId('page-error').waitFor({ timeout: 30_000 });
    assert.match(
      await page.getByTestId('page-error').innerText(),
      /error: lesson "examples\/broken-lesson.yaml": .*steps\[0\]\.check\.pods\.count: must be a whole number, got "many"/,
    );
    assert.equal(await page.getByTestId('lesson').count(), 0);
    await page.waitForSelector('[data-testid="node"] >> nth=1', { timeout: 30_000 });
  });
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=${encodeURIComponent('https://elsewhere.example/lesson.yaml')}`);
    await page.getByTestId('page-error').waitFor({ timeout: 30_000 });
    assert.match(await page.getByTestId('page-error').innerText(), /error: refusing to load lesson "https:\/\/elsewhere.example\/lesson.yaml": it is not on this page's origin/);
    assert.equal(await page.getByTestId('lesson').count(), 0);
  });
});

test('a lesson starts in the present: its first step says how long it has waited, and that moves', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, `${live.server.url}?lesson=desired-state`);
    // The lesson's file arrives (fetched from the build) and its panel says what to do; no
    // caption tells (or replays) the boot meanwhile.
    await lesson(page).waitFor();
    assert.equal(await page.getByTestId('caption').count(), 0);
    // The live status line stays still; the words and the bar beside it move with the clock.
    assert.equal(await page.getByTestId('lesson-status').innerText(), 'Waiting for the check (at most 2m of simulated time).');
    const waited = page.getByTestId('lesson-waited');
    assert.match(await waited.innerText(), /^\S+ of at most 2m of simulated time$/);
    const first = await waited.innerText();
    const bar = page.getByTestId('lesson-wait');
    const value = Number(await bar.getAttribute('value'));
    assert.equal(await bar.getAttribute('max'), '120000');
    await page.waitForFunction((v) => Number(document.querySelector('[data-testid="lesson-wait"]')?.value) > v, value, { timeout: 3_000 });
    assert.notEqual(await waited.innerText(), first, 'the words move with the clock');
    await page.screenshot({ path: join(RESULTS, 'lesson-1-waiting.png') });
    // At the default speed, untold, the three pods are up within seconds.
    await waitPhase(page, 'passed', 20_000);
  });
});
