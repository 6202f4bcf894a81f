// The console and the manifest editor in the page: commands typed and answered, history with
// the arrow keys, Tab completion from the live cluster, `kubectl get -w` streaming as simulated
// time passes and stopped with Ctrl-C; the editor validating with the API server's message and
// applying a good manifest. Keyboard only.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUp, withPage, openReady, fastForward, waitForPods, RESULTS } from './harness.mjs';

const live = setUp();

const transcript = (page) => page.getByTestId('console-output').innerText();

async function type(page, line) {
  const input = page.getByTestId('console-input');
  await input.fill(line);
  await input.press('Enter');
}

test('the console runs commands, keeps history and completes with Tab', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?seed=1`);
    await fastForward(page);
    const input = page.getByTestId('console-input');
    assert.equal(await input.getAttribute('aria-describedby'), 'console-keys');
    assert.equal(await page.getByRole('log', { name: 'Console output' }).count(), 1);

    await type(page, 'kubectl get deployments');
    await page.waitForFunction(() => /web\s+3\/3\s+3\s+3/.test(document.querySelector('[data-testid="console-output"]').innerText));
    await type(page, 'sim time');
    assert.match(await transcript(page), /\$ sim time\n\d/);
    await type(page, 'kubectl get nope');
    assert.match(await transcript(page), /error: the server doesn't have a resource type "nope"/);

    // History: ↑ walks back, ↓ forward, past the newest an empty line.
    await input.focus();
    await input.press('ArrowUp');
    assert.equal(await input.inputValue(), 'kubectl get nope');
    await input.press('ArrowUp');
    await input.press('ArrowUp');
    assert.equal(await input.inputValue(), 'kubectl get deployments');
    await input.press('ArrowDown');
    assert.equal(await input.inputValue(), 'sim time');
    await input.press('ArrowDown');
    await input.press('ArrowDown');
    assert.equal(await input.inputValue(), '');

    // Tab: one candidate completes the word; several are listed.
    await input.fill('kubectl get depl');
    await input.press('Tab');
    assert.equal(await input.inputValue(), 'kubectl get deployments ');
    await input.press('Tab');
    assert.equal(await input.inputValue(), 'kubectl get deployments web ');
    await input.fill('sim st');
    await input.press('Tab');
    assert.match(await page.getByTestId('console-candidates').innerText(), /^start\s+status\s+stop$/);
    assert.ok(await input.evaluate((el) => el === document.activeElement), 'focus stays in the console');
    await input.fill('kubectl describe deployment/w');
    await input.press('Tab');
    assert.equal(await input.inputValue(), 'kubectl describe deployment/web ');
    await input.press('Enter');
    await page.waitForFunction(() => /Name:\s+web/.test(document.querySelector('[data-testid="console-output"]').innerText));
  });
});

test('kubectl get pods -w streams as simulated time passes; Ctrl-C stops it', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?seed=1`);
    await fastForward(page);
    await type(page, 'kubectl get pods -w');
    await type(page, 'kubectl scale deployment/web --replicas=4');
    await fastForward(page);
    await waitForPods(page, (pods) => pods.filter((p) => p.status === 'Running').length === 4);
    const text = await transcript(page);
    const after = text.slice(text.indexOf('--replicas=4'));
    assert.match(after, /web-\S+\s+0\/1\s+Pending/, 'the new pod appears as Pending');
    assert.match(after, /web-\S+\s+1\/1\s+Running/, 'and later as Running');
    const input = page.getByTestId('console-input');
    await input.focus();
    await input.press('Control+c');
    assert.match(await transcript(page), /\^C$/m);
    const stopped = await transcript(page);
    await type(page, 'kubectl scale deployment/web --replicas=3');
    await fastForward(page);
    const later = await transcript(page);
    assert.equal(later.slice(stopped.length).match(/Terminating/), null, 'no watch lines after Ctrl-C');
    await page.screenshot({ path: join(RESULTS, 'console-watch.png'), fullPage: true });
  });
});

test('the editor validates as you type with the API server message and applies a good manifest', { timeout: 120_000 }, async () => {
  await withPage(live.browser, { colorScheme: 'light' }, async (page) => {
    await openReady(page, `${live.server.url}?seed=1`);
    const status = page.getByTestId('editor-status');
    const text = page.getByTestId('editor-text');
    await page.waitForSelector('[data-testid="editor-status"][data-state="valid"]');
    assert.equal(await status.innerText(), 'Valid: deployment.apps/nginx-deployment created (server dry run)');

    const good = await text.inputValue();
    await text.fill(good.replace('replicas: 3', 'replicas: -1'));
    await page.waitForSelector('[data-testid="editor-status"][data-state="invalid"]');
    assert.equal(
      await status.innerText(),
      'The Deployment "nginx-deployment" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
    assert.equal(await text.getAttribute('aria-invalid'), 'true');
    await text.fill('kind: Deployment\nmetadata: [');
    await page.waitForSelector('[data-testid="editor-status"][data-state="invalid"]');
    assert.match(await status.innerText(), /^error: error parsing manifest.yaml: error converting YAML to JSON: yaml: /);

    await page.getByTestId('editor-examples').selectOption('pods/simple-pod.yaml');
    await page.waitForSelector('[data-testid="editor-status"][data-state="valid"]');
    assert.equal(await status.innerText(), 'Valid: pod/nginx created (server dry run)');
    await page.getByTestId('editor-apply').click();
    await page.waitForFunction(() => /\$ kubectl apply -f manifest.yaml\npod\/nginx created/.test(document.querySelector('[data-testid="console-output"]').innerText));
    await fastForward(page);
    await waitForPods(page, (pods) => pods.some((p) => p.name === 'nginx' && p.status === 'Running'));
    // Applying again is unchanged, as kubectl says.
    await page.getByTestId('editor-apply').click();
    await page.waitForFunction(() => /pod\/nginx unchanged/.test(document.querySelector('[data-testid="console-output"]').innerText));
  });
});
