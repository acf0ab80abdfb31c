// The organizer's set-up, people and records pages: inviting people (and finding their
// links in the outbox), tracks, the rubric, settings that stick, hiding a project from the
// gallery, an export and the audit log that records it all.
import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { checkA11y, createEvent, gql, logIn, person, snapshot, teamWithProject, unique } from './support';

/** An instant as a `datetime-local` value on UTC's clock, to the minute. */
function utcInput(at: string | number): string {
  return new Date(at).toISOString().slice(0, 16);
}

test('an organizer invites two people and finds their links in the outbox', async ({ page }, testInfo) => {
  const ev = await createEvent();
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/people`);
  await expect(page.getByRole('heading', { level: 1, name: 'People' })).toBeVisible();

  const a = `${unique('ann')}@example.org`;
  const b = `${unique('bob')}@example.org`;
  await page.getByLabel('Emails').fill(`${a}\n${b}`);
  await page.getByLabel('Role').selectOption({ label: 'Judge' });
  await page.getByRole('button', { name: 'Send invitations' }).click();
  await expect(page.getByRole('status').filter({ hasText: '2 invitations sent as Judge.' })).toBeVisible();

  const invitations = page.getByRole('region', { name: 'Invitations, oldest first' });
  for (const email of [a, b]) {
    const row = invitations.getByRole('row').filter({ hasText: email });
    await expect(row).toContainText('pending');
    await expect(row).toContainText('Judge');
    await expect(row.getByRole('button', { name: 'Resend' })).toBeVisible();
    await expect(row.getByRole('button', { name: 'Revoke' })).toBeVisible();
  }

  const outbox = page.locator('section', { has: page.getByRole('heading', { name: 'Outbox' }) });
  for (const email of [a, b]) {
    const msg = outbox.getByRole('listitem').filter({ hasText: `to ${email}` });
    await expect(msg.locator('code')).toHaveText(/^https?:\/\/\S+\/invite\/\S+$/);
    await expect(msg.getByRole('button', { name: 'Copy link' })).toBeVisible();
    await expect(msg.locator('pre')).toContainText('/invite/');
  }

  // Revoking one: it says so, and its row shows it.
  const rowB = invitations.getByRole('row').filter({ hasText: b });
  await rowB.getByRole('button', { name: 'Revoke' }).click();
  await rowB.getByRole('button', { name: 'Confirm revoke' }).click();
  await expect(rowB).toContainText('revoked');

  await checkA11y(page, 'the people page');
  await snapshot(page, testInfo, 'people');
});

test('a site admin creates an event; an organizer who is not one is told who may', async ({ page }) => {
  const ev = await createEvent();
  await logIn(page, ev.organizer);
  await page.goto('/new-event');
  await expect(page.getByText('Only site administrators create events')).toBeVisible();
  await page.getByRole('button', { name: 'Log out' }).click();
  await expect(page.getByRole('link', { name: 'Log in' })).toBeVisible();

  await logIn(page, { email: process.env.VERDICT_ADMIN_EMAIL!, password: process.env.VERDICT_ADMIN_PASSWORD! });
  await page.goto('/new-event');
  await expect(page.getByRole('heading', { level: 1, name: 'New event' })).toBeVisible();
  await checkA11y(page, 'the new event page');
  const slug = unique('made');
  await page.getByLabel('Name').fill(`Made in the browser ${slug}`);
  await page.getByLabel('Slug').fill(slug);
  await page.getByLabel('Submissions open').fill('2030-03-01T09:00');
  await page.getByLabel('Submissions close').fill('2030-03-02T17:00');
  await page.getByLabel('Registration').selectOption('OPEN');
  await page.getByRole('button', { name: 'Create the event' }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${slug}/admin$`));
  const d = await gql(`query($s: String!) { event(slug: $s) { name registration submissionsOpen } }`, { s: slug });
  expect(d.event.name).toBe(`Made in the browser ${slug}`);
  expect(d.event.registration).toBe('OPEN');
  // The browser's zone is the runner's: the instant is what 09:00 there is.
  expect(new Date(d.event.submissionsOpen).getTime()).toBe(new Date('2030-03-01T09:00').getTime());
});

