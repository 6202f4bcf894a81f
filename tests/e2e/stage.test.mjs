// The stage (issue 14): one picture holding the control plane, the pending area and the nodes,
// with messages travelling between them as labelled tokens; the replicas box that keeps what
// is typed while the clock runs; the lesson picker; presentation mode and the phone.
//
// Screenshots go to test-results/ (stage-1440.png, stage-presentation-1920.png, stage-360.png)
// to be looked at; docs/screenshot.png is stage-1440.png.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, gap, pods, waitForPods, RESULTS } from './harness.mjs';

const live = setUp();

/** The page with the default scenario settled and the clock playing again. */
async function settledPlaying(page, query = '') {
  await openReady(page, `${live.server.url}${query}`);
  await page.getByTestId('pause').click();
  await fastForward(page);
  await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'));
  await page.getByTestId('play').click();
  await page.waitForSelector('.app[data-mode="playing"]');
}

/**
 * A settled cluster, story mode off and the clock paused (plain Step, delivery by delivery, shows
 * every token; story mode's Step jumps hop to hop), then a pod killed: the pod and the token of
 * kubectl's delete, once it is on the stage.
 */
async function killPaused(page) {
  await settledPlaying(page);
  await page.getByTestId('story').click();
  await page.getByTestId('pause').click();
  const victim = (await pods(page))[0].name;
  await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
  await page.getByTestId('kill-pod').click();
  const kill = page.locator(`[data-testid="token"][data-from="kubectl"][data-to="kube-apiserver"][data-object="pod/${victim}"]`);
  await kill.waitFor({ state: 'attached' });
  return { victim, kill };
}

test('typing a number into the replicas box while playing scales to it', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await settledPlaying(page);
    const input = page.getByTestId('replicas-input');
    // Typed key by key while the clock runs: the frames in between must not put 3 back.
    await input.click();
    await input.press('Control+A');
    await input.pressSequentially('5', { delay: 120 });
    await page.waitForFunction(() => Number(document.querySelector('.app').dataset.simTime) > 0);
    assert.equal(await input.inputValue(), '5', 'the box keeps what was typed');
    await input.press('Enter');
    await page.locator('[data-testid="command"] code', { hasText: 'kubectl scale deployment web --replicas=5' }).waitFor();
    await waitForPods(page, (list) => list.length === 5, 60_000);
    assert.equal((await gap(page)).desired, 5);
    assert.equal(await input.inputValue(), '5');
    assert.equal(await page.getByTestId('replicas-error').count(), 0);
  });
});

test('a bad replica count shows kubectl\'s error beside the box and changes nothing', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await settledPlaying(page);
    const input = page.getByTestId('replicas-input');
    for (const [typed, message] of [
      ['-1', 'error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0'],
      ['abc', 'error: invalid argument "abc" for "--replicas" flag: strconv.ParseInt: parsing "abc": invalid syntax\nSee \'kubectl scale --help\' for usage.'],
      // Typed key by key over what the box held, as a learner types it.
      ['-3', 'error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0'],
    ]) {
      if (typed === '-3') {
        await input.click();
        await input.press('Control+A');
        await input.pressSequentially(typed, { delay: 80 });
      } else {
        await input.fill(typed);
      }
      await input.press('Enter');
      const error = page.getByTestId('replicas-error');
      await page.waitForFunction((m) => document.querySelector('[data-testid="replicas-error"]')?.innerText === m, message);
      // kubectl's lines stay lines (the error keeps its line break).
      assert.equal(await error.innerText(), message);
      assert.equal(await input.getAttribute('aria-invalid'), 'true');
      assert.equal(await input.inputValue(), typed, 'the bad value stays in the box to be corrected');
      assert.equal((await gap(page)).desired, 3, 'nothing changed');
    }
    assert.equal((await pods(page)).length, 3);
    // Corrected, the error goes and the count is applied.
    await input.fill('4');
    await input.press('Enter');
    await waitForPods(page, (list) => list.length === 4, 60_000);
    assert.equal(await page.getByTestId('replicas-error').count(), 0);
  });
});

