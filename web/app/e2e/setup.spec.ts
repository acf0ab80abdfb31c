// A fresh deployment: no account exists, and the server printed a one-time setup link.
// Runs only against such a server (tests/e2e/browser.rs `browser_setup` sets
// VERDICT_SETUP_LINK to the printed link).
import { expect, test } from '@playwright/test';
import { checkA11y, PASSWORD, sameOriginOnly, snapshot } from './support';

const LINK = process.env.VERDICT_SETUP_LINK ?? '';

test('a new site admin follows the setup link, creates an event, and the used link says so at once', async ({ page }, info) => {
  const guard = sameOriginOnly(page);
  await page.goto(LINK);
  await expect(page.getByRole('heading', { level: 1, name: 'Set up Verdict' })).toBeVisible();
  await expect(page.getByText('one-time setup link')).toBeVisible();
  await checkA11y(page, 'the setup page');
  await snapshot(page, info, 'setup-link');
  await page.getByLabel('Your name').fill('Ada Admin');
  await page.getByLabel('Email').fill('ada@example.org');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create the site administrator' }).click();

  // Signed in as the site admin, on the page that creates an event.
  await expect(page).toHaveURL(/\/new-event$/);
  await expect(page.getByRole('heading', { level: 1, name: 'New event' })).toBeVisible();
  await page.getByLabel('Name').fill('Our first hackathon');
  await page.getByLabel('Slug').fill('first-hack');
  await page.getByLabel('Submissions open').fill('2030-03-01T09:00');
  await page.getByLabel('Submissions close').fill('2030-03-02T17:00');
  await page.getByRole('button', { name: 'Create the event' }).click();
  await expect(page).toHaveURL(/\/e\/first-hack\/admin$/);
  await snapshot(page, info, 'setup-first-event');

  // The same link again: it says at once that it was used, and asks for nothing.
  await page.goto(LINK);
  await expect(page.getByRole('alert')).toContainText('used already');
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await checkA11y(page, 'a used setup link');
  await snapshot(page, info, 'setup-link-used');
  guard.check();
});

test('a setup link that is not one says so, and asks for nothing', async ({ page }) => {
  await page.goto('/setup/vsu_not-a-real-token');
  await expect(page.getByRole('alert')).toContainText('not valid');
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await checkA11y(page, 'an unknown setup link');
});
