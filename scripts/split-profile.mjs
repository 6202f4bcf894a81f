#!/usr/bin/env node
// Records which of the page's wasm functions run while it first comes alive, as the keep list
// `www/split-keep.txt` that `kubeloop-split` (Trunk.toml's post_build hook) splits by: those stay
// in the primary module a visitor waits for, the rest go to kubeloop-web_lazy.wasm.
//
// How: after a page build (`trunk build --release`), the hook has left the unsplit wasm and glue
// under target/split/. This script splits that input with nothing kept (every function that can
// move is a stub), serves it with dist's other files, and loads it in Chromium with
// `globalThis.kubeloopSplitProfile` set, so every stub records its slot. It waits for data-ready,
// lets the default scenario play for --seconds of simulated time at the page's own speed (once,
// then again with the CPU slowed 4x), and writes the recorded functions' names. Rebuild the page afterwards for the list to take effect.
//
// Usage: node scripts/split-profile.mjs [--write] [--seconds N]   (default 10)
// Without --write it prints how the recorded list differs from the committed one.

import { cpSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { startServer, launchBrowser, DIST, ROOT } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const write = args.includes('--write');
const secondsAt = args.indexOf('--seconds');
const SECONDS = secondsAt >= 0 ? Number(args[secondsAt + 1]) : 10;
const WORK = join(process.env.CARGO_TARGET_DIR || join(ROOT, 'target'), 'split');
const KEEP = join(ROOT, 'www', 'split-keep.txt');

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-profile-'));
cpSync(DIST, dir, { recursive: true });
cpSync(join(WORK, 'input.wasm'), join(dir, 'kubeloop-web_bg.wasm'));
cpSync(join(WORK, 'input.js'), join(dir, 'kubeloop-web.js'));
execFileSync('cargo', ['run', '--quiet', '--offline', '--features', 'split', '--bin', 'kubeloop-split', '--', '--keep-none', dir], {
  cwd: ROOT,
  stdio: 'inherit',
});
const slots = readFileSync(join(WORK, 'lazy-names.txt'), 'utf8').split('\n');

/**
 * One load of the profile build: the slots recorded from navigation to SECONDS of simulated time.
 * `cpu` slows the CPU as the slow-link benchmark does: the page's frame budget then takes other
 * paths (fewer steps per frame, catching up), and those must be in the list too.
 */
async function profileOnce(browser, url, cpu) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(() => {
    globalThis.kubeloopSplitProfile = new Set();
  });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(error.stack ?? error.message));
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  if (cpu > 1) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: cpu });
  }
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 120_000 }).catch((error) => {
    throw new Error(`${error.message}\n${problems.join('\n')}`);
  });
  await page.waitForFunction(
    (seconds) => Number(document.querySelector('.app')?.dataset.simTime ?? 0) >= seconds * 1000,
    SECONDS,
    { timeout: (SECONDS * 8 + 60) * 1000, polling: 250 },
  );
  const slots = await page.evaluate(() => [...globalThis.kubeloopSplitProfile]);
  await context.close();
  if (problems.length) throw new Error(`the profile build failed:\n${problems.join('\n')}`);
  return slots;
}

const server = await startServer({ dir });
const browser = await launchBrowser();
let recorded;
try {
  recorded = [...(await profileOnce(browser, server.url, 1)), ...(await profileOnce(browser, server.url, 4))];
} finally {
  await browser.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

const names = [...new Set(recorded.map((slot) => slots[slot]).filter(Boolean))].sort();
const committed = new Set(
  readFileSync(KEEP, { encoding: 'utf8', flag: 'a+' })
    .split('\n')
    .filter((line) => line && !line.startsWith('#')),
);
const added = names.filter((name) => !committed.has(name));
const dropped = [...committed].filter((name) => !names.includes(name));
console.log(`split-profile: ${names.length} functions ran in the first ${SECONDS} s (${added.length} not in the keep list, ${dropped.length} in it no longer ran)`);
if (write) {
  const header = [
    '# The page\'s wasm functions that run while it first comes alive: kubeloop-split keeps these in',
    '# the primary module and moves the rest to kubeloop-web_lazy.wasm. Recorded by',
    `# \`node scripts/split-profile.mjs --write\` (load, data-ready, ${SECONDS} s of the default scenario).`,
    '# A function missing here still runs (its stub loads the lazy module first); it only costs',
    '# a slow-link visitor a wait. Regenerate after changes to what the first picture runs.',
  ];
  writeFileSync(KEEP, `${header.join('\n')}\n${names.join('\n')}\n`);
  console.log(`split-profile: wrote ${KEEP}; rebuild the page (trunk build --release) to use it`);
}
