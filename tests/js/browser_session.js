// What the admin page's browser scripts share: Debian's headless Chromium
// through playwright-core (no downloaded browser) with a fresh profile, one
// page that records every URL it requests and every console error, and
// screenshots under MG_ARTIFACT_DIR.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

/// Opens the browser; `ignoredConsole` matches console errors Chromium logs
/// for refusals the test provokes on purpose.
async function open(artifactDir, prefix, ignoredConsole) {
  fs.mkdirSync(artifactDir, { recursive: true });
  // A fresh profile (--user-data-dir) per run: playwright takes it as the
  // persistent context's directory.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1360, height: 900 },
  });
  const session = { urls: [], consoleErrors: [], screenshots: [] };
  const page = browser.pages()[0] || (await browser.newPage());
  page.setDefaultTimeout(30000);
  page.on('request', (r) => session.urls.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error' && !ignoredConsole.test(m.text())) session.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => session.consoleErrors.push(String(e)));
  session.page = page;
  session.shot = async (name) => {
    const file = path.join(artifactDir, `${prefix}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    session.screenshots.push(file);
    console.log(`screenshot: ${file}`);
  };
  session.close = async () => {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return session;
}

/// Runs `main`, printing `RESULT {json}` on success; exits non-zero on failure.
function run(main) {
  main().then((result) => console.log('RESULT ' + JSON.stringify(result)), (e) => {
    console.error('FAILED: ' + (e && e.stack ? e.stack : e));
    process.exit(1);
  });
}

module.exports = { env, check, open, run };
