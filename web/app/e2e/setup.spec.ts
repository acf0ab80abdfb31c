// A fresh deployment: no account exists, and the server printed a one-time setup link.
// Runs only against such a server (tests/e2e/browser.rs `browser_setup` sets
// VERDICT_SETUP_LINK to the printed link).
import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from '@playwright/test';
import { checkA11y, gql, PASSWORD, PHONE, sameOriginOnly, snapshot } from './support';

const LINK = process.env.VERDICT_SETUP_LINK ?? '';
const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

/** Taps a value for every criterion named. */
async function score(page: Page, values: Record<string, number>) {
  for (const [name, v] of Object.entries(values)) {
    const radio = page.getByRole('group', { name: new RegExp(`^${name}`) }).getByRole('radio', { name: String(v), exact: true });
    await expect(async () => {
      await radio.tap();
      await expect(radio).toBeChecked({ timeout: 2000 });
    }).toPass({ timeout: 15_000 });
  }
}

// Issue 24's first hour as one story, a screenshot at each step (first-hour-NN-*.png):
// from an empty deployment's setup link to a judge on a phone scoring the project at table 12.
test('a new site admin follows the setup link, creates an event, imports a Devpost export, invites a judge, who scores table 12 on a phone', async ({ page, browser }, info) => {
  const guard = sameOriginOnly(page);
  await page.goto(LINK);
  await expect(page.getByRole('heading', { level: 1, name: 'Set up Verdict' })).toBeVisible();
  await expect(page.getByText('one-time setup link')).toBeVisible();
  await checkA11y(page, 'the setup page');
  await snapshot(page, info, 'setup-link');
  await snapshot(page, info, 'first-hour-01-setup-link');
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
  await snapshot(page, info, 'first-hour-02-event-created');

  // The same link again: it says at once that it was used, and asks for nothing.
  await page.goto(LINK);
  await expect(page.getByRole('alert')).toContainText('used already');
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await checkA11y(page, 'a used setup link');
  await snapshot(page, info, 'setup-link-used');

  // The windows move to now (the form takes wall-clock times in the event's zone; the
  // admin's script sets them relative to this moment) and the rubric gets one criterion.
  const admin = (await gql(`mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }`, { e: 'ada@example.org', p: PASSWORD })).logIn.token;
  await gql(
    `mutation($e: String!, $i: UpdateEventInput!) { updateEvent(event: $e, input: $i) { id } }`,
    { e: 'first-hack', i: { submissionsOpen: at(-48 * 60), submissionsClose: at(-60), judgingOpen: at(-30), judgingClose: at(48 * 60) } },
    admin,
  );
  await gql(
    `mutation($e: String!, $i: CriterionInput!) { setCriterion(event: $e, input: $i) { id } }`,
    { e: 'first-hack', i: { key: 'impact', name: 'Impact', min: 1, max: 5, weight: 1, position: 1 } },
    admin,
  );

  // Import the Devpost export: preview, then import; Tide Tracker is at table 12.
  await page.goto('/e/first-hack/admin/import');
  const csv = await readFile(new URL('./devpost-export.csv', import.meta.url), 'utf8');
  await page.getByLabel('CSV file').setInputFiles({ name: 'devpost.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.getByRole('button', { name: 'Preview' }).click();
  await expect(page.getByRole('row').filter({ hasText: 'Tide Tracker' })).toContainText('12');
  await page.getByRole('button', { name: 'Import 3 projects' }).click();
  await expect(page.getByText('Imported 3 projects, 3 teams and 4 new people.')).toBeVisible();
  await snapshot(page, info, 'first-hour-03-devpost-imported');

  // Invite a judge; without a mail server the outbox says so and holds the link to hand over.
  await page.goto('/e/first-hack/admin/people');
  await page.getByLabel('Emails').fill('jude@example.org');
  await page.getByLabel('Role').selectOption('JUDGE');
  await page.getByRole('button', { name: 'Send invitations' }).click();
  await expect(page.getByRole('status').filter({ hasText: '1 invitation sent as Judge.' })).toBeVisible();
  await expect(page.getByTestId('no-mail-server')).toContainText('sends no mail');
  const card = page.locator('[data-message]').filter({ hasText: 'jude@example.org' });
  const invitation = (await card.locator('.org-link code').textContent()) ?? '';
  expect(invitation).toMatch(/\/invite\/[A-Za-z0-9_]+$/);
  await checkA11y(page, 'the People page without a mail server');
  await snapshot(page, info, 'first-hour-04-judge-invited');

  // The judge opens the link on a phone and sets a password.
  const phone = await browser.newContext({ ...PHONE, baseURL: info.project.use.baseURL });
  const judgePage = await phone.newPage();
  await judgePage.goto(new URL(invitation).pathname);
  await expect(judgePage.getByTestId('link-summary')).toContainText('as a judge');
  await judgePage.getByLabel('Your name').fill('Jude');
  await judgePage.getByLabel('Password').fill(PASSWORD);
  await judgePage.getByRole('button', { name: 'Accept invitation' }).tap();
  await expect(judgePage).not.toHaveURL(/\/invite\//);
  await snapshot(judgePage, info, 'first-hour-05-judge-signed-in-phone');

  // The organizer assigns the judge the project at table 12 (as the Assignments page does).
  const d = await gql(
    `query($e: String!) { event(slug: $e) { members(role: JUDGE, first: 10) { nodes { id } } projects(first: 10) { nodes { id table } } } }`,
    { e: 'first-hack' },
    admin,
  );
  const at12 = d.event.projects.nodes.find((p: { table: string | null }) => p.table === '12');
  await gql(
    `mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }`,
    { e: 'first-hack', j: d.event.members.nodes[0].id, p: at12.id },
    admin,
  );

  // The judge finds table 12 in the queue, scores it and submits.
  await judgePage.goto('/e/first-hack/judge');
  const toReview = judgePage.getByRole('list', { name: 'To review' });
  await expect(toReview.getByRole('listitem').filter({ hasText: 'Tide Tracker' })).toContainText('Table 12');
  await snapshot(judgePage, info, 'first-hour-06-queue-table-12-phone');
  await toReview.getByRole('link', { name: 'Tide Tracker' }).tap();
  await expect(judgePage.getByRole('heading', { level: 1 })).toHaveText('Tide Tracker');
  await score(judgePage, { Impact: 4 });
  await judgePage.getByRole('button', { name: 'Submit review' }).tap();
  await expect(judgePage.getByRole('status').filter({ hasText: 'Review submitted' })).toBeVisible();
  await checkA11y(judgePage, 'a submitted review on a phone');
  await snapshot(judgePage, info, 'first-hour-07-table-12-scored-phone');
  await phone.close();
  guard.check();
});

test('a setup link that is not one says so, and asks for nothing', async ({ page }) => {
  await page.goto('/setup/vsu_not-a-real-token');
  await expect(page.getByRole('alert')).toContainText('not valid');
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await checkA11y(page, 'an unknown setup link');
});
