// Story mode (issues 14 and 29): at the default speed a Kill's chain is told hop by hop — the
// ReplicaSet controller, kube-scheduler, then the chosen node's kubelet — each caption on screen
// long enough to be read, and the replacement is seen waiting, fully drawn, in the pending area
// before it lands on a node. The page opens on a caption saying what is there and what to try.
//
// What the page shows is recorded in the page itself, on every animation frame, so the test
// reads the order and timing of what a learner saw without sampling it from outside.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, pods, waitForPods, RESULTS, DIST } from './harness.mjs';

const live = setUp();

/** A caption must stay up at least this long (wall ms) to be read. */
const READ_MS = 1500;

/**
 * Starts recording, each frame: the caption (when it changes, with when), and for each pod in
 * the pending area the wall time it was there fully drawn (opacity 1, full size).
 */
function record() {
  const seen = { captions: [], pendingMs: {}, started: performance.now() };
  window.__story = seen;
  let last = performance.now();
  const look = (now) => {
    const dt = now - last;
    last = now;
    const c = document.querySelector('[data-testid="caption"]');
    const prev = seen.captions[seen.captions.length - 1];
    const text = c ? c.textContent : null;
    if (!prev || prev.text !== text) {
      seen.captions.push({ component: c?.dataset.component ?? null, object: c?.dataset.object ?? null, text, at: now - seen.started });
    }
    for (const p of document.querySelectorAll('[data-testid="pending"] [data-testid="pod"]')) {
      if (p.dataset.node) continue;
      const style = getComputedStyle(p);
      const whole = Number(style.opacity) >= 0.99 && p.getBoundingClientRect().width >= p.offsetWidth - 0.5;
      if (whole) seen.pendingMs[p.dataset.name] = (seen.pendingMs[p.dataset.name] ?? 0) + dt;
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}

/** The captions recorded, each with how long it stayed on screen (the last: until now). */
async function captionsShown(page) {
  return page.evaluate(() => {
    const s = window.__story;
    const now = performance.now() - s.started;
    return {
      captions: s.captions.map((c, i) => ({ ...c, ms: (s.captions[i + 1]?.at ?? now) - c.at })),
      pendingMs: s.pendingMs,
    };
  });
}

/** The pod's own Kill (on the stage), or the side panel's. */
async function kill(page) {
  const onPod = page.getByTestId('pod-kill');
  await ((await onPod.count()) > 0 ? onPod.first() : page.getByTestId('kill-pod')).click();
}

test('story mode at the default speed tells a Kill hop by hop, in order, within 30 s', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, live.server.url);
    const toggle = page.getByTestId('story');
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true', 'story mode is on by default');
    await page.getByTestId('pause').click();
    await fastForward(page);
    await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'));
    const before = await pods(page);
    const victim = before[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('play').click();
    await page.waitForSelector('.app[data-mode="playing"]');
    const started = Date.now();
    await page.evaluate(record);
    await kill(page);
    // The chain is complete when three pods run again, none of them the killed one.
    await waitForPods(
      page,
      `(list) => list.length === 3 && list.every((p) => p.status === 'Running' && p.name !== ${JSON.stringify(victim)})`,
      30_000,
    );
    const wall = Date.now() - started;
    const after = await pods(page);
    const replacement = after.find((p) => !before.some((b) => b.name === p.name));
    assert.ok(replacement, `a new pod: ${JSON.stringify(after)}`);
    const seen = await captionsShown(page);
    const order = seen.captions.map((c) => c.component);
    const first = (component) => {
      const i = order.indexOf(component);
      assert.ok(i >= 0, `a caption from ${component}: ${JSON.stringify(seen.captions, null, 1)}`);
      return i;
    };
    const rs = first('kube-controller-manager/replicaset-controller');
    const scheduler = first('kube-scheduler');
    const kubelet = first(`kubelet-${replacement.node}`);
    assert.ok(rs < scheduler && scheduler < kubelet, `in the chain's order: ${order.join(' → ')}`);
    // Each of the three key hops stays up long enough to be read.
    for (const i of [rs, scheduler, kubelet]) {
      const c = seen.captions[i];
      assert.ok(c.ms >= READ_MS, `"${c.text}" was on screen ${Math.round(c.ms)} ms: ${JSON.stringify(seen.captions, null, 1)}`);
    }
    // The replacement waits, fully drawn, in the pending area as long.
    const pending = seen.pendingMs[replacement.name] ?? 0;
    assert.ok(pending >= READ_MS, `the replacement was in the pending area ${Math.round(pending)} ms: ${JSON.stringify(seen.pendingMs)}`);
    // And the whole chain is still done well within 30 s.
    assert.ok(wall < 30_000, `${wall} ms`);
    await page.screenshot({ path: join(RESULTS, 'story-kill.png') });
  });
});

