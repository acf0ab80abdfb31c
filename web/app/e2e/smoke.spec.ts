import { expect, test } from '@playwright/test';
import { checkA11y, createEvent, logIn, sameOriginOnly } from './support';

test('the client loads, logs in and out, and stays on its own origin', async ({ page }) => {
  const guard = sameOriginOnly(page);
  const ev = await createEvent();
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await checkA11y(page, 'the events page');
  await page.goto('/login');
  await checkA11y(page, 'the log-in page');
  await page.goto(`/e/${ev.slug}/no-such-page`);
  await expect(page.getByRole('heading', { level: 1, name: 'Page not found' })).toBeVisible();
  await logIn(page, ev.organizer);
  await expect(page.getByRole('link', { name: ev.organizer.name })).toBeVisible();
  await page.getByRole('button', { name: 'Log out' }).click();
  await expect(page.getByRole('link', { name: 'Log in' })).toBeVisible();
  guard.check();
});