test('after a Kill, tokens travel between the components with what they carry', { timeout: 120_000 }, async () => {
  // Reduced motion: a token is drawn where it lands, so where it lands can be checked.
  await withPage(live.browser, { viewport: { width: 1440, height: 900 }, reducedMotion: 'reduce' }, async (page) => {
    const { victim, kill } = await killPaused(page);
    assert.match(await kill.innerText(), /^delete pod web-…-\w{5}$/);
    assert.match(await kill.getAttribute('title'), new RegExp(`kubectl → kube-apiserver: delete pod/default/${victim}`));
    // It lands on kube-apiserver's box.
    const landed = await page.evaluate(() => {
      const t = document.querySelector('[data-testid="token"][data-from="kubectl"]').getBoundingClientRect();
      const box = document.querySelector('[data-testid="component"][data-name="kube-apiserver"]').getBoundingClientRect();
      const [x, y] = [t.x + t.width / 2, t.y + t.height / 2];
      return { inside: x >= box.left && x <= box.right && y >= box.top - 40 && y <= box.bottom + 40, t: t.toJSON(), box: box.toJSON() };
    });
    assert.ok(landed.inside, `the delete lands on kube-apiserver: ${JSON.stringify(landed)}`);
    // Step on: the ReplicaSet controller asks for a replacement, the scheduler binds it.
    const seen = new Set();
    for (let i = 0; i < 400 && !(seen.has('create') && seen.has('bind')); i++) {
      await page.getByTestId('step').click();
      for (const t of await page.$$eval('[data-testid="token"]', (els) => els.map((e) => `${e.dataset.from}|${e.dataset.to}|${e.textContent}`))) {
        if (t.startsWith('kube-controller-manager|kube-apiserver|create pod web-…')) seen.add('create');
        if (/^kube-scheduler\|kube-apiserver\|bind → node-\d$/.test(t)) seen.add('bind');
      }
    }
    assert.deepEqual([...seen].sort(), ['bind', 'create']);
    await page.screenshot({ path: join(RESULTS, 'stage-tokens.png') });
  });
});

test('a token flies from its sender\'s box to its receiver\'s as a transform, and nothing moves it by layout', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    const { kill } = await killPaused(page);
    const flight = await kill.evaluate((token) => {
      const stage = token.closest('.stage').getBoundingClientRect();
      const centre = (sel) => {
        const r = token.closest('.stage').querySelector(sel).getBoundingClientRect();
        return [r.left + r.width / 2 - stage.left, r.top + r.height / 2 - stage.top];
      };
      const animations = token.getAnimations();
      const keyframes = animations.flatMap((a) => a.effect.getKeyframes());
      const parse = (t) => t.match(/translate\((-?[\d.]+)px, (-?[\d.]+)px\)/).slice(1).map(Number);
      return {
        count: animations.length,
        cssAnimation: getComputedStyle(token).animationName,
        properties: [...new Set(keyframes.flatMap((k) => Object.keys(k)))].sort(),
        from: parse(keyframes[0].transform),
        to: parse(keyframes[keyframes.length - 1].transform),
        kubectl: centre('[data-anchor="--c-kubectl"]'),
        apiserver: centre('[data-testid="component"][data-name="kube-apiserver"]'),
        lastOpacity: Number(keyframes[keyframes.length - 1].opacity),
      };
    });
    assert.equal(flight.count, 1, 'one flight per token');
    assert.equal(flight.cssAnimation, 'none', 'no CSS animation moves it');
    // Only what the compositor animates: no left/top, no size (either would lay the stage out each frame).
    assert.deepEqual(flight.properties, ['composite', 'computedOffset', 'easing', 'offset', 'opacity', 'transform']);
    const near = (a, b) => Math.abs(a[0] - b[0]) <= 2 && Math.abs(a[1] - b[1]) <= 2;
    assert.ok(near(flight.from, flight.kubectl), `it starts at kubectl: ${JSON.stringify(flight)}`);
    assert.ok(near(flight.to, flight.apiserver), `it lands on kube-apiserver: ${JSON.stringify(flight)}`);
    assert.equal(flight.lastOpacity, 0, 'and is gone at the end');
    // Seeked to a third of the way (no waiting on the wall clock): visible, and between the two.
    const mid = await kill.evaluate((token) => {
      const [a] = token.getAnimations();
      a.pause();
      a.currentTime = a.effect.getTiming().duration * 0.35;
      const stage = token.closest('.stage').getBoundingClientRect();
      const t = token.getBoundingClientRect();
      return { x: t.left + t.width / 2 - stage.left, shown: Number(getComputedStyle(token).opacity) };
    });
    assert.equal(mid.shown, 1, 'visible while it flies');
    const [lo, hi] = [flight.kubectl[0], flight.apiserver[0]].sort((a, b) => a - b);
    assert.ok(mid.x > lo + 5 && mid.x < hi - 5, `on its way: ${JSON.stringify({ mid, flight })}`);
  });
});

