// Shared harness of the end-to-end tests: a static server for dist/ on 127.0.0.1, Debian's
// Chromium driven by playwright-core, and pages that fail their test on any console error,
// uncaught exception or request that tries to leave this machine.
//
// Every test file uses it so that these rules hold for every Playwright test, not just the
// ones that remember to check.

import { before, after } from 'node:test';
import { createServer } from 'node:http';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = process.env.KUBELOOP_DIST ?? join(ROOT, 'dist');
export const RESULTS = join(ROOT, 'test-results');

/** The flags Chromium needs on these machines (see shared/reference/toolchain.md). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Serves `dir` on 127.0.0.1 at a free port, both at `/` and under `subPath`, so that tests can
 * check the build works below any path (Trunk's `public_url = "./"`).
 * Returns `{ url, subUrl, close() }`.
 */
export async function startServer({ dir = DIST, subPath = '/course/kubeloop/' } = {}) {
  await stat(join(dir, 'index.html')).catch(() => {
    throw new Error(`no ${join(dir, 'index.html')}: build the page first (trunk build --release)`);
  });
  const base = resolve(dir);
  const server = createServer(async (request, response) => {
    try {
      let path = decodeURIComponent(new URL(request.url, 'http://127.0.0.1').pathname);
      if (path.startsWith(subPath)) path = `/${path.slice(subPath.length)}`;
      if (path.endsWith('/')) path += 'index.html';
      const file = normalize(join(base, path));
      if (file !== base && !file.startsWith(base + sep)) throw Object.assign(new Error(), { code: 'ENOENT' });
      const body = await readFile(file);
      response.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      });
      response.end(request.method === 'HEAD' ? undefined : body);
    } catch (error) {
      response.writeHead(error.code === 'ENOENT' || error.code === 'EISDIR' ? 404 : 500);
      response.end();
    }
  });
  await new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', done);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    subUrl: `http://127.0.0.1:${port}${subPath}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/**
 * Launches Debian's Chromium, headless. Playwright gives each launch a fresh temporary profile
 * (user-data-dir) and removes it on close.
 */
export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/**
 * Starts the static server and Chromium before a test file's tests and closes both after them.
 * Returns an object whose `server` and `browser` are set once they are up.
 */
export function setUp() {
  const live = { server: null, browser: null };
  before(async () => {
    await mkdir(RESULTS, { recursive: true });
    live.server = await startServer();
    live.browser = await launchBrowser();
  });
  after(async () => {
    await live.browser?.close();
    await live.server?.close();
  });
  return live;
}

/**
 * Runs `body(page)` in a new browser context and then fails the test if the page logged a
 * console error, threw an uncaught exception, or tried to reach anything but 127.0.0.1 (such
 * requests are aborted). `contextOptions` go to `browser.newContext` (e.g. `colorScheme`).
 * `expectedErrors` are patterns of console errors the test causes on purpose (a request it fails).
 */
export async function withPage(browser, contextOptions, body, { expectedErrors = [] } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...contextOptions });
  const problems = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    problems.push(`request off this machine (blocked): ${route.request().method()} ${url.href}`);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' && !expectedErrors.some((pattern) => pattern.test(message.text()))) {
      const where = message.location();
      problems.push(`console error: ${message.text()}${where?.url ? ` (${where.url}:${where.lineNumber})` : ''}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`uncaught exception: ${error.stack ?? error.message}`));
  page.on('crash', () => problems.push('the page crashed'));
  try {
    await body(page);
    // Let console messages that are still in flight arrive before judging.
    await page.evaluate(() => new Promise((done) => setTimeout(done, 50)));
  } finally {
    await context.close();
  }
  assert.deepEqual(problems, [], `the page reported problems:\n${problems.join('\n')}`);
}

/** Loads `url` and waits for the app to mark `<body data-ready="true">`. */
export async function openReady(page, url) {
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
}

// ---- Driving the live page (issue 4). Simulated time moves only through the page's own
// controls; tests wait for DOM conditions, never for wall-clock time.

/** Clicks Fast-forward and waits until the page has paused again (every loop idle). */
export async function fastForward(page, timeout = 60_000) {
  await page.getByTestId('fast-forward').click();
  await page.waitForSelector('.app[data-mode="paused"]', { timeout });
}

/** The pods on the page: name, node, phase, status. */
export function pods(page) {
  return page.$$eval('[data-testid="pod"]', (els) =>
    els.map((e) => ({ name: e.dataset.name, node: e.dataset.node, phase: e.dataset.phase, status: e.dataset.status })),
  );
}

/** The gap panel's numbers. */
export async function gap(page) {
  const n = async (id) => Number(await page.getByTestId(id).innerText());
  return { desired: await n('desired'), current: await n('current'), ready: await n('ready') };
}

/** Waits until `predicate(pods)` holds in the page (evaluated in the browser). */
export async function waitForPods(page, predicate, timeout = 30_000) {
  const expression = `(${predicate})([...document.querySelectorAll('[data-testid="pod"]')].map((e) => ({ ...e.dataset })))`;
  await page.waitForFunction(expression, undefined, { timeout, polling: 'raf' });
}
