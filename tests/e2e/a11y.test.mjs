// Accessibility: axe-core, run inside the page in real Chromium, finds no serious or critical
// violation in the light or the dark scheme, on a wide screen or a phone, with a theme forced
// against the system's (?theme=light on a dark system and the reverse) and in presentation
// mode, with a pod selected (so the scheduler's table, the chain highlight and the pod's own Kill
// are checked too), with idle loops folded into dials beside loops unfolded as rows, and again
// with a folded loop unfolded by hand (its fold button).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setUp, withPage, openReady, fastForward } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const live = setUp();

const WIDE = { width: 1280, height: 900 };
const CASES = [
  ...['light', 'dark'].flatMap((colorScheme) => [WIDE, { width: 360, height: 740 }].map((viewport) => ({ colorScheme, viewport, query: '' }))),
  { colorScheme: 'dark', viewport: WIDE, query: '?theme=light' },
  { colorScheme: 'light', viewport: WIDE, query: '?theme=dark' },
  { colorScheme: 'light', viewport: { width: 1920, height: 970 }, query: '?presentation=on' },
  // The Services band, its endpoints in every state's colour and the kube-proxy table lines.
  ...['light', 'dark'].map((colorScheme) => ({ colorScheme, viewport: WIDE, query: '?scenario=service' })),
  { colorScheme: 'dark', viewport: { width: 360, height: 740 }, query: '?scenario=service' },
];

for (const { colorScheme, viewport, query } of CASES) {
  {
    test(`axe finds no serious or critical violation (${colorScheme}, ${viewport.width} px${query ? `, ${query}` : ''})`, { timeout: 90_000 }, async () => {
      await withPage(live.browser, { colorScheme, viewport, reducedMotion: 'reduce' }, async (page) => {
        await openReady(page, `${live.server.url}${query}`);
        await page.getByTestId('pause').click();
        await fastForward(page);
        if (query.includes('service')) {
          // One endpoint not ready and one terminating, so each state's colours are checked.
          const [a, b] = await page.$$eval('[data-testid="endpoint"]', (els) => els.map((e) => e.dataset.pod));
          for (const line of [`sim fail-probe ${a} readiness`, 'sim advance 6s', `kubectl delete pod ${b} --wait=false`, 'sim advance 100ms']) {
            await page.getByTestId('console-input').fill(line);
            await page.getByTestId('console-input').press('Enter');
          }
          await page.waitForSelector('[data-testid="endpoint"][data-state="not ready"]');
          await page.waitForSelector('[data-testid="endpoint"][data-state="terminating"]');
        }
        await page.locator('[data-testid="pod"]').first().click();
        await page.getByTestId('explanation').waitFor();
        await page.getByTestId('pod-kill').waitFor();
        await page.addScriptTag({ path: AXE });
        const check = async (when) => {
          const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
          const bad = result.violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => `${when}: ${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
          assert.deepEqual(bad, [], bad.join('\n'));
        };
        assert.ok((await page.getByTestId('folded-loop').count()) > 0, 'some loops are folded');
        assert.ok((await page.locator('.loop').count()) > 0, 'some loops are rows');
        await check('folded');
        await page.getByTestId('folded-loop').first().click();
        await page.getByTestId('fold-loop').first().waitFor();
        await check('unfolded by hand');
      });
    });
  }
}
