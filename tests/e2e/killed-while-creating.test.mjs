// A pod killed while its kubelet is still creating it (issue 29): the default scenario opened
// paused, moved to 0.4 s (the kubelet is pulling nginx), one ContainerCreating pod selected and
// killed, then played. Once the pod shows Terminating it must never show ContainerCreating again
// — not on the stage (sampled every animation frame) and not in `kubectl get pods -w` in the
// console (every change the watch sees) — and `kubectl get pods` ends with the 3 pods desired.
// Upstream: kubectl prints Terminating while deletionTimestamp is set and the phase is not
// terminal; the kubelet's final status (TerminatePod) marks the never-started container
// ContainerStatusUnknown, phase Failed, just before it deletes the pod.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, openReady, pods, waitForPods } from './harness.mjs';

const live = setUp();

const transcript = (page) => page.getByTestId('console-output').innerText();

async function type(page, line) {
  const input = page.getByTestId('console-input');
  await input.fill(line);
  await input.press('Enter');
}

/** The statuses a pod showed, in order, without repeats. */
function sequence(statuses) {
  return statuses.filter((s, i) => i === 0 || s !== statuses[i - 1]);
}

/** Fails if `statuses` shows ContainerCreating (or Pending) after Terminating. */
function assertNeverCreatingAfterTerminating(statuses, where) {
  const seen = sequence(statuses);
  const from = seen.indexOf('Terminating');
  assert.notEqual(from, -1, `${where}: the killed pod shows Terminating: ${seen.join(' → ')}`);
  const after = seen.slice(from);
  assert.ok(
    after.every((s) => !['ContainerCreating', 'Pending', 'Running'].includes(s)),
    `${where}: after Terminating the killed pod showed ${after.join(' → ')}`,
  );
}

test('a pod killed while ContainerCreating stays Terminating until it is gone', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, `${live.server.url}?autoplay=false`);
    assert.equal(await page.locator('.app').getAttribute('data-mode'), 'paused');
    await type(page, 'kubectl get pods -w');
    await type(page, 'sim advance 400ms');
    await waitForPods(page, (list) => list.length === 3 && list.some((p) => p.status === 'ContainerCreating'));
    const victim = (await pods(page)).find((p) => p.status === 'ContainerCreating').name;

    // Every animation frame from here on: the victim's status on the stage, and the pod count.
    await page.evaluate((name) => {
      window.__killed = { statuses: [], counted: [] };
      const sample = () => {
        const els = [...document.querySelectorAll('[data-testid="pod"]')];
        const mine = els.find((e) => e.dataset.name === name);
        if (mine) window.__killed.statuses.push(mine.dataset.status);
        const counting = els.filter((e) => !['Terminating', 'ContainerStatusUnknown', 'Completed', 'Error'].includes(e.dataset.status));
        window.__killed.counted.push(counting.length);
        requestAnimationFrame(sample);
      };
      requestAnimationFrame(sample);
    }, victim);

    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('kill-pod').click();
    await page.locator('[data-testid="command"] code', { hasText: `kubectl delete pod ${victim}` }).waitFor();
    await page.getByTestId('play').click();
    await page.waitForSelector('.app[data-mode="playing"]');
    // At 1× the kubelet removes the pod within a couple of simulated seconds.
    await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'), 60_000);
    assert.ok(!(await pods(page)).some((p) => p.name === victim), 'the killed pod is gone from the stage');

    const seen = await page.evaluate(() => window.__killed);
    assertNeverCreatingAfterTerminating(seen.statuses, 'the stage');
    assert.ok(Math.max(...seen.counted) <= 3, `never more than 3 pods that count for a desired 3 on the stage: ${Math.max(...seen.counted)}`);

    // The console's watch printed every change of the victim (NAME READY STATUS RESTARTS AGE).
    const watched = (await transcript(page))
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols[0] === victim && cols.length >= 5)
      .map((cols) => cols[2]);
    assertNeverCreatingAfterTerminating(watched, 'kubectl get pods -w');

    await page.getByTestId('console-input').press('Control+c');
    await type(page, 'kubectl get pods');
    await page.waitForFunction(() => /\$ kubectl get pods\nNAME/.test(document.querySelector('[data-testid="console-output"]').innerText));
    const text = await transcript(page);
    const listed = text.slice(text.lastIndexOf('$ kubectl get pods\n')).split('\n').slice(2).filter((l) => /^web-/.test(l));
    assert.equal(listed.length, 3, `kubectl get pods lists the 3 pods desired:\n${listed.join('\n')}`);
    assert.ok(listed.every((l) => /\s1\/1\s+Running\s/.test(l) && !l.startsWith(victim)), listed.join('\n'));
  });
});
