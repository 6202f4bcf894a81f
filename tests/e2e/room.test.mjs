// The room of loops, second pass (issue 29): the loops at work are rows with their words, the
// idle ones fold into a row of dials (named on hover and focus, one click or Enter to unfold);
// and the tokens keep out of the way — a component's name or a pod is never under one.
//
// Screenshots go to test-results/ (room-folded.png, room-unfolded.png).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, pods, waitForPods, RESULTS } from './harness.mjs';

const live = setUp();

async function settledPaused(page, query = '') {
  await openReady(page, `${live.server.url}${query}`);
  await page.getByTestId('pause').click();
  await fastForward(page);
  await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'));
}

const kcm = (page) => page.locator('[data-testid="component"][data-name="kube-controller-manager"]');

test('idle loops fold into named dials; a kill unfolds the loops at work; a dial unfolds and folds by hand', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await settledPaused(page);
    // Settled, and 10 s of simulated time on (at 10×) every controller is idle, so folded.
    const rs = kcm(page).locator('[data-testid="folded-loop"][data-loop="replicaset-controller"]');
    await page.getByTestId('speed').selectOption({ label: '10×' });
    await page.getByTestId('play').click();
    await rs.waitFor({ timeout: 30_000 });
    await page.getByTestId('pause').click();
    await page.getByTestId('speed').selectOption({ label: '1×' });
    const folded = kcm(page).locator('[data-testid="folded-loop"]');
    assert.ok((await folded.count()) >= 15, `most of kube-controller-manager's loops are dials: ${await folded.count()}`);
    assert.equal(await kcm(page).locator('.loop').count() + (await folded.count()), 19, 'every loop is drawn, one way or the other');
    await page.screenshot({ path: join(RESULTS, 'room-folded.png') });
    // A dial has an accessible name, and shows its name on focus.
    const rsAgain = kcm(page).locator('[data-testid="folded-loop"][data-loop="replicaset-controller"]');
    assert.equal(await rsAgain.count(), 1);
    assert.equal(await rs.getAttribute('aria-label'), 'replicaset-controller');
    const shownName = () => rs.evaluate((e) => getComputedStyle(e, '::after').content);
    assert.equal(await shownName(), 'none', 'no name beside the dial until hovered or focused');
    await rs.focus();
    assert.equal(await shownName(), '"replicaset-controller"', 'named beside the dial on focus');
    // Enter unfolds it, pinned: a row with its words and the switch.
    await page.keyboard.press('Enter');
    const row = kcm(page).locator('.loop[data-loop="replicaset-controller"]');
    await row.waitFor();
    assert.match(await row.locator('.loop-last').innerText(), /ReplicaSet|\(at /);
    assert.equal(await kcm(page).locator('[data-testid="loop-switch"][data-name="kube-controller-manager/replicaset-controller"]').count(), 1);
    // Its fold button puts it back.
    await row.locator('[data-testid="fold-loop"]').click();
    await rs.waitFor();
    assert.equal(await row.count(), 0);

    // A kill: the ReplicaSet controller has work, so it unfolds on its own while it works.
    await page.getByTestId('story').click();
    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('kill-pod').click();
    for (let i = 0; i < 200 && !(await row.count()); i++) await page.getByTestId('step').click();
    assert.equal(await row.count(), 1, 'the loop at work is a row');
    await page.screenshot({ path: join(RESULTS, 'room-unfolded.png') });
    // Settled again and 10 s of simulated time later, it folds.
    await fastForward(page);
    await page.getByTestId('play').click();
    await page.getByTestId('speed').selectOption({ label: '10×' });
    await rs.waitFor({ timeout: 30_000 });
  });
});

test('a stopped loop stays unfolded while its process runs', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await settledPaused(page);
    const input = page.getByTestId('console-input');
    await input.fill('sim stop kube-controller-manager/cronjob-controller');
    await input.press('Enter');
    await kcm(page).locator('.loop[data-loop="cronjob-controller"][data-phase="stopped"]').waitFor();
    assert.equal(await kcm(page).locator('[data-testid="folded-loop"][data-loop="cronjob-controller"]').count(), 0);
  });
});

/**
 * Where the stage's names and pods are under something else: for each process's and loop's name
 * and each pod,
 * the element at its centre (tokens made hit-testable for the look, since they are
 * pointer-events: none) must be it or inside it. Returns the covered ones and how many tokens
 * were showing.
 */
function covered(page) {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('.stage .component-name, .stage .loop-name, .stage [data-testid="pod"]')) {
      const r = el.getBoundingClientRect();
      if (!r.width || r.bottom < 0 || r.top > innerHeight) continue;
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (!hit || !(hit === el || el.contains(hit))) {
        out.push(`${el.dataset.name ?? el.textContent} under ${hit ? `${hit.className?.baseVal ?? hit.className} ${hit.textContent}` : 'nothing'}`);
      }
    }
    const showing = [...document.querySelectorAll('.token')].filter((t) => Number(getComputedStyle(t).opacity) > 0).length;
    return { out, showing };
  });
}

for (const [label, viewport, query] of [
  ['1440×900', { width: 1440, height: 900 }, ''],
  ['presentation 1920×970', { width: 1920, height: 970 }, '?presentation=on'],
]) {
  test(`tokens never cover a component's name or a pod over 10 s of play (${label})`, { timeout: 120_000 }, async () => {
    await withPage(live.browser, { viewport }, async (page) => {
      await settledPaused(page, query);
      await page.addStyleTag({ content: '.token { pointer-events: auto !important; }' });
      // Work for the loops: a kill and a scale, story mode off so every token flies at 1×.
      await page.getByTestId('story').click();
      const victim = (await pods(page))[0].name;
      await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
      await page.getByTestId('kill-pod').click();
      await page.getByTestId('replicas-plus').click();
      await page.getByTestId('play').click();
      // Playwright scrolls each control into view to click it; the look is at the page's top,
      // where the stage starts (a scrolled page once put the sticky toolbar over a name).
      await page.evaluate(() => scrollTo(0, 0));
      const problems = [];
      let samples = 0;
      let withTokens = 0;
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        const { out, showing } = await covered(page);
        samples += 1;
        if (showing) withTokens += 1;
        if (out.length) problems.push(...out);
        await page.waitForTimeout(100);
      }
      assert.ok(samples >= 20 && withTokens >= 5, `tokens were flying while sampled: ${withTokens} of ${samples} samples`);
      assert.deepEqual([...new Set(problems)], [], 'nothing covered');
    });
  });
}
