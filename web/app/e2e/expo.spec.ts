// The in-person expo: an organizer imports a Devpost export (preview, then import) and
// sets a table; a judge on a phone finds each project by its table in the queue.
import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { judgingEvent } from './judge-seed';
import { checkA11y, createEvent, gql, logIn, PHONE, snapshot, unique } from './support';

const SET_TABLE = `mutation($p: ID!, $t: String) { setProjectTable(project: $p, table: $t) { id table } }`;

test('an organizer previews a Devpost export, imports it, and the gallery shows the tables', async ({ page }, testInfo) => {
  const ev = await createEvent();
  const tag = unique('dp');
  const csv = (await readFile(new URL('./devpost-export.csv', import.meta.url), 'utf8')).replaceAll('@devpost.example', `@${tag}.devpost.example`);
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/import`);
  await expect(page.getByRole('heading', { level: 1, name: 'Import & tables' })).toBeVisible();

  await page.getByLabel('CSV file').setInputFiles({ name: 'devpost.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('region', { name: 'Preview' });
  await expect(preview.getByText('Would import 3 projects, 3 teams and 4 new people.')).toBeVisible();
  // The bad row is named by its line, with the column and the address at fault.
  const problems = page.getByRole('list', { name: 'Rows left out' });
  await expect(problems.getByRole('listitem')).toHaveCount(1);
  await expect(problems).toContainText('Line 7');
  await expect(problems).toContainText('Submitter Email "eve.devpost.example" is not a valid email address');
  await expect(page.getByRole('row').filter({ hasText: 'Tide Tracker' })).toContainText('12');
  await checkA11y(page, 'the Devpost preview');

  await page.getByRole('button', { name: 'Import 3 projects' }).click();
  await expect(page.getByText('Imported 3 projects, 3 teams and 4 new people.')).toBeVisible();
  await page.getByRole('button', { name: 'Invite the imported people' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'invitations created' })).toBeVisible();

  // The organizers move a project to another table; the gallery shows both tables.
  const row = page.getByRole('region', { name: 'Projects and their tables' }).getByRole('row').filter({ hasText: 'Quiet Rooms, Loud Ideas' });
  await row.getByLabel('Table of Quiet Rooms, Loud Ideas').fill('A-3');
  await row.getByRole('button', { name: 'Save' }).click();
  await expect(row.getByRole('button', { name: 'Save' })).toBeDisabled();
  await snapshot(page, testInfo, 'devpost-import');

  await page.goto(`/e/${ev.slug}/projects`);
  await expect(page.getByRole('listitem').filter({ hasText: 'Tide Tracker' })).toContainText('Table 12');
  await expect(page.getByRole('listitem').filter({ hasText: 'Quiet Rooms, Loud Ideas' })).toContainText('Table A-3');
  await checkA11y(page, 'the gallery with tables');
});

test.describe('on a phone', () => {
  test.use(PHONE);

  test('a judge finds each project by its table and scores the one at table 12', async ({ page }, testInfo) => {
    const ev = await judgingEvent({ projects: 2, judges: 1, perJudge: 2 });
    const [a, b] = ev.judges[0].assignments;
    await gql(SET_TABLE, { p: a.projectId, t: '12' }, ev.organizer.token);
    await gql(SET_TABLE, { p: b.projectId, t: '2' }, ev.organizer.token);
    await logIn(page, ev.judges[0]);
    await page.goto(`/e/${ev.slug}/judge`);
    const toReview = page.getByRole('list', { name: 'To review' });
    await expect(toReview.getByRole('listitem').filter({ hasText: a.title })).toContainText('Table 12');
    await expect(toReview.getByRole('listitem').filter({ hasText: b.title })).toContainText('Table 2');
    await expect(page.getByRole('link', { name: /Score the next project/ })).toContainText(/Table (12|2): /);
    await checkA11y(page, 'the queue with tables');

    await toReview.getByRole('link', { name: a.title }).tap();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(a.title);
    await expect(page.getByRole('article', { name: 'The project' })).toContainText('Table 12');
    await snapshot(page, testInfo, 'judge-table-12');
  });
});

test('an organizer takes every pending link at once, as CSV and as QR codes', async ({ page }, testInfo) => {
  const ev = await createEvent();
  const emails = [`${unique('qa')}@example.org`, `${unique('qb')}@example.org`];
  await gql(`mutation($e: String!, $m: [String!]!) { inviteToEvent(event: $e, emails: $m, role: JUDGE) { id } }`, { e: ev.slug, m: emails }, ev.organizer.token);
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/links`);
  await expect(page.getByRole('heading', { level: 1, name: 'Invitation links' })).toBeVisible();

  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download links (CSV)' }).click()]);
  const csv = await readFile((await file.path())!, 'utf8');
  const lines = csv.trim().split('\n');
  expect(lines[0]).toBe('email,role,link,expires_at');
  for (const email of emails) expect(lines.find((l) => l.startsWith(`${email},judge,`))).toMatch(/\/invite\/[A-Za-z0-9_]+,/);

  // The CSV is the server's export; the QR codes are their own step.
  await page.getByRole('button', { name: 'Show QR codes' }).click();
  await expect(page.getByRole('status').filter({ hasText: '2 pending invitations.' })).toBeVisible();
  const sheet = page.getByRole('list', { name: 'Invitation QR codes' });
  for (const email of emails) await expect(sheet.getByRole('img', { name: `QR code of the link for ${email}` })).toBeVisible();
  await checkA11y(page, 'the invitation links');
  await snapshot(page, testInfo, 'invitation-qr-codes');
});

test('an organizer renames a track and deletes it once nothing uses it', async ({ page }) => {
  const ev = await createEvent();
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/tracks`);
  const tools = page.getByRole('row').filter({ hasText: 'Tools' });
  await tools.getByLabel('New name of Tools').fill('Hardware');
  await tools.getByRole('button', { name: 'Rename' }).click();
  const hardware = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'Hardware', exact: true }) });
  await expect(hardware).toBeVisible();
  await hardware.getByRole('button', { name: 'Delete' }).click();
  await hardware.getByRole('button', { name: 'Confirm delete' }).click();
  await expect(page.getByRole('cell', { name: 'Hardware', exact: true })).toHaveCount(0);
  await checkA11y(page, 'the tracks page');
});