/**
 * What is not inside the viewport: every pod and every component's name must be (the stage
 * scrolled to the top, as the page opens).
 */
async function outside(page) {
  return page.evaluate(() => {
    const out = [];
    const { innerWidth: w, innerHeight: h } = window;
    for (const el of document.querySelectorAll('[data-testid="pod"], .stage .component-name')) {
      const r = el.getBoundingClientRect();
      if (r.left < 0 || r.top < 0 || r.right > w || r.bottom > h || r.width === 0) {
        out.push(`${el.dataset.name ?? el.textContent} at ${Math.round(r.left)},${Math.round(r.top)}–${Math.round(r.right)},${Math.round(r.bottom)}`);
      }
    }
    return out;
  });
}

test('the stage fits 1440×900 with the gap beside it: every pod and component name in view; a new pod is seen pending', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 }, colorScheme: 'light' }, async (page) => {
    await settledPlaying(page);
    assert.deepEqual(await outside(page), [], 'every pod and component name is inside 1440×900');
    assert.ok((await page.locator('.stage .component-name').count()) >= 8, 'the control plane and both nodes\' processes');
    const stage = await page.getByTestId('cluster-frame').boundingBox();
    assert.ok(stage.y + stage.height <= 900, `the stage fits the first screen: ${JSON.stringify(stage)}`);
    const gapBox = await page.getByTestId('gap').boundingBox();
    assert.ok(gapBox.y + gapBox.height <= 900, `the gap fits the first screen: ${JSON.stringify(gapBox)}`);
    const pending = await page.getByTestId('pending').boundingBox();
    assert.ok(pending.height >= 40, `the pending area has room: ${JSON.stringify(pending)}`);
    // Pods are bigger than the 60×19 chips with 11 px text they were.
    // Its layout size (a chip that just landed on its node is still scaling in).
    const chip = await page.locator('[data-testid="node"] [data-testid="pod"]').first().evaluate((e) => (
      { width: e.offsetWidth, height: e.offsetHeight, font: parseFloat(getComputedStyle(e).fontSize) }
    ));
    assert.ok(chip.height >= 24 && chip.width >= 70 && chip.font >= 13, `a pod chip: ${JSON.stringify(chip)}`);
    assert.equal(await page.locator('.pod-legend li').count(), 7, 'the colour legend');
    assert.match(await page.locator('[data-testid="component"][data-name="kube-scheduler"]').getAttribute('title'), /picks a node/);
    // Paused, a new pod waits in the pending area until the scheduler binds it; the nodes below
    // do not move while the pending area fills and empties.
    await page.getByTestId('pause').click();
    const nodeY = () => page.locator('[data-testid="node"]').first().evaluate((e) => e.getBoundingClientRect().top);
    const ys = [await nodeY()];
    await page.getByTestId('replicas-plus').click();
    let waiting = 0;
    let bound = false;
    for (let i = 0; i < 400 && !bound; i++) {
      await page.getByTestId('step').click();
      const now = await page.locator('[data-testid="pending"] [data-testid="pod"]').count();
      ys.push(await nodeY());
      if (now) waiting += 1;
      else if (waiting) bound = true;
      if (waiting === 1) await page.screenshot({ path: join(RESULTS, 'stage-1440-pending.png') });
    }
    assert.ok(waiting, 'the new pod waited in the pending area');
    assert.ok(bound, 'and left it once bound');
    assert.ok(Math.max(...ys) - Math.min(...ys) <= 1, `the nodes did not move: ${Math.min(...ys)}–${Math.max(...ys)}`);
    await fastForward(page);
    await page.screenshot({ path: join(RESULTS, 'stage-1440.png') });
  });
});

