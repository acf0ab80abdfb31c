// The account pages: signing up, logging in and out, the account page (events, API
// tokens) and the links from mail refusing a bad token as the server says.
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { checkA11y, createEvent, gql, invite, PASSWORD, person, sameOriginOnly, unique } from './support';

test('a person signs up, logs out and in, and makes, uses and revokes a read-only API token', async ({ page }) => {
  const guard = sameOriginOnly(page);
  const email = `${unique('signup')}@example.org`;
  const name = 'Sam Signup';

  await page.goto('/signup');
  await expect(page.getByRole('heading', { level: 1, name: 'Sign up' })).toBeVisible();
  await checkA11y(page, 'the sign-up page');
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Email').fill(email);
  // The password rules are the server's: a short one is refused as it says.
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  // ... as a sentence beside the password field, not a code.
  await expect(page.getByRole('alert')).toHaveText('Password must be 10 to 256 characters.');
  await expect(page.getByLabel('Password')).toHaveAttribute('aria-invalid', 'true');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByRole('status').filter({ hasText: 'confirm the address' })).toContainText(email);
  await expect(page.getByText('not confirmed')).toBeVisible();
  await expect(page.getByRole('link', { name })).toBeVisible();

  await page.getByRole('button', { name: 'Log out' }).click();
  await expect(page.getByRole('link', { name: 'Log in' })).toBeVisible();
  await page.goto('/account');
  await expect(page.getByRole('link', { name: 'Log in' }).last()).toHaveAttribute('href', '/login?next=/account');
  await page.getByRole('main').getByRole('link', { name: 'Log in' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page).toHaveURL(/\/account$/);

  const events = page.getByRole('region', { name: 'My events' });
  await expect(events).toContainText('no role in any event');
  await checkA11y(page, 'the account page');

  // A read token: shown once, working for queries, refused for writes.
  await page.getByLabel('Token label').fill('dashboard');
  await page.getByLabel('Scope').selectOption('READ');
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = page.getByTestId('new-token');
  await expect(secret).toBeVisible();
  const token = (await secret.textContent())!.trim();
  expect(token.length).toBeGreaterThan(20);
  await expect(page.getByRole('region', { name: 'Your new token' })).toContainText('shown only this once');
  await checkA11y(page, 'the account page with a new token');
  const row = page.getByRole('row').filter({ hasText: 'dashboard' });
  await expect(row).toContainText('read');
  await expect(row).toContainText('active');

  const me = await gql<{ viewer: { user: { id: string; displayName: string } } }>('{ viewer { user { id displayName } } }', {}, token);
  expect(me.viewer.user.displayName).toBe(name);
  await expect(gql('mutation { updateProfile(displayName: "Nope") { id } }', {}, token)).rejects.toThrow(/FORBIDDEN/);

  await page.reload();
  await expect(row).toBeVisible();
  await expect(page.getByTestId('new-token')).toHaveCount(0);
  expect(await page.content()).not.toContain(token);

  await page.getByRole('button', { name: 'Revoke dashboard' }).click();
  await page.getByRole('button', { name: 'Yes, revoke dashboard' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'is revoked' })).toBeVisible();
  await expect(row).toContainText('revoked');
  await expect(gql('{ viewer { user { id } } }', {}, token).then((d) => d.viewer)).rejects.toThrow();
  guard.check();
});

test('a bad reset or confirmation link says so before asking anything; a reset request says the same for anyone', async ({ page }) => {
  await page.goto('/reset/xyz');
  await expect(page.getByRole('heading', { level: 1, name: 'Choose a new password' })).toBeVisible();
  await expect(page.getByRole('alert')).toContainText('This link is not valid');
  await expect(page.getByLabel('New password')).toHaveCount(0);
  await checkA11y(page, 'the reset page refusing');

  await page.goto('/confirm/xyz');
  await expect(page.getByRole('heading', { level: 1, name: 'Confirm your email address' })).toBeVisible();
  await expect(page.getByRole('alert')).toContainText('This link is not valid');
  await checkA11y(page, 'the confirmation page refusing');

  await page.goto('/forgot');
  await page.getByLabel('Email').fill(`${unique('nobody')}@example.org`);
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'If an account exists' })).toBeVisible();
  await checkA11y(page, 'the forgotten-password page');
});

test('someone with an account logs in on an invitation page and accepts it as themselves', async ({ page }) => {
  const ev = await createEvent();
  const judge = await person(ev.slug, 'JUDGE', ev.organizer.token, 'Jo Judge');
  const path = await invite(ev.slug, judge.email, 'ORGANIZER', ev.organizer.token);
  await page.goto(path);
  await page.getByRole('button', { name: 'Log in to accept it' }).click();
  await page.getByLabel("Your account's email").fill(judge.email);
  await page.getByLabel("Your account's password").fill(judge.password);
  await page.getByRole('button', { name: 'Log in here' }).click();
  await expect(page.getByText('You are signed in as')).toContainText('Jo Judge');
  await checkA11y(page, 'the invitation page, signed in');
  await page.getByRole('button', { name: 'Accept as Jo Judge' }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/admin$`));
  await page.goto('/account');
  const roles = page.getByRole('list', { name: `Your roles in Browser ${ev.slug}` });
  await expect(roles).toContainText('Judge');
  await expect(roles).toContainText('Organizer');
  await expect(roles.getByRole('link', { name: 'Organize' })).toHaveAttribute('href', `/e/${ev.slug}/admin`);
  // Their signed participation record, downloaded as issued, verifies.
  const item = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: `Browser ${ev.slug}` }) });
  const downloading = page.waitForEvent('download');
  await item.getByRole('button', { name: 'Download my participation record' }).click();
  const file = await downloading;
  expect(file.suggestedFilename()).toBe(`${ev.slug}-participation-record.json`);
  const text = readFileSync((await file.path())!, 'utf8');
  expect(JSON.parse(text).record.roles).toEqual(['judge', 'organizer']);
  const checked = await gql<{ verifyRecord: boolean }>('mutation($d: String!) { verifyRecord(document: $d) }', { d: text });
  expect(checked.verifyRecord).toBe(true);
  // The link is used up now, and says so at once, before offering to accept it.
  await page.goto(path);
  await expect(page.getByRole('alert')).toContainText('already used');
  await expect(page.getByRole('button', { name: 'Accept as Jo Judge' })).toHaveCount(0);
});
