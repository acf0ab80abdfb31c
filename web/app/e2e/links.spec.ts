// Links that say what they are, on a phone where judges and participants open them: each
// page first shows what its link is for, and a used, revoked or unknown link says so at
// once, before anything is asked.
import { expect, test } from '@playwright/test';
import { checkA11y, createEvent, gql, invite, PASSWORD, person, PHONE, sameOriginOnly, snapshot, unique } from './support';

test.use(PHONE);

test('an invitation names its event, role and address; once used, the link says so at once', async ({ page }, info) => {
  const guard = sameOriginOnly(page);
  const ev = await createEvent();
  const email = `${unique('jude')}@example.org`;
  const path = await invite(ev.slug, email, 'JUDGE', ev.organizer.token);

  await page.goto(path);
  const summary = page.getByTestId('link-summary');
  await expect(summary).toContainText(`Browser ${ev.slug}`);
  await expect(summary).toContainText('as a judge');
  await expect(summary).toContainText(`${email[0]}***@example.org`);
  await checkA11y(page, 'an invitation that works');
  await snapshot(page, info, 'link-invitation');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Accept invitation' }).click();
  await expect(page).not.toHaveURL(new RegExp(path));

  // The same link again, signed in or not: it says it was used, and asks for nothing.
  await page.context().clearCookies();
  await page.goto(path);
  await expect(page.getByRole('alert')).toContainText('already used');
  await expect(page.getByTestId('link-summary')).toContainText(`Browser ${ev.slug}`);
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Accept invitation' })).toHaveCount(0);
  await checkA11y(page, 'a used invitation');
  await snapshot(page, info, 'link-invitation-used');
  guard.check();
});

test('a revoked invitation and an unknown link say so at once', async ({ page }) => {
  const ev = await createEvent();
  const email = `${unique('gone')}@example.org`;
  const path = await invite(ev.slug, email, 'PARTICIPANT', ev.organizer.token);
  const list = await gql(`query($e: String!) { event(slug: $e) { invitations(first: 100) { nodes { id email } } } }`, { e: ev.slug }, ev.organizer.token);
  const id = list.event.invitations.nodes.find((n: { email: string }) => n.email === email).id;
  await gql(`mutation($i: ID!) { revokeInvitation(id: $i) { id } }`, { i: id }, ev.organizer.token);
  await page.goto(path);
  await expect(page.getByRole('alert')).toContainText('withdrawn');
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await checkA11y(page, 'a revoked invitation');

  for (const p of ['/invite/vi_nope', '/reset/xyz', '/confirm/xyz', '/join/nope']) {
    await page.goto(p);
    await expect(page.getByRole('alert')).toContainText('This link is not valid');
    await expect(page.getByLabel(/password/i)).toHaveCount(0);
  }
  await checkA11y(page, 'an unknown link');
});

test('a team join link names the team and the event before asking anyone to log in', async ({ page }) => {
  const ev = await createEvent();
  const lead = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Lee Lead');
  const t = await gql(`mutation($e: String!, $n: String!) { createTeam(event: $e, name: $n) { id inviteCode } }`, { e: ev.slug, n: 'Night Owls' }, lead.token);
  let code: string | null = t.createTeam.inviteCode;
  if (!code) {
    const r = await gql(`mutation($t: ID!) { rotateInviteCode(team: $t) { inviteCode } }`, { t: t.createTeam.id }, lead.token);
    code = r.rotateInviteCode.inviteCode as string;
  }
  await page.goto(`/join/${code}`);
  const summary = page.getByTestId('link-summary');
  await expect(summary).toContainText('Night Owls');
  await expect(summary).toContainText(`Browser ${ev.slug}`);
  await expect(page.getByRole('link', { name: 'Log in' }).first()).toBeVisible();
  await checkA11y(page, 'a team join link');
});
