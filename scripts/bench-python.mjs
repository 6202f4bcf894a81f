#!/usr/bin/env node
// The Operator panel's Python (issue 31): how long the runtime takes to arrive and start, and
// what a handler call costs, in Debian's Chromium on the built page (dist/).
//
//   1. fetch + start: the panel's Operator button to its status leaving "loading" (Pyodide and
//      kubeloop's operator runtime fetched, instantiated and installed), median of cold loads
//      (a fresh context each, cache disabled), on the plain local link and on scripts/bench-page.mjs's
//      slow link (Slow 4G, CPU slowed 4×), the files served gzip-compressed as a static host would;
//   2. a handler call: label_pods.py labelling 40 pods (a call and the answers that resume it,
//      each replayed from the call's start in the page's host): the wall time spent in Python,
//      per call and per message.
//
// Prints the numbers. Build the page first (trunk build --release).
// Usage: node scripts/bench-python.mjs [--loads N] [--cost (the handler call's cost only)]

import { readFileSync } from 'node:fs';
import { join, normalize, extname, sep, resolve } from 'node:path';
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import { launchBrowser, DIST } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const LOADS = Number(args[args.indexOf('--loads') + 1]) || 3;
const costOnly = args.includes('--cost');
const SLOW_4G = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 };
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css', '.py': 'text/plain', '.zip': 'application/zip' };

/** dist/ over HTTP, gzip-compressed (each file compressed once), counting the bytes sent. */
async function gzipServer() {
  const base = resolve(DIST);
  const cache = new Map();
  let sent = 0;
  const server = createServer((request, response) => {
    let path = decodeURIComponent(new URL(request.url, 'http://127.0.0.1').pathname);
    if (path.endsWith('/')) path += 'index.html';
    const file = normalize(join(base, path));
    if (!file.startsWith(base + sep)) return response.writeHead(404).end();
    try {
      if (!cache.has(file)) cache.set(file, gzipSync(readFileSync(file), { level: 9 }));
      const body = cache.get(file);
      sent += body.length;
      response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-encoding': 'gzip', 'cache-control': 'no-store' });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${server.address().port}/`, sent: () => sent, close: () => new Promise((d) => server.close(d)) };
}

async function load(browser, server, slow) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await page.goto(server.url, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 120_000 });
  await page.getByTestId('pause').click();
  if (slow) {
    await cdp.send('Network.emulateNetworkConditions', SLOW_4G);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  }
  const before = server.sent();
  const began = await page.evaluate(() => performance.now());
  await page.getByTestId('operator-open').click();
  await page.waitForSelector('[data-testid="operator-status"]:not([data-state="loading"])', { timeout: 600_000 });
  const ready = await page.evaluate(() => performance.now());
  const startMs = await page.evaluate(() => globalThis.kubeloopPython?.startMs);
  const result = { ms: ready - began, startMs, bytes: server.sent() - before };
  await context.close();
  return result;
}

async function handlerCost(browser, server) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${server.url}?scenario=default&seed=3`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]');
  await page.getByTestId('pause').click();
  const run = async (line) => {
    await page.getByTestId('console-input').fill(line);
    await page.getByTestId('console-input').press('Enter');
    await page.waitForFunction(() => document.querySelector('[data-testid="console-input"]').value === '');
  };
  await page.getByTestId('operator-open').click();
  await page.waitForSelector('[data-testid="operator-run"]:not([disabled])', { timeout: 600_000 });
  await page.getByTestId('operator-template').selectOption('label_pods');
  await page.waitForFunction(() => document.querySelector('[data-testid="operator-editor"]').value.includes('seen-by'));
  // Every message to Python timed where it is handed over: a call (`op: call`) and each
  // answer that resumes it (replayed from the call's start).
  await page.evaluate(() => {
    const api = globalThis.kubeloopPython;
    const real = api.exchange;
    const tally = (globalThis.__tally = { calls: 0, answers: 0, ms: 0 });
    api.exchange = (text) => {
      const op = JSON.parse(text).op;
      const t = performance.now();
      try {
        return real(text);
      } finally {
        if (op === 'call') tally.calls += 1;
        if (op === 'answer') tally.answers += 1;
        if (op === 'call' || op === 'answer') tally.ms += performance.now() - t;
      }
    };
  });
  await page.getByTestId('operator-run').click();
  await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
  await run('kubectl scale deployment web --replicas=40');
  await run('sim advance 40s');
  const labels = await page.evaluate(() => ({ ...globalThis.__tally }));
  // keep_deployment.py: each call reads the Deployment (and creates or patches it): requests
  // answered, so the call runs again from its start for each. Label-pods is stopped first.
  await run('sim stop operator/label-pods');
  await page.getByTestId('operator-template').selectOption('keep_deployment');
  await page.waitForFunction(() => document.querySelector('[data-testid="operator-editor"]').value.includes('kubeloop.dev/site'));
  await page.evaluate(() => Object.assign(globalThis.__tally, { calls: 0, answers: 0, ms: 0 }));
  await page.getByTestId('operator-run').click();
  await page.waitForSelector('[data-testid="operator-status"][data-state="running"]');
  // Five labelled ConfigMaps, applied from the manifest editor.
  const sites = [1, 2, 3, 4, 5]
    .map((i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site-${i}\n  labels: {kubeloop.dev/site: "yes"}\ndata: {image: nginx, replicas: "1"}\n`)
    .join('---\n');
  await page.getByTestId('editor-text').fill(sites);
  await page.getByTestId('editor-apply').click();
  await run('sim advance 60s');
  await run('kubectl get deployments --no-headers');
  await page.waitForFunction(() => /site-5/.test(document.querySelector('[data-testid="console-output"]').innerText));
  const keep = await page.evaluate(() => ({ ...globalThis.__tally }));
  await page.close();
  return { labels, keep };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const browser = await launchBrowser();
const server = await gzipServer();
try {
  for (const slow of costOnly ? [] : [false, true]) {
    const loads = [];
    for (let i = 0; i < LOADS; i++) loads.push(await load(browser, server, slow));
    console.log(
      `${slow ? 'slow link (Slow 4G, CPU 4x)' : 'normal link (local)'}: open → ready median ${(median(loads.map((l) => l.ms)) / 1000).toFixed(2)} s ` +
        `(${loads.map((l) => (l.ms / 1000).toFixed(2)).join(', ')}), Pyodide start alone ${(median(loads.map((l) => l.startMs)) / 1000).toFixed(2)} s, ` +
        `${(median(loads.map((l) => l.bytes)) / 1024 / 1024).toFixed(2)} MB gzip over the link`,
    );
  }
  const cost = await handlerCost(browser, server);
  for (const [what, t] of [['label_pods.py, 40 pods', cost.labels], ['keep_deployment.py, 5 sites for 60 s', cost.keep]]) {
    console.log(
      `handler calls (${what}): ${t.calls} calls and ${t.answers} answers, ${t.ms.toFixed(0)} ms in Python: ` +
        `${(t.ms / Math.max(1, t.calls)).toFixed(1)} ms per call, ${(t.ms / Math.max(1, t.calls + t.answers)).toFixed(1)} ms per message`,
    );
  }
} finally {
  await browser.close();
  await server.close();
}