test('the page opens on a caption that says what is on screen and what to try, from the first picture on', { timeout: 120_000 }, async () => {
  // The pre-rendered first picture already holds it: nothing flashes when the wasm takes over.
  const html = await readFile(join(DIST, 'index.html'), 'utf8');
  const prerendered = html.match(/<p[^>]*data-testid="caption"[^>]*>([^<]*)<\/p>/);
  assert.ok(prerendered, 'the first picture has the caption');
  const entities = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#x27;': "'" };
  const intro = prerendered[1].replace(/&(amp|lt|gt|quot|#39|#x27);/g, (e) => entities[e]);
  assert.match(intro, /^A Kubernetes cluster: .*Select a pod and kill it\.$/, intro);
  for (const [name, options] of [
    ['1440', { viewport: { width: 1440, height: 900 } }],
    ['360', { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true }],
    ['presentation-1920', { viewport: { width: 1920, height: 1080 } }],
  ]) {
    await withPage(live.browser, options, async (page) => {
      // Recorded from the first frame the page paints, before the wasm has arrived.
      await page.addInitScript(() => {
        window.__first = [];
        const look = () => {
          const c = document.querySelector('[data-testid="caption"]');
          // From the first frame that has the stage (the document may still be arriving before).
          if (c || window.__first.length > 0) window.__first.push(c ? c.textContent : null);
          if (!document.body?.dataset.ready) window.__beforeReady = window.__first.length;
          if (!document.body?.dataset.ready || window.__first.length < 120) requestAnimationFrame(look);
        };
        requestAnimationFrame(look);
      });
      await openReady(page, `${live.server.url}${name.startsWith('presentation') ? '?presentation=on' : ''}`);
      const caption = page.getByTestId('caption');
      assert.equal(await caption.innerText(), intro);
      assert.equal(await caption.getAttribute('data-component'), '', 'it spotlights nothing');
      const box = await caption.boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= options.viewport.height, `in the first screen: ${JSON.stringify(box)}`);
      // The boot runs under it, unheld: the pods are up within seconds, the caption unchanged.
      await waitForPods(page, (list) => list.length === 3 && list.every((p) => p.status === 'Running'), 20_000);
      await page.waitForFunction(() => window.__first.length >= 120);
      const frames = await page.evaluate(() => ({ frames: window.__first, beforeReady: window.__beforeReady }));
      assert.deepEqual([...new Set(frames.frames)], [intro], 'the same caption in every frame, from the first picture on');
      assert.ok(frames.beforeReady > 0, 'including frames of the first picture, before the wasm took over');
      await page.screenshot({ path: join(RESULTS, `story-opening-${name}.png`) });
      if (name === '1440') {
        // The first action ends it: the Kill is told.
        const victim = (await pods(page))[0].name;
        await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
        await kill(page);
        await page.waitForFunction(() => document.querySelector('[data-testid="caption"]')?.dataset.component !== '');
        assert.match(await caption.innerText(), /^(kubectl: delete pod|ReplicaSet controller)/);
      }
    });
  }
});

test('the speed menu slows the story: at 0.5× a caption stays twice as long', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { viewport: { width: 1440, height: 900 } }, async (page) => {
    await openReady(page, live.server.url);
    await page.getByTestId('pause').click();
    await fastForward(page);
    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await page.getByTestId('speed').selectOption({ label: '0.5×' });
    await page.getByTestId('play').click();
    await page.waitForSelector('.app[data-mode="playing"]');
    await page.evaluate(record);
    await kill(page);
    await page.waitForFunction(() => window.__story.captions.some((c) => c.component === 'kube-scheduler'), undefined, { timeout: 30_000 });
    const seen = await captionsShown(page);
    const rs = seen.captions.find((c) => c.component === 'kube-controller-manager/replicaset-controller');
    assert.ok(rs && rs.ms >= 2 * READ_MS, `at 0.5× the ReplicaSet controller's caption stayed ${rs?.ms} ms`);
  });
});

test('Step in story mode moves to the next meaningful hop and says it', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    await page.getByTestId('pause').click();
    await fastForward(page);
    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await kill(page);
    const told = [];
    for (let i = 0; i < 6; i++) {
      await page.getByTestId('step').click();
      const caption = page.getByTestId('caption');
      await caption.waitFor();
      const text = await caption.innerText();
      if (told.at(-1) !== text) told.push(text);
    }
    assert.ok(told.length >= 4, `each step told a new hop: ${told.join(' | ')}`);
    assert.ok(told.some((t) => t.startsWith('ReplicaSet controller')), told.join(' | '));
    assert.equal(await page.locator('.app').getAttribute('data-mode'), 'paused');
  });
});

test('with story mode off the page plays without captions', { timeout: 120_000 }, async () => {
  await withPage(live.browser, {}, async (page) => {
    await openReady(page, live.server.url);
    const toggle = page.getByTestId('story');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await page.getByTestId('pause').click();
    await fastForward(page);
    const victim = (await pods(page))[0].name;
    await page.locator(`[data-testid="pod"][data-name="${victim}"]`).click();
    await kill(page);
    await page.getByTestId('play').click();
    await waitForPods(page, `(list) => list.length === 3 && list.every((p) => p.status === 'Running' && p.name !== ${JSON.stringify(victim)})`);
    assert.equal(await page.getByTestId('caption').count(), 0, 'no hop is captioned');
  });
});
