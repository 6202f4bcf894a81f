// Accessibility: axe-core, run inside the page in real Chromium, finds no serious or critical
// violation in the light or the dark scheme, on a wide screen or a phone, with a pod selected
// (so the scheduler's table and the chain highlight are checked too).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setUp, withPage, openReady, fastForward } from './harness.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const live = setUp();

for (const colorScheme of ['light', 'dark']) {
  for (const viewport of [{ width: 1280, height: 900 }, { width: 360, height: 740 }]) {
    test(`axe finds no serious or critical violation (${colorScheme}, ${viewport.width} px)`, { timeout: 90_000 }, async () => {
      await withPage(live.browser, { colorScheme, viewport, reducedMotion: 'reduce' }, async (page) => {
        await openReady(page, live.server.url);
        await page.getByTestId('pause').click();
        await fastForward(page);
        await page.locator('[data-testid="pod"]').first().click();
        await page.getByTestId('explanation').waitFor();
        await page.addScriptTag({ path: AXE });
        const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
        const bad = result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
        assert.deepEqual(bad, [], bad.join('\n'));
      });
    });
  }
}