test('an organizer sets up tracks, the rubric and the registration', async ({ page }, testInfo) => {
  const ev = await createEvent();
  await logIn(page, ev.organizer);

  // A track.
  await page.goto(`/e/${ev.slug}/admin/tracks`);
  await page.getByLabel('Track name').fill('Hardware');
  await page.getByRole('button', { name: 'Add track' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Track Hardware added.' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Tracks' }).getByRole('row')).toHaveCount(4);
  await checkA11y(page, 'the tracks page');

  // A criterion, then its max changed.
  await page.goto(`/e/${ev.slug}/admin/rubric`);
  await page.getByLabel('Key').fill('originality');
  await page.getByLabel('Criterion name').fill('Originality');
  await page.getByLabel('Highest score').fill('7');
  await page.getByRole('button', { name: 'Add criterion' }).click();
  const row = page.getByRole('row').filter({ hasText: 'originality' });
  await expect(row).toContainText('Originality');
  await expect(row.getByRole('cell').nth(4)).toHaveText('7');
  await expect(row.getByRole('cell').nth(2)).toHaveText('none');
  await row.getByRole('button', { name: 'Edit' }).click();
  await expect(page.getByRole('heading', { name: 'Edit originality' })).toBeVisible();
  await page.getByLabel('Highest score').fill('10');
  const description = 'Something judges have not seen before.\nA new twist on an old idea counts.';
  await page.getByLabel('Description').fill(description);
  await page.getByRole('button', { name: 'Save criterion' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Criterion originality saved.' })).toBeVisible();
  await expect(row.getByRole('cell').nth(4)).toHaveText('10');
  await expect(row.getByRole('cell').nth(2)).toContainText('Something judges have not seen before.');
  await checkA11y(page, 'the rubric page');
  const r = await gql(`query($s: String!) { event(slug: $s) { rubric { key max description } } }`, { s: ev.slug });
  expect(r.event.rubric).toContainEqual({ key: 'originality', max: 10, description });

  // Registration, kept after a reload.
  await page.goto(`/e/${ev.slug}/admin/settings`);
  await expect(page.getByLabel('Registration')).toHaveValue('INVITE_ONLY');
  await page.getByLabel('Registration').selectOption('CLOSED');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Registration')).toHaveValue('CLOSED');
  await expect(page.locator('dl.org-current')).toContainText('Closed');
  await checkA11y(page, 'the settings page');

  // The event's time zone: the window inputs follow it, the deadlines do not move.
  const before = await gql(`query($s: String!) { event(slug: $s) { timeZone submissionsClose } }`, { s: ev.slug });
  expect(before.event.timeZone).toBe('UTC');
  const close = page.getByLabel('Submissions close');
  await expect(close).toHaveValue(utcInput(before.event.submissionsClose));
  await page.getByLabel('Time zone').fill('Asia/Tokyo');
  await expect(close).toHaveValue(utcInput(new Date(before.event.submissionsClose).getTime() + 9 * 3600_000));
  await expect(page.getByText('Times below are in the event’s time zone, Asia/Tokyo')).toBeVisible();
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  const after = await gql(`query($s: String!) { event(slug: $s) { timeZone submissionsClose } }`, { s: ev.slug });
  expect(after.event.timeZone).toBe('Asia/Tokyo');
  expect(new Date(after.event.submissionsClose).getTime()).toBe(new Date(before.event.submissionsClose).getTime());
  await expect(page.locator('dl.org-current')).toContainText('Asia/Tokyo');
  // Issue 28, "one time zone": each window once in the viewer's zone, and the event's
  // clock beside it only because Tokyo's reads differently.
  const viewerOffset = await page.evaluate(() => new Date('2031-01-10T09:00:00Z').getTimezoneOffset());
  const windowTime = page.locator('dl.org-current time').first();
  await expect(windowTime.locator('.muted')).toHaveCount(viewerOffset === -540 ? 0 : 1);
  if (viewerOffset !== -540) await expect(windowTime.locator('.muted')).toContainText('GMT+9');
  await snapshot(page, testInfo, 'issue28-one-time-zone');
  // A window typed in now is read on Tokyo's clock (UTC+9, no daylight saving).
  await close.fill('2031-01-10T18:00');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  const moved = await gql(`query($s: String!) { event(slug: $s) { submissionsClose } }`, { s: ev.slug });
  expect(new Date(moved.event.submissionsClose).toISOString()).toBe('2031-01-10T09:00:00.000Z');
  await page.reload();
  await expect(page.getByLabel('Time zone')).toHaveValue('Asia/Tokyo');
  await expect(close).toHaveValue('2031-01-10T18:00');
});

test('an organizer hides a project, exports the projects and finds the hide in the audit log', async ({ page }, testInfo) => {
  const ev = await createEvent();
  const org = ev.organizer;
  const maker = await person(ev.slug, 'PARTICIPANT', org.token);
  const title = unique('Gizmo');
  const { projectId } = await teamWithProject(ev.slug, maker, title, ev.trackIds[0]);
  const gallery = async () =>
    (await gql(`query($s: String!) { event(slug: $s) { projects(first: 100) { nodes { id } } } }`, { s: ev.slug })).event.projects.nodes.map(
      (n: { id: string }) => n.id,
    );
  expect(await gallery()).toContain(projectId);

  await logIn(page, org);
  await page.goto(`/e/${ev.slug}/admin/moderation`);
  const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: title }) });
  await expect(card).toContainText('submitted');
  await checkA11y(page, 'the moderation page');
  await card.getByText(`Moderate ${title}`).click();
  await card.getByLabel('Reason for hiding').fill('Spam: not a hackathon project');
  await card.getByRole('button', { name: 'Hide', exact: true }).click();
  await expect(card.getByRole('status')).toHaveText('Hidden from the gallery and the ranking.');
  await expect(card).toContainText('Spam: not a hackathon project');
  await expect(card.getByRole('button', { name: 'Unhide' })).toBeVisible();
  expect(await gallery()).not.toContain(projectId);

  // The projects export.
  await page.goto(`/e/${ev.slug}/admin/exports`);
  await expect(page.getByText('Every export is recorded in the audit log')).toBeVisible();
  await checkA11y(page, 'the exports page');
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download projects.csv' }).click()]);
  expect(file.suggestedFilename()).toBe(`${ev.slug}-projects.csv`);
  const csv = await readFile((await file.path())!, 'utf8');
  expect(csv.split('\n')[0]).toMatch(/^project_id,.*title/);
  expect(csv).toContain(title);
  // Issue 28, "exports name people, teams and tracks": names beside the ids.
  expect(csv.split('\n')[0]).toMatch(/,team_name,track_name,/);
  expect(csv).toContain(`Team ${title}`);
  await snapshot(page, testInfo, 'issue28-exports');

  // The audit log, filtered to the hide.
  await page.goto(`/e/${ev.slug}/admin/audit`);
  await expect(page.getByRole('region', { name: 'Audit log' })).toBeVisible();
  await page.getByLabel('Action contains').fill('project.hidden');
  const rows = page.getByRole('region', { name: 'Audit log' }).locator('tbody tr');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('project.hidden');
  await expect(rows.first()).toContainText(org.name);
  await rows.first().getByText('Payload').click();
  await expect(rows.first().locator('pre')).toContainText('Spam: not a hackathon project');
  await page.getByLabel('Action contains').fill('export');
  await expect(rows.first()).toContainText('export.created');
  await checkA11y(page, 'the audit page');
});

