// A judge on the expo floor with a phone (issue 26): the event is judged by comparisons,
// one tap for which of two projects was better, table after table. The network drops
// twice on the way; the tap made meanwhile waits on the phone, goes out when the network
// comes back, and counts once.
import { expect, test } from '@playwright/test';
import { BASE, checkA11y, createEvent, gql, logIn, person, PHONE, snapshot, teamWithProject } from './support';

test.use(PHONE);

const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

test('a judge on a phone compares ten pairs, the network dropped twice', async ({ page, context, browser }, info) => {
  // Judging opens later, so the organizer may still choose how judges judge: on the Tracks
  // page, the event by comparisons; the Games track follows the event.
  const ev = await createEvent({ submissions: 'open' });
  const org = ev.organizer.token;
  const deskContext = await browser.newContext({ baseURL: BASE });
  const desk = await deskContext.newPage();
  await logIn(desk, ev.organizer);
  await desk.goto(`/e/${ev.slug}/admin/tracks`);
  const modes = desk.getByRole('region', { name: 'How judges judge' });
  await expect(modes.getByLabel('The event')).toHaveValue('SCORES');
  await modes.getByLabel('The event').selectOption({ label: 'Comparisons on the expo floor' });
  await expect(modes.getByText('The event is judged by comparisons on the expo floor.')).toBeVisible();
  await expect(modes.getByLabel('Track Games')).toHaveValue('EVENT');
  await checkA11y(desk, 'the judging modes on the Tracks page');
  await deskContext.close();
  const mode = await gql(`query($e: String!) { event(slug: $e) { judgingMode } }`, { e: ev.slug }, org);
  expect(mode.event.judgingMode).toBe('PAIRWISE');
  for (let i = 1; i <= 12; i++) {
    const owner = await person(ev.slug, 'PARTICIPANT', org);
    const { projectId } = await teamWithProject(ev.slug, owner, `Stand ${i}`, ev.trackIds[i % 2]);
    await gql(
      `mutation($p: ID!, $t: String) { setProjectTable(project: $p, table: $t) { id } }`,
      { p: projectId, t: `${i}` },
      org,
    );
  }
  await gql(
    `mutation($e: String!, $i: UpdateEventInput!) { updateEvent(event: $e, input: $i) { id } }`,
    { e: ev.slug, i: { submissionsClose: at(-1), judgingOpen: at(-60), judgingClose: at(48 * 60) } },
    org,
  );
  const judge = await person(ev.slug, 'JUDGE', org, 'Jo Judge');

  await logIn(page, judge);
  await page.goto(`/e/${ev.slug}/judge`);
  await page.getByRole('link', { name: 'Compare projects, table by table' }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/compare$`));

  // The start of the judge's route: one project, nothing to compare it with yet.
  const start = page.getByRole('region', { name: 'Start' });
  await expect(start.getByRole('heading', { name: /^Table \d+: Stand \d+$/ })).toBeVisible();
  await start.getByRole('button', { name: 'Seen it: next project' }).click();

  const ask = page.getByRole('region', { name: 'Which was better?' });
  const nowAt = ask.getByText(/^Now at:/);
  for (let n = 1; n <= 10; n++) {
    await expect(ask).toBeVisible();
    await expect(ask.getByText(`${12 - n} left on your route.`)).toBeVisible();
    const here = (await nowAt.textContent()) ?? '';
    const dropped = n === 3 || n === 7;
    if (dropped) await context.setOffline(true);
    await ask.getByRole('button', { name: n % 2 ? /^This one/ : /^The one before/ }).click();
    if (dropped) {
      // The tap waits on the phone; the judge cannot tap again until it is sent.
      await expect(page.getByText('1 comparison waiting to be sent')).toBeVisible();
      await expect(ask.getByRole('button', { name: /^This one/ })).toBeDisabled();
      await context.setOffline(false);
      await expect(page.getByText(/waiting to be sent/)).toHaveCount(0);
    }
    // Moved on to the next table, compared against the one just seen.
    await expect(nowAt).not.toHaveText(here);
    await expect(ask.getByText(/^Before:/)).toHaveText(`Before: ${here.replace(/^Now at: /, '')}`);
  }

  // The organizers see exactly ten comparisons: none lost, none counted twice.
  const d = await gql(
    `query($e: String!) { event(slug: $e) { comparisons(first: 100) { nodes { version } } } }`,
    { e: ev.slug },
    org,
  );
  expect(d.event.comparisons.nodes).toHaveLength(10);
  expect(d.event.comparisons.nodes.every((c: { version: number }) => c.version === 1)).toBe(true);
  expect(await page.evaluate((slug) => localStorage.getItem(`verdict.compare.${slug}`), ev.slug)).toBe('[]');
  await checkA11y(page, 'the comparison page on a phone');
  await snapshot(page, info, 'compare-phone');
});
