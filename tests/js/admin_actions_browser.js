// Drives the admin page's actions and views in Debian's headless Chromium
// for tests/e2e/admin_page_browser_test.cpp: the movements list filtered
// and paged by keyset; a self-approval refused with the server's 403; an
// approval by a second key; a cancel; the per-node timeline; the workers'
// live charts. Every action is signed in the page (WebCrypto) with a key
// pasted into the tab; the secrets must end up in no URL, no storage and
// not in the DOM.
//
// Env: MG_ADMIN_URL, MG_ADMIN_TOKEN, MG_TEMPLATE_KEY, MG_PENDING_COUNT,
// MG_SELF_ID (created by MG_SELF_KEY), MG_CANCEL_ID, MG_SELF_KEY,
// MG_SELF_SECRET, MG_APPROVER_KEY, MG_APPROVER_SECRET, MG_NODE_KEYS,
// MG_QUERY_SAMPLE, MG_QUERY_CANONICAL (a raw query and the server's canonical
// form of it), MG_ARTIFACT_DIR. Prints `RESULT {json}` on success; exits non-zero on failure.
'use strict';

const { env, check, open, run } = require('./browser_session');

const base = env('MG_ADMIN_URL');
const token = env('MG_ADMIN_TOKEN');
const templateKey = env('MG_TEMPLATE_KEY');
const pendingCount = Number(env('MG_PENDING_COUNT'));
const selfId = env('MG_SELF_ID');
const cancelId = env('MG_CANCEL_ID');
const selfKey = { id: env('MG_SELF_KEY'), secret: env('MG_SELF_SECRET') };
const approverKey = { id: env('MG_APPROVER_KEY'), secret: env('MG_APPROVER_SECRET') };
const nodeKeys = env('MG_NODE_KEYS').split(',');
const artifactDir = env('MG_ARTIFACT_DIR');

async function useKey(page, key) {
  if (await page.locator('#api-key-forget').count()) await page.click('#api-key-forget');
  await page.fill('#api-key-id', key.id);
  await page.fill('#api-key-secret', key.secret);
  await page.click('#api-key-use');
  await page.locator('#api-key-current', { hasText: key.id }).waitFor();
}

async function rowIds(page) {
  return page.$$eval('#view tr[data-id]', (rows) => rows.map((r) => r.dataset.id));
}

