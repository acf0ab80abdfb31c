// Browser tests: Debian's Chromium (no browser download), driven by Playwright against a
// running `verdict serve` at VERDICT_URL with a site administrator's credentials in
// VERDICT_ADMIN_EMAIL / VERDICT_ADMIN_PASSWORD. `cargo test` runs them through
// tests/e2e/browser.rs on a fresh server per backend; `e2e/dev-server.sh` starts one by hand.
import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';

// Debian's headless build of Chromium where it is installed (apt-get install -y
// chromium-headless-shell), as Playwright itself runs headless tests: the same engine without
// the full browser's shell, about a quarter less CPU a story than `chromium --headless`.
const chromium = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((p) => existsSync(p));

export default defineConfig({
  testDir: './e2e',
  // demo.spec.ts needs a server started with --demo, setup.spec.ts one with no account and
  // its printed setup link in VERDICT_SETUP_LINK (tests/e2e/browser.rs runs each alone).
  testIgnore: [
    ...(process.env.VERDICT_DEMO ? [] : ['**/demo.spec.ts']),
    ...(process.env.VERDICT_SETUP_LINK ? [] : ['**/setup.spec.ts']),
  ],
  timeout: 90_000,
  expect: { timeout: 15_000 },
  fullyParallel: true,
  workers: Number(process.env.VERDICT_BROWSER_WORKERS ?? 2),
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [['list']],
  outputDir: process.env.VERDICT_ARTIFACTS ?? 'test-results',
  use: {
    baseURL: process.env.VERDICT_URL,
    browserName: 'chromium',
    screenshot: 'only-on-failure',
    // A trace records every action of every story to keep the failed ones: a sixth of the
    // stories' CPU. Under CI nobody opens it (the log is what a CI run leaves), so it is off
    // there; rerun a failed story locally to get one.
    trace: process.env.CI ? 'off' : 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.VERDICT_CHROMIUM ?? chromium ?? '/usr/bin/chromium',
      // As root in a container, with a closed network: no sandbox, no background traffic.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