test('presentation mode: labels of 18 px or more, and every pod and component name fits 1920×970', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1920, height: 970 } }, async (page) => {
    await settledPlaying(page, '?presentation=on');
    assert.equal(await page.getByTestId('presentation').getAttribute('aria-pressed'), 'true');
    const smallest = await page.$$eval('.stage *', (els) =>
      Math.min(...els.filter((e) => e.childNodes.length && [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))
        .map((e) => parseFloat(getComputedStyle(e).fontSize))),
    );
    assert.ok(smallest >= 18, `the smallest label on the stage is ${smallest}px`);
    // Taken before the fit is judged, so that a stage that does not fit can be looked at.
    await page.screenshot({ path: join(RESULTS, 'stage-presentation-1920.png') });
    assert.deepEqual(await outside(page), [], 'every pod and component name is inside 1920×970');
    const stage = await page.getByTestId('cluster-frame').boundingBox();
    assert.ok(stage.y + stage.height <= 970 && stage.x + stage.width <= 1920, `the stage fits: ${JSON.stringify(stage)}`);
    // The toolbar's toggle turns it off and on again.
    await page.getByTestId('presentation').click();
    assert.equal(await page.getByTestId('presentation').getAttribute('aria-pressed'), 'false');
    assert.equal(await page.locator('.app.presentation').count(), 0);
  });
});

test('a 360×740 phone shows the first node with its pods and the pending area in its first screen', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 360, height: 740 } }, async (page) => {
    await openReady(page, live.server.url);
    await page.waitForSelector('[data-testid="node"] >> nth=1', { timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.scrollY), 0);
    for (const selector of ['[data-testid="node"] >> nth=0', '[data-testid="pending"]']) {
      const box = await page.locator(selector).boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= 740 && box.x + box.width <= 360, `${selector} in the first screen: ${JSON.stringify(box)}`);
    }
    // Settled, the first node's pods are in the first screen too.
    await page.getByTestId('pause').click();
    await fastForward(page);
    await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'));
    await page.evaluate(() => window.scrollTo(0, 0));
    const first = page.locator('[data-testid="node"]').first();
    const selectors = ['[data-testid="pending"]'];
    const onFirst = await first.locator('[data-testid="pod"]').count();
    assert.ok(onFirst > 0, 'the first node runs pods');
    for (let i = 0; i < onFirst; i++) selectors.push(`[data-testid="node"] >> nth=0 >> [data-testid="pod"] >> nth=${i}`);
    for (const selector of selectors) {
      const box = await page.locator(selector).boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= 740 && box.x + box.width <= 360, `${selector} in the first screen: ${JSON.stringify(box)}`);
    }
    await page.screenshot({ path: join(RESULTS, 'stage-360.png') });
  });
});

