// The community vote: an organizer sets it up, a voter spreads quadratic credits over the
// projects and casts them, and once voting has closed the organizer publishes the tally
// that a visitor then reads.
import { expect, test } from '@playwright/test';
import { checkA11y, createEvent, gql, logIn, person, teamWithProject } from './support';

/** An instant as a `datetime-local` value on the UTC wall clock (the seeded events' zone). */
const utcInput = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString().slice(0, 16);

test('an organizer opens a vote, a voter casts quadratic votes, and the published tally is public', async ({ page, browser }) => {
  const ev = await createEvent();
  const [makerA, makerB, voter] = await Promise.all([
    person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Maker A'),
    person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Maker B'),
    person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Vera Voter'),
  ]);
  await teamWithProject(ev.slug, makerA, 'Rain Gauge', ev.trackIds[0]);
  await teamWithProject(ev.slug, makerB, 'Bus Buddy', ev.trackIds[1]);

  // The organizer sets up an account vote of 10 credits, open now.
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/voting`);
  await expect(page.getByText('This event has no community vote yet.')).toBeVisible();
  await page.getByLabel('Who votes').selectOption('ACCOUNT');
  await page.getByLabel('Credits per voter').fill('10');
  await page.getByLabel('Voting opens').fill(utcInput(-1));
  await page.getByLabel('Voting closes').fill(utcInput(2));
  await page.getByRole('button', { name: 'Save the vote' }).click();
  await expect(page.getByText('The vote is saved.')).toBeVisible();
  await expect(page.getByText(/0 voters/)).toBeVisible();
  await checkA11y(page, 'the organizer voting page');

  // A voter finds the vote from the event page and spends all ten credits: 3 votes cost
  // 9, one more on the other project costs 1, and then nothing more fits.
  const ctx = await browser.newContext();
  const vp = await ctx.newPage();
  await logIn(vp, voter);
  await vp.goto(`/e/${ev.slug}`);
  await vp.getByRole('link', { name: 'Vote for your favourites' }).click();
  await expect(vp.getByRole('heading', { name: 'Your ballot' })).toBeVisible();
  await expect(vp.getByRole('row')).toHaveCount(3);
  for (let i = 0; i < 3; i++) await vp.getByRole('button', { name: 'One vote more for Rain Gauge' }).click();
  await expect(vp.getByLabel('Votes for Rain Gauge')).toHaveText('3');
  await expect(vp.getByText(/of 10 credits left/)).toHaveText('1 of 10 credits left');
  await expect(vp.getByRole('button', { name: 'One vote more for Rain Gauge' })).toBeDisabled();
  await vp.getByRole('button', { name: 'One vote more for Bus Buddy' }).click();
  await expect(vp.getByText(/of 10 credits left/)).toHaveText('0 of 10 credits left');
  await vp.getByRole('button', { name: 'Cast my votes' }).click();
  await expect(vp.getByText('Your votes are cast: 10 of 10 credits spent.')).toBeVisible();
  await checkA11y(vp, 'the ballot');
  // The allocation is kept, and the order of the ballot is the voter's own and stable.
  const order = await vp.locator('tbody th a').allTextContents();
  await vp.reload();
  await expect(vp.getByLabel('Votes for Rain Gauge')).toHaveText('3');
  await expect(vp.getByLabel('Votes for Bus Buddy')).toHaveText('1');
  expect(await vp.locator('tbody th a').allTextContents()).toEqual(order);
  await ctx.close();

  // Nobody sees the tally while voting runs; the organizer ends voting, then publishes.
  await expect(gql(`query($e: String!) { event(slug: $e) { voteTally { rank } } }`, { e: ev.slug })).rejects.toThrow(/NOT_FOUND/);
  await page.reload();
  await expect(page.getByRole('button', { name: 'Publish the tally' })).toBeDisabled();
  await page.getByLabel('Voting opens').fill(utcInput(-1));
  await page.getByLabel('Voting closes').fill(utcInput(-1 / 60));
  await page.getByRole('button', { name: 'Save the vote' }).click();
  await expect(page.getByText(/1 voter;|1 voter\b/)).toBeVisible();
  await page.getByRole('button', { name: 'Publish the tally' }).click();
  await expect(page.getByText(/^Published/)).toBeVisible();

  // A visitor reads the tally: Rain Gauge first with 3 votes.
  const anon = await browser.newContext();
  const ap = await anon.newPage();
  await ap.goto(`/e/${ev.slug}/vote`);
  const rows = ap.getByRole('table', { name: /Community vote tally/ }).getByRole('row');
  await expect(rows.nth(1)).toContainText('Rain Gauge');
  await expect(rows.nth(1)).toContainText('3');
  await expect(rows.nth(2)).toContainText('Bus Buddy');
  await checkA11y(ap, 'the published tally');
  await anon.close();
});
