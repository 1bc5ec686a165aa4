// Drives the admin page in Debian's headless Chromium (playwright-core, no
// downloaded browser) for tests/e2e/admin_page_browser_test.cpp:
// a refused token shows an inline error; the right one signs in; the
// running movement's DAG is drawn and its nodes turn COMPLETED; the DLQ
// row is redelivered. Screenshots go to MG_ARTIFACT_DIR. Every request the
// page makes is recorded: the token must never be part of a URL.
//
// Env: MG_ADMIN_URL, MG_ADMIN_TOKEN, MG_MOVEMENT_ID, MG_NODE_KEYS (comma
// separated), MG_DLQ_CALLBACK_ID, MG_ARTIFACT_DIR.
// Prints one line `RESULT {json}` on success; exits non-zero on failure.
'use strict';

const { env, check, open, run } = require('./browser_session');

const base = env('MG_ADMIN_URL');
const token = env('MG_ADMIN_TOKEN');
const movementId = env('MG_MOVEMENT_ID');
const nodeKeys = env('MG_NODE_KEYS').split(',');
const dlqId = env('MG_DLQ_CALLBACK_ID');
const artifactDir = env('MG_ARTIFACT_DIR');

async function main() {
  // The deliberately wrong token's 401 is logged by Chromium itself.
  const session = await open(artifactDir, 'admin-page', /Failed to load resource.*401/);
  const { page, urls, consoleErrors, screenshots } = session;
  const shot = (p, name) => session.shot(name);
  let result;
  try {
    // The page itself loads without a token and asks for one.
    const response = await page.goto(base + '/');
    check(response.status() === 200, `GET / answered ${response.status()}`);
    await page.locator('#login').waitFor({ state: 'visible' });

    // A wrong token is refused inline and nothing else is shown.
    await page.fill('#token', 'not-the-token');
    await page.click('#login-submit');
    await page.locator('#login-error').filter({ hasText: '401' }).waitFor();
    check(await page.locator('#nav').isHidden(), 'navigation shown after a refused token');

    await page.fill('#token', token);
    await page.click('#login-submit');
    await page.locator('#nav').waitFor({ state: 'visible' });
    check(!(await page.content()).includes(token), 'the token is in the DOM after sign-in');

    // Workers: the supervision tree with its heartbeats.
    await page.click('#nav a[data-view="workers"]');
    await page.locator('[data-worker="node_dispatcher"]').first().waitFor();
    await shot(page, 'workers');

    // Movements list → the running movement.
    await page.click('#nav a[data-view="movements"]');
    const row = page.locator(`tr[data-id="${movementId}"]`);
    await row.waitFor();
    await shot(page, 'movements');
    await row.click();
    await page.locator('svg.dag').waitFor();
    for (const key of nodeKeys)
      await page.locator(`svg.dag g.dag-node[data-node-key="${key}"]`).waitFor();
    const edges = await page.locator('svg.dag path.edge').count();
    check(edges > 0, 'the DAG has no edges drawn');
    const statesWhenOpened = await page.$$eval('svg.dag g.dag-node', (gs) => gs.map((g) => g.dataset.state));
    const runningWhenOpened = statesWhenOpened.some((s) => s !== 'COMPLETED');
    check(runningWhenOpened, `the movement was already COMPLETED when opened: ${statesWhenOpened}`);
    await shot(page, 'movement-running');

    // Live refresh: every node turns COMPLETED without a reload.
    await page.waitForFunction((n) => {
      const gs = [...document.querySelectorAll('svg.dag g.dag-node')];
      return gs.length === n && gs.every((g) => g.dataset.state === 'COMPLETED');
    }, nodeKeys.length, { timeout: 60000 });
    await page.locator('#movement-state .badge', { hasText: 'COMPLETED' }).waitFor();
    await page.locator('#timeline li[data-event-type="request_completed"]').waitFor();
    // A node's detail: provider refs and artifacts.
    await page.click(`svg.dag g.dag-node[data-node-key="${nodeKeys[0]}"]`);
    await page.locator('h3', { hasText: 'Artifacts' }).waitFor();
    await shot(page, 'movement-completed');

    // Cluster view renders (rows or its empty state).
    await page.click('#nav a[data-view="cluster"]');
    await page.locator('#view table, #view .empty').first().waitFor();

    // DLQ: redeliver the dead-lettered callback.
    await page.click('#nav a[data-view="dlq"]');
    await page.locator(`tr[data-callback-id="${dlqId}"]`).waitFor();
    await shot(page, 'dlq');
    await page.click(`button[data-redeliver="${dlqId}"]`);
    await page.locator('#dlq-flash.ok').waitFor();
    await page.locator(`tr[data-callback-id="${dlqId}"]`).waitFor({ state: 'detached' });
    await shot(page, 'dlq-redelivered');

    // Signing out forgets the token.
    await page.click('#logout');
    await page.locator('#login').waitFor({ state: 'visible' });
    const stored = await page.evaluate(() => sessionStorage.length);
    check(stored === 0, 'sessionStorage still holds the token after sign-out');

    result = { urls: urls.length, running_when_opened: runningWhenOpened, screenshots };
  } finally {
    await session.close();
  }
  const leaked = urls.filter((u) => u.includes(token) || u.includes(encodeURIComponent(token)));
  check(leaked.length === 0, `the token appears in requested URLs: ${leaked.length}`);
  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  return result;
}

run(main);
