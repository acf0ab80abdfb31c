// `serve --demo` in a browser: every page shows the demo events' data, and each printed
// account lands on something to do. Runs only against a server started with --demo
// (tests/e2e/browser.rs `browser_demo`), which sets VERDICT_DEMO and the demo passwords.
import { expect, test, type Page } from '@playwright/test';
import { checkA11y, logIn, sameOriginOnly, snapshot } from './support';

const demo = (role: string) => ({
  email: `${role}@demo.verdict.local`,
  password: process.env[`VERDICT_DEMO_${role.toUpperCase()}_PASSWORD`] ?? '',
});

async function heading(page: Page, name: string | RegExp) {
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

test('an anonymous visitor sees the three demo events and the published result with its forest plot', async ({ page }, info) => {
  const guard = sameOriginOnly(page);
  await page.goto('/');
  await heading(page, 'Events');
  for (const name of ['Verdict Demo Hack', 'Verdict Demo Judging (live)', 'Verdict Demo Finals (judged)']) {
    await expect(page.getByRole('link', { name })).toBeVisible();
  }
  await snapshot(page, info, 'demo-events');

  await page.goto('/e/demo-finals/results');
  await heading(page, /Results/);
  await expect(page.getByRole('heading', { name: 'Podium' })).toBeVisible();
  const forest = page.locator('svg.forest');
  await expect(forest).toBeVisible();
  expect(await forest.locator('.fp-row').count()).toBeGreaterThan(5);
  await checkA11y(page, 'the demo results');
  await snapshot(page, info, 'demo-results');

  await page.goto('/e/demo-finals/verify');
  await heading(page, /Verify the results/);
  await expect(page.getByText('verdict results verify', { exact: false }).first()).toBeVisible();
  await snapshot(page, info, 'demo-verify');

  await page.goto('/e/demo-hack/projects');
  await heading(page, /Projects/);
  await snapshot(page, info, 'demo-gallery');
  guard.check();
});

test('the demo participant has a draft project to finish', async ({ page }, info) => {
  await logIn(page, demo('participant'));
  await page.goto('/e/demo-hack/my-project');
  await heading(page, /My project/);
  await expect(page.getByText(/draft/i).first()).toBeVisible();
  await snapshot(page, info, 'demo-my-project');
  await page.goto('/e/demo-hack/team');
  await heading(page, /team/i);
  await snapshot(page, info, 'demo-team');
});

test('the demo judge has a queue to score', async ({ page }, info) => {
  await logIn(page, demo('judge'));
  await page.goto('/e/demo-judging/judge');
  await heading(page, 'Judging');
  await expect(page.getByText(/of \d+ reviewed/).first()).toBeVisible();
  await expect(page.getByRole('link', { name: /Score the next project/ })).toBeVisible();
  await snapshot(page, info, 'demo-judge-queue');
  await page.getByRole('link', { name: /Score the next project/ }).click();
  await expect(page.getByRole('button', { name: 'Submit review' })).toBeVisible();
  await snapshot(page, info, 'demo-score');
});

test('the demo organizer watches judging and reads the calibration runs', async ({ page }, info) => {
  await logIn(page, demo('organizer'));
  await page.goto('/e/demo-judging/admin');
  await expect(page.locator('svg').first()).toBeVisible();
  await snapshot(page, info, 'demo-overview');
  for (const area of ['people', 'assignments', 'leaderboard', 'audit']) {
    await page.goto(`/e/demo-judging/admin/${area}`);
    await expect(page.getByRole('alert')).toHaveCount(0);
    await snapshot(page, info, `demo-${area}`);
  }
  await page.goto('/e/demo-finals/admin/calibration');
  await expect(page.locator('svg.forest').first()).toBeVisible();
  await snapshot(page, info, 'demo-calibration');
});

test('the demo site admin creates an event of their own from the events page', async ({ page }, info) => {
  await logIn(page, demo('admin'));
  await page.goto('/');
  await heading(page, 'Events');
  await page.getByRole('link', { name: 'New event' }).click();
  await heading(page, 'New event');
  await checkA11y(page, 'the demo admin\'s new event page');
  await page.getByLabel('Name').fill('The demo admin\'s hack');
  await page.getByLabel('Slug').fill('demo-admin-hack');
  await page.getByLabel('Submissions open').fill('2030-03-01T09:00');
  await page.getByLabel('Submissions close').fill('2030-03-02T17:00');
  await page.getByRole('button', { name: 'Create the event' }).click();
  await expect(page).toHaveURL(/\/e\/demo-admin-hack\/admin$/);
  await snapshot(page, info, 'demo-admin-new-event');
});