test('a selected pod carries its own Kill control, which deletes it', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await settledPlaying(page);
    await page.getByTestId('pause').click();
    assert.equal(await page.getByTestId('pod-kill').count(), 0, 'no Kill until a pod is selected');
    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    const kill = page.getByTestId('pod-kill');
    assert.equal(await kill.count(), 1);
    assert.equal(await kill.getAttribute('aria-label'), `Kill pod ${victim}`);
    assert.ok(await kill.isVisible());
    // Keyboard: Tab from the pod reaches it.
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'pod-kill');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="command"] code', { hasText: `kubectl delete pod ${victim}` }).waitFor();
    await page.getByTestId('play').click();
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).waitFor({ state: 'detached', timeout: 60_000 });
    await waitForPods(page, (list) => list.filter((p) => p.status === 'Running').length === 3, 60_000);
  });
});

test('a claim with no pod yet is a ghost slot in the pending area, and a lagging status is explained in one line', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await settledPlaying(page);
    await page.getByTestId('pause').click();
    assert.equal(await page.getByTestId('ghost-pod').count(), 0, 'settled: no replica missing');
    // Scaled to 5 while paused: the claim is written, no pod is created yet.
    await page.getByTestId('replicas-plus').click();
    await page.getByTestId('replicas-plus').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="ghost-pod"]').length === 2);
    assert.match(await page.locator('.ghosts').getAttribute('aria-label'), /^2 pods of web claimed and not yet created$/);
    await page.screenshot({ path: join(RESULTS, 'stage-ghosts.png') });
    // Step by step each ghost gives way to a real pod; on the way the status lags the pods.
    const lags = new Set();
    for (let i = 0; i < 400 && (await page.getByTestId('ghost-pod').count()); i++) {
      await page.getByTestId('step').click();
      const ghosts = await page.getByTestId('ghost-pod').count();
      const drawn = (await pods(page)).length;
      assert.equal(ghosts + drawn, 5, 'a ghost for each claimed pod not yet drawn');
    }
    assert.equal(await page.getByTestId('ghost-pod').count(), 0);
    // Scaled down to 1: the four going are drawn Terminating, and the panel says why they do
    // not count.
    const input = page.getByTestId('replicas-input');
    await input.fill('1');
    await input.press('Enter');
    for (let i = 0; i < 600; i++) {
      await page.getByTestId('step').click();
      const lag = page.getByTestId('gap-lag');
      if (await lag.count()) lags.add(await lag.innerText());
      if ([...lags].some((l) => /no status counts a pod being deleted$/.test(l))) break;
    }
    assert.ok([...lags].some((l) => /^Terminating pods drawn: \d; no status counts a pod being deleted$/.test(l)), [...lags].join(' | '));
  });
});

test('the console is tall enough to read a describe without a long scroll', { timeout: 60_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, live.server.url);
    const height = await page.locator('.console .transcript').evaluate((e) => e.clientHeight);
    assert.ok(height >= 400, `the console's transcript is ${height} px tall`);
  });
});

test('the lesson picker lists the built-in lessons and opens one', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    const picker = page.getByTestId('lesson-picker');
    const options = await picker.locator('option').allInnerTexts();
    assert.ok(options.includes('Which loop stopped turning?') && options.includes('A pod is killed, hop by hop') && options.includes('A Service is a loop'), options.join(' | '));
    assert.equal(options.length, 12, 'a prompt and eleven lessons');
    await Promise.all([page.waitForURL(/\?lesson=which-loop$/), picker.selectOption('which-loop')]);
    await page.waitForSelector('body[data-ready="true"]');
    await page.getByTestId('lesson').waitFor();
    assert.equal(await page.getByTestId('lesson-picker').inputValue(), 'which-loop');
  });
});

test('the story toggle shows and flips story mode', { timeout: 60_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    const story = page.getByTestId('story');
    const before = await story.getAttribute('aria-pressed');
    await story.click();
    await page.waitForFunction((b) => document.querySelector('[data-testid="story"]').getAttribute('aria-pressed') !== b, before);
    // No caption yet from the engine: the strip shows the last action quietly, with no test hook.
    assert.equal(await page.getByTestId('caption').count(), 0);
    assert.ok(await page.locator('.caption.placeholder').isVisible());
  });
});
