// A participant's path: an invitation from mail, a team joined by link, a project
// submitted before the deadline and refused after it, as the server says.
import { expect, test } from '@playwright/test';
import { checkA11y, createEvent, gql, invite, logIn, PASSWORD, person, PHONE, sameOriginOnly, snapshot, teamWithProject, unique } from './support';

const hours = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();

test('a participant redeems an invitation, sets a password, joins a team by link, submits before the deadline and finds the form closed after it', async ({
  page,
}, testInfo) => {
  const guard = sameOriginOnly(page);
  const ev = await createEvent();
  const email = `${unique('pat')}@example.org`;
  const path = await invite(ev.slug, email, 'PARTICIPANT', ev.organizer.token);

  // The invitation: a name and a password, then signed in and on the event's team page.
  await page.goto(path);
  await expect(page.getByRole('heading', { level: 1, name: 'Accept your invitation' })).toBeVisible();
  await checkA11y(page, 'the invitation page');
  await page.getByLabel('Your name').fill('Pat Participant');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Accept invitation' }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/team$`));
  await expect(page.getByRole('status').filter({ hasText: 'Welcome, Pat Participant' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Pat Participant' })).toBeVisible();
  await expect(page.getByText('You are not on a team yet')).toBeVisible();
  await checkA11y(page, 'the team page without a team');

  // A teammate's team with a draft; its join link.
  const mate = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Mo Mate');
  const t = await teamWithProject(ev.slug, mate, unique('Lamp'), ev.trackIds[0], { draft: true });
  let code = t.inviteCode;
  if (!code) {
    const r = await gql(`mutation($t: ID!) { rotateInviteCode(team: $t) { inviteCode } }`, { t: t.teamId }, mate.token);
    code = r.rotateInviteCode.inviteCode as string;
  }
  await page.goto(`/join/${code}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Join a team' })).toBeVisible();
  await checkA11y(page, 'the join page');
  await page.getByRole('button', { name: 'Join the team' }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/team$`));
  const members = page.getByRole('region', { name: /Members/ });
  await expect(members).toContainText('Mo Mate');
  await expect(members).toContainText('Pat Participant');
  await expect(page.getByTestId('join-link')).toContainText(`/join/${code}`);

  // Inviting one more person by a personal link.
  await page.getByLabel("Teammate's email").fill(`${unique('friend')}@example.org`);
  await page.getByRole('button', { name: 'Make invitation link' }).click();
  await expect(page.getByRole('region', { name: 'The invitation link' })).toContainText('/invite/');
  await checkA11y(page, 'the team page with a team');

  // My project: edit the tagline, submit.
  await page.getByRole('navigation', { name: 'Event' }).getByRole('link', { name: 'My project' }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/my-project$`));
  await expect(page.getByText('Draft').first()).toBeVisible();
  await page.getByLabel('Tagline').fill('A lamp that reads the room');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Your changes are saved' })).toBeVisible();
  await page.getByRole('button', { name: 'Submit project' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Your project is submitted' })).toBeVisible();
  await expect(page.locator('.pt-project-head .badge')).toHaveText(/Submitted/);
  const p = await gql(`query($id: ID!) { project(id: $id) { status tagline } }`, { id: t.projectId }, mate.token);
  expect(p.project).toEqual({ status: 'SUBMITTED', tagline: 'A lamp that reads the room' });
  await checkA11y(page, 'my project, submitted');
  await snapshot(page, testInfo, 'my-project');

  // The organizer closes submissions: the form says so and offers nothing to press.
  await gql(
    `mutation($e: String!, $i: UpdateEventInput!) { updateEvent(event: $e, input: $i) { id } }`,
    { e: ev.slug, i: { submissionsOpen: hours(-48), submissionsClose: hours(-0.01) } },
    ev.organizer.token,
  );
  await page.reload();
  await expect(page.getByTestId('window-closed')).toContainText('Submissions closed');
  await expect(page.getByRole('button', { name: 'Withdraw' })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Save changes' })).toBeDisabled();
  await expect(page.getByLabel('Tagline')).not.toBeEditable();
  await checkA11y(page, 'my project, closed after the deadline');
  const after = await gql(`query($id: ID!) { project(id: $id) { status tagline } }`, { id: t.projectId }, mate.token);
  expect(after.project).toEqual({ status: 'SUBMITTED', tagline: 'A lamp that reads the room' });
  guard.check();
});

test.describe('on a phone, in dark mode', () => {
  test.use({ ...PHONE, colorScheme: 'dark' });

  test('the team and project pages fit a 390 px screen and pass axe', async ({ page }, testInfo) => {
    const ev = await createEvent();
    const pat = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Pat Phone');
    await teamWithProject(ev.slug, pat, unique('Kite'), ev.trackIds[1]);
    await logIn(page, pat);
    const fits = async (what: string) => {
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(wide, `${what} scrolls sideways`).toBeLessThanOrEqual(390);
    };
    await page.goto(`/e/${ev.slug}/team`);
    await expect(page.getByRole('region', { name: /Members/ })).toContainText('Pat Phone');
    await page.getByRole('button', { name: 'Leave team' }).click();
    await expect(page.getByRole('button', { name: /Yes, leave/ })).toBeVisible();
    await fits('the team page');
    await checkA11y(page, 'the team page on a phone');
    await snapshot(page, testInfo, 'team-phone-dark');
    // The last member of a team with a submitted project stays, as the server says.
    await page.getByRole('button', { name: /Yes, leave/ }).click();
    await expect(page.getByRole('alert')).toHaveText('The last member cannot leave a team with a submitted project: withdraw it first.');

    await page.goto(`/e/${ev.slug}/my-project`);
    await expect(page.locator('.pt-project-head .badge')).toHaveText(/Submitted/);
    await fits('my project');
    await checkA11y(page, 'my project on a phone');
    await snapshot(page, testInfo, 'my-project-phone-dark');

    await page.goto('/account');
    await expect(page.getByRole('region', { name: 'My events' })).toContainText(`Browser ${ev.slug}`);
    await page.getByLabel('Token label').fill('phone');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect(page.getByTestId('new-token')).toBeVisible();
    await fits('the account page');
    await checkA11y(page, 'the account page on a phone');
    await snapshot(page, testInfo, 'account-phone-dark');
  });
});