async function main() {
  // Refusals the test provokes (the 403 self-approval) are logged by Chromium itself.
  const session = await open(artifactDir, 'admin-actions', /Failed to load resource.*(401|403|409)/);
  const { page, urls, consoleErrors, screenshots } = session;
  const shot = (p, name) => session.shot(name);
  let result;
  try {
    await page.goto(base + '/');
    // The page's canonical query is the server's (api::canonical_query).
    const canonical = await page.evaluate((q) => mgSigning.canonicalQuery(q), env('MG_QUERY_SAMPLE'));
    check(canonical === env('MG_QUERY_CANONICAL'), `canonical query ${canonical} != ${env('MG_QUERY_CANONICAL')}`);
    await page.fill('#token', token);
    await page.click('#login-submit');
    await page.locator('#nav').waitFor({ state: 'visible' });

    // Workers first: the charts' history starts with this sample.
    await page.click('#nav a[data-view="workers"]');
    await page.locator('#worker-charts figure.chart').first().waitFor();

    // The list: filters, then keyset pages of 10.
    await page.click('#nav a[data-view="movements"]');
    // The template first: choosing a state applies the form at once.
    await page.fill('#filter-template', templateKey);
    await page.selectOption('#filter-state', 'PENDING_APPROVAL');
    await page.selectOption('#filter-limit', '10');
    await page.click('#filter-apply');
    await page.waitForFunction(() => document.querySelectorAll('#view tr[data-id]').length === 10);
    const page1 = await rowIds(page);
    check(await page.locator('#page-number[data-page="1"]').count() === 1, 'not on page 1');
    await page.click('#page-next');
    await page.locator('#page-number[data-page="2"]').waitFor();
    await page.waitForFunction((n) => document.querySelectorAll('#view tr[data-id]').length === n, pendingCount - 10);
    const page2 = await rowIds(page);
    check(page2.every((id) => !page1.includes(id)), 'page 2 repeats rows of page 1');
    check(await page.locator('#page-next').isDisabled(), 'a next page after the last one');
    const badges = await page.$$eval('#view tr[data-id] .badge', (b) => b.map((x) => x.textContent));
    check(badges.every((b) => b === 'PENDING_APPROVAL'), `state filter not applied: ${badges}`);
    await shot(page, 'list-page-2');
    await page.click('#page-prev');
    await page.locator('#page-number[data-page="1"]').waitFor();
    // Created before 2001: nothing matches.
    await page.fill('#filter-to', '2001-01-01T00:00');
    await page.click('#filter-apply');
    await page.locator('#view .empty', { hasText: 'No movements match' }).waitFor();
    const listed = { page1: page1.length, page2: page2.length };

    // Self-approval: the key that created the movement is refused (403).
    await page.goto(`${base}/#/movements/${selfId}`);
    await page.locator('#movement-state .badge', { hasText: 'PENDING_APPROVAL' }).waitFor();
    await useKey(page, selfKey);
    await page.click('#actions button[data-action="approve"]');
    const refused = page.locator('#action-result.inline-error[data-status="403"]');
    await refused.waitFor();
    const refusedText = await refused.textContent();
    check(/403 forbidden/.test(refusedText), `self-approval answer: ${refusedText}`);
    await shot(page, 'self-approval-refused');

    // A second key approves; the movement runs to COMPLETED.
    await useKey(page, approverKey);
    await page.click('#actions button[data-action="approve"]');
    await page.locator('#action-result.ok').waitFor();
    await page.locator('#movement-state .badge', { hasText: 'COMPLETED' }).waitFor({ timeout: 60000 });
    // The timeline: a row per node, each with time spent before COMPLETED.
    for (const key of nodeKeys) {
      await page.locator(`#node-timeline g.tl-row[data-node-key="${key}"] rect.tl-seg[data-state="COMPLETED"]`).waitFor();
      const chips = await page.$$eval(`#node-timeline-table tr[data-node-key="${key}"] .tl-chip`, (cs) => cs.map((c) => c.dataset.state));
      check(chips.includes('BLOCKED'), `node ${key} timeline lacks BLOCKED: ${chips}`);
    }
    await shot(page, 'approved-timeline');

    // One other action: cancel, with a reason.
    await page.goto(`${base}/#/movements/${cancelId}`);
    await page.locator('#movement-state .badge', { hasText: 'PENDING_APPROVAL' }).waitFor();
    await page.locator('#api-key-current', { hasText: approverKey.id }).waitFor(); // the key survives navigation
    await page.fill('#action-reason', 'duplicate request');
    await page.click('#actions button[data-action="cancel"]');
    await page.locator('#action-result.ok').waitFor();
    await page.locator('#movement-state .badge', { hasText: 'CANCELLED' }).waitFor();
    await shot(page, 'cancelled');

    // The secrets are nowhere but in the tab's memory.
    const html = await page.content();
    const stored = await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }));
    for (const k of [selfKey, approverKey]) {
      check(!html.includes(k.secret), 'an API secret is in the DOM');
      check(!stored.includes(k.secret), 'an API secret is in web storage');
    }

    // Workers again: the charts show the items processed meanwhile.
    await page.click('#nav a[data-view="workers"]');
    await page.waitForFunction(() => [...document.querySelectorAll('#worker-charts figure.chart')]
      .some((f) => Number(f.dataset.total) > 0), null, { timeout: 30000 });
    const charted = await page.$$eval('#worker-charts figure.chart', (fs) => fs.filter((f) => Number(f.dataset.total) > 0).map((f) => f.dataset.workerChart));
    await shot(page, 'workers-charts');

    result = { listed, refused: refusedText, charted, screenshots };
  } finally {
    await session.close();
  }
  for (const k of [selfKey, approverKey]) {
    const leaked = urls.filter((u) => u.includes(k.secret));
    check(leaked.length === 0, `an API secret appears in requested URLs: ${leaked.length}`);
  }
  check(urls.every((u) => !u.includes(token)), 'the admin token appears in a requested URL');
  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  return result;
}

run(main);