test('an organizer registers a webhook, sees its secret once and reads the delivery log', async ({ page }) => {
  const ev = await createEvent();
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/webhooks`);
  await expect(page.getByRole('heading', { level: 1, name: 'Webhooks' })).toBeVisible();
  await expect(page.getByText('No webhooks yet.')).toBeVisible();

  // The cloud metadata address is refused.
  await page.getByLabel('Receiver URL').fill('http://169.254.169.254/latest/meta-data/');
  await page.getByRole('button', { name: 'Register webhook' }).click();
  await expect(page.getByRole('alert').filter({ hasText: /public address/ })).toBeVisible();

  // One for track changes, on this machine (the stories' server allows loopback receivers,
  // for tests only; nothing listens on port 9): its secret, once.
  const url = 'http://127.0.0.1:9/verdict-hook';
  await page.getByLabel('Receiver URL').fill(url);
  await page.getByLabel('Actions (optional)').fill('track');
  await page.getByRole('button', { name: 'Register webhook' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Webhook ${url} registered.` })).toBeVisible();
  await expect(page.getByTestId('webhook-secret')).toHaveText(/^whsec_[0-9a-f]{64}$/);
  const hooks = page.getByRole('region', { name: 'Webhooks' });
  await expect(hooks.getByRole('row').filter({ hasText: url })).toContainText('track');
  await checkA11y(page, 'the webhooks page');

  // A track is added: its audit event is in the log, on its way to the receiver.
  await page.goto(`/e/${ev.slug}/admin/tracks`);
  await page.getByLabel('Track name').fill('Webhooked');
  await page.getByRole('button', { name: 'Add track' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Track Webhooked added.' })).toBeVisible();
  await page.goto(`/e/${ev.slug}/admin/webhooks`);
  await expect(page.getByTestId('webhook-secret')).toHaveCount(0);
  const log = page.getByRole('region', { name: /Deliveries, oldest first/ });
  const row = log.getByRole('row').filter({ hasText: 'track.created' });
  await expect(row).toContainText(url);
  // Its first attempt is recorded (nobody answered).
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh the log' }).click();
    await expect(row.getByRole('listitem')).not.toHaveCount(0, { timeout: 1000 });
  }).toPass({ timeout: 20_000 });

  // Switched off.
  await hooks.getByRole('button', { name: `Switch off ${url}` }).click();
  await expect(page.getByRole('status').filter({ hasText: `${url} is off.` })).toBeVisible();
  await expect(hooks.getByRole('row').filter({ hasText: url })).toContainText('off');
});
