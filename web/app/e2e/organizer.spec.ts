// The organizer's live pages: an organizer invites judges, plans and applies the
// assignments, watches judging progress move while a judge scores in another browser,
// runs a calibration, publishes it, and the public results show it.
import { expect, test, type Browser, type Page } from '@playwright/test';
import { checkA11y, createEvent, gql, linkFor, logIn, person, sameOriginOnly, snapshot, teamWithProject, PASSWORD, unique, type Person } from './support';

const minutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();

/** The number in the overview's stat named `label` (e.g. "done"). */
function stat(page: Page, label: string) {
  return page
    .locator('.stat')
    .filter({ hasText: new RegExp(`^\\s*\\d+\\s+${label}\\s*$`) })
    .locator('strong');
}

/** Invites judges through the People page when it offers the form, else through the API. */
async function inviteJudges(page: Page, slug: string, emails: string[], organizer: Person): Promise<'page' | 'api'> {
  await page.goto(`/e/${slug}/admin/people`);
  const form = await page
    .getByLabel('Emails')
    .waitFor({ timeout: 5_000 })
    .then(
      () => true,
      () => false,
    );
  if (form) {
    await page.getByLabel('Emails').fill(emails.join('\n'));
    await page.getByLabel('Role').selectOption({ label: 'Judge' });
    await page.getByRole('button', { name: 'Send invitations' }).click();
  } else {
    await gql(`mutation($e: String!, $m: [String!]!) { inviteToEvent(event: $e, emails: $m, role: JUDGE) { id } }`, { e: slug, m: emails }, organizer.token);
  }
  return form ? 'page' : 'api';
}

/** A judge redeems the mailed invitation (through the API) and gets a session. */
async function redeem(slug: string, email: string, name: string, organizer: Person): Promise<Person> {
  let path = '';
  await expect
    .poll(
      async () => {
        path = await linkFor(slug, email, organizer.token).catch(() => '');
        return path;
      },
      { message: `an invitation for ${email} in the outbox` },
    )
    .toMatch(/^\/invite\//);
  const d = await gql(`mutation($t: String!, $p: String, $n: String) { redeemInvitation(token: $t, password: $p, displayName: $n) { token } }`, {
    t: path.split('/').pop(),
    p: PASSWORD,
    n: name,
  });
  return { email, password: PASSWORD, name, token: d.redeemInvitation.token };
}

type Mine = { id: string; status: string; project: { id: string; title: string } };
async function myAssignments(slug: string, judge: Person): Promise<Mine[]> {
  const d = await gql(`query($e: String!) { event(slug: $e) { myAssignments { id status project { id title } } } }`, { e: slug }, judge.token);
  return d.event.myAssignments;
}

async function scoreByApi(assignment: string, judge: Person, values: [number, number]) {
  await gql(
    `mutation($a: ID!, $s: [ScoreInput!]!) { saveReview(assignment: $a, scores: $s, submit: true) { id submitted } }`,
    { a: assignment, s: [{ criterion: 'impact', value: values[0] }, { criterion: 'craft', value: values[1] }] },
    judge.token,
  );
}

/** The judge scores one assignment in their own browser when the scoring page offers its
 *  form (radio groups per criterion, "Submit review"); else through the API. */
async function scoreInOtherBrowser(browser: Browser, slug: string, judge: Person, assignment: string): Promise<'page' | 'api'> {
  const ctx = await browser.newContext();
  const jp = await ctx.newPage();
  try {
    await logIn(jp, judge);
    await jp.goto(`/e/${slug}/judge/${assignment}`);
    const submit = jp.getByRole('button', { name: 'Submit review' });
    const form = await submit.waitFor({ timeout: 5_000 }).then(
      () => true,
      () => false,
    );
    if (!form) {
      await scoreByApi(assignment, judge, [8, 7]);
      return 'api';
    }
    for (const [name, value] of [
      ['Impact', '8'],
      ['Craft', '7'],
    ]) {
      // A fieldset (role group) or a radiogroup, named by the criterion.
      const group = jp.getByRole('group', { name: new RegExp(name) }).or(jp.getByRole('radiogroup', { name: new RegExp(name) }));
      await group.first().getByRole('radio', { name: value, exact: true }).check();
    }
    await submit.click();
    await expect
      .poll(async () => (await myAssignments(slug, judge)).find((a) => a.id === assignment)?.status, { message: 'the review is submitted' })
      .toBe('done');
    return 'page';
  } finally {
    await ctx.close();
  }
}

test('an organizer invites judges, auto-assigns, watches progress live while a judge scores, runs calibration and publishes', async ({ page, browser }, info) => {
  test.setTimeout(180_000);
  const guard = sameOriginOnly(page);
  const ev = await createEvent({ reviewsPerProject: 2 });
  const { slug, organizer } = ev;

  // Four participants, each with a submitted project.
  const titles = ['Aurora', 'Beacon', 'Cobalt', 'Delta', 'Ember'];
  for (const [i, title] of titles.entries()) {
    const p = await person(slug, 'PARTICIPANT', organizer.token, `Participant ${title}`);
    await teamWithProject(slug, p, title, ev.trackIds[i % 2]);
  }

  // The organizer invites two judges through the People page.
  await logIn(page, organizer);
  const emails = [`${unique('judge-a')}@example.org`, `${unique('judge-b')}@example.org`];
  const invitedThrough = await inviteJudges(page, slug, emails, organizer);
  info.annotations.push({ type: 'invitations', description: `sent through the ${invitedThrough}` });
  const judges = [await redeem(slug, emails[0], 'Judge Ada', organizer), await redeem(slug, emails[1], 'Judge Bo', organizer)];

  // Submissions close, judging opens.
  await gql(
    `mutation($e: String!, $i: UpdateEventInput!) { updateEvent(event: $e, input: $i) { id } }`,
    { e: slug, i: { submissionsClose: minutes(-1), judgingOpen: minutes(-1), judgingClose: minutes(48 * 60) } },
    organizer.token,
  );

  // Auto-assign: preview the plan, then apply it.
  await page.goto(`/e/${slug}/admin/assignments`);
  await expect(page.getByRole('heading', { level: 1, name: 'Assignments' })).toBeVisible();
  const k = page.getByLabel('Reviews per project (k)');
  await expect(k).toHaveValue('2');
  await k.fill('2');
  await page.getByRole('button', { name: 'Preview' }).click();
  await expect(page.getByRole('heading', { name: 'Planned assignments (not applied yet)' })).toBeVisible();
  const coverage = page.getByRole('region', { name: 'Coverage of each project under the plan' });
  for (const t of titles) await expect(coverage.getByRole('cell', { name: t, exact: true })).toBeVisible();
  await expect(page.getByRole('region', { name: 'New judge and project pairs' }).getByRole('row')).toHaveCount(1 + titles.length * 2);
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
  await snapshot(page, info, 'assignments-preview');
  await checkA11y(page, 'the assignments page with a plan');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Applied: ${titles.length * 2} new assignments` })).toBeVisible();
  const current = page.getByRole('region', { name: `${titles.length * 2} assignments` });
  await expect(current.getByRole('row')).toHaveCount(1 + titles.length * 2);
  await expect(current.getByRole('button', { name: /^Unassign / })).toHaveCount(titles.length * 2);

  // The overview, live: a judge scores in another browser and "done" goes up without a reload.
  await page.goto(`/e/${slug}/admin`);
  await expect(stat(page, 'assignments')).toHaveText(String(titles.length * 2));
  await expect(stat(page, 'done')).toHaveText('0');
  await expect(stat(page, 'projects below target')).toHaveText(String(titles.length));
  await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
  let navigations = 0;
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) navigations++;
  });
  await snapshot(page, info, 'overview-before');
  await checkA11y(page, 'the overview');

  const first = (await myAssignments(slug, judges[0]))[0];
  const scoredThrough = await scoreInOtherBrowser(browser, slug, judges[0], first.id);
  info.annotations.push({ type: 'first review', description: `scored through the ${scoredThrough}` });
  await expect(stat(page, 'done')).toHaveText('1');
  await expect(stat(page, 'pending')).toHaveText(String(titles.length * 2 - 1));

  // The rest of the reviews, through the API; the page keeps counting.
  for (const [j, judge] of judges.entries()) {
    for (const a of await myAssignments(slug, judge)) {
      if (a.status === 'done') continue;
      const i = titles.indexOf(a.project.title);
      await scoreByApi(a.id, judge, [((i * 2 + j * 3) % 10) + 1, ((i * 3 + j) % 10) + 1]);
    }
  }
  await expect(stat(page, 'done')).toHaveText(String(titles.length * 2));
  await expect(stat(page, 'projects below target')).toHaveText('0');
  await expect(page.getByText(`${titles.length * 2} of ${titles.length * 2} reviewable assignments done (100 %)`)).toBeVisible();
  expect(navigations, 'the overview was never reloaded').toBe(0);
  await expect(page.getByRole('alert')).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
  await snapshot(page, info, 'overview');

  // The leaderboard ranks everyone.
  await page.goto(`/e/${slug}/admin/leaderboard`);
  const board = page.getByRole('region', { name: 'Leaderboard: projects by rank' });
  await expect(board.getByRole('row')).toHaveCount(1 + titles.length);
  await expect(board.getByRole('cell', { name: '1', exact: true }).first()).toBeVisible();
  await expect(page.getByRole('region', { name: 'Leaderboard: judges' }).getByRole('row')).toHaveCount(1 + judges.length);
  await page.waitForTimeout(500);
  await expect(page.getByRole('alert'), 'no refusal, of the query or of the live feed').toHaveCount(0);
  await checkA11y(page, 'the leaderboard');

  // Recusals page (read and the form's choices).
  await page.goto(`/e/${slug}/admin/recusals`);
  await expect(page.getByText('None declared.')).toBeVisible();
  await expect(page.getByLabel('Judge', { exact: true })).toContainText('Judge Ada');
  await expect(page.getByLabel('Team', { exact: true })).toContainText('Team Aurora');
  await checkA11y(page, 'the recusals page');

  // Calibration: run, read the run, publish it as final.
  await page.goto(`/e/${slug}/admin/calibration`);
  await expect(page.getByText('No run yet.')).toBeVisible();
  await page.getByLabel('Seed').fill('7');
  await page.getByLabel('Bootstrap').fill('50');
  await page.getByRole('button', { name: 'Run calibration' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'The run is computed and stored, signed.' })).toBeVisible();
  await expect(page.getByRole('region', { name: '1 run, newest first' }).getByRole('row')).toHaveCount(2);
  const detail = page.getByRole('region', { name: 'This run: projects by rank' });
  await expect(detail.getByRole('row')).toHaveCount(1 + titles.length);
  await expect(page.locator('.run-facts')).toContainText('7');
  await expect(page.getByRole('region', { name: 'This run: judges' }).getByRole('row')).toHaveCount(1 + judges.length);
  const forest = page.locator('figure.plot').filter({ hasText: 'This run: calibrated quality' });
  await expect(forest, 'the forest plot of the run').toBeVisible();
  const winner = (await detail.getByRole('row').nth(1).getByRole('rowheader').innerText()).trim();
  expect(titles).toContain(winner);
  // The engine's summary in plain words, above the tables.
  await expect(page.getByTestId('run-summary')).toContainText('of the score variance');
  await snapshot(page, info, 'calibration-run');
  await checkA11y(page, 'the calibration page with a run');

  // Reading the run again after a reload (the detail comes from the stored run).
  await page.reload();
  await expect(page.getByRole('region', { name: 'This run: projects by rank' }).getByRole('row')).toHaveCount(1 + titles.length);
  await expect(page.getByRole('region', { name: 'This run: projects by rank' }).getByRole('row').nth(1)).toContainText(winner);

  await page.getByLabel('Final results').check();
  await page.getByRole('button', { name: 'Publish this run…' }).click();
  const confirm = page.getByRole('group', { name: /Publish this run as version 1, final\?/ });
  await expect(confirm).toBeVisible();
  await confirm.getByRole('button', { name: 'Confirm: publish final results' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Published version 1 (final).' })).toBeVisible();
  const pubs = page.getByRole('region', { name: 'Every publication, oldest first' });
  await expect(pubs.getByRole('row')).toHaveCount(2);
  await expect(pubs.getByRole('row').nth(1)).toContainText('final');
  await expect(page.getByText('Final results are published: nothing more can be published in this event.')).toBeVisible();

  // A conflict declared afterwards, through the Recusals page.
  await page.goto(`/e/${slug}/admin/recusals`);
  await page.getByLabel('Judge', { exact: true }).selectOption({ label: `Judge Bo (${emails[1]})` });
  await page.getByLabel('Team', { exact: true }).selectOption({ label: 'Team Aurora' });
  await page.getByLabel('Reason').fill('Former colleague');
  await page.getByRole('button', { name: 'Recuse' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Judge Bo is recused from Team Aurora.' })).toBeVisible();
  await expect(page.getByRole('region', { name: '1 declared' }).getByRole('row').nth(1)).toContainText('Former colleague');
  await page.getByRole('link', { name: 'Overview' }).click();
  await expect(stat(page, 'recused')).toHaveText('1');

  // A prize: it goes to the winner of the published ranking.
  await page.goto(`/e/${slug}/admin/prizes`);
  await expect(page.getByText('No prizes yet.')).toBeVisible();
  await page.getByLabel('Prize name').fill('Grand prize');
  await page.getByLabel('Place').fill('1');
  await page.getByRole('button', { name: 'Add prize' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Prize Grand prize added.' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Prizes' }).getByRole('row').nth(1)).toContainText('place 1 overall');
  await expect(page.getByLabel('Winner of Grand prize')).toHaveValue('');
  // The planning aid sits beside the prizes, labelled as such.
  await expect(page.getByRole('heading', { name: 'Where one more review matters' })).toBeVisible();
  await expect(page.getByText('A planning aid, not a ranking')).toBeVisible();

  // The public results show it, to anyone.
  const d = await gql(`query($e: String!) { event(slug: $e) { results { version final ranking { rank project { title } } } } }`, { e: slug });
  expect(d.event.results).toMatchObject({ version: 1, final: true });
  await page.goto(`/e/${slug}/admin/calibration`);
  await page.getByRole('link', { name: 'See the public results' }).first().click();
  await expect(page).toHaveURL(new RegExp(`/e/${slug}/results$`));
  await expect(page.getByText(winner).first()).toBeVisible();
  await expect(page.getByTestId('prizes')).toContainText(`Grand prize: ${winner} — 1st in the ranking`);
  guard.check();
});

test('an organizer assigns a judge by hand, is refused a second time, and unassigns', async ({ page }) => {
  const ev = await createEvent({ judging: 'open' });
  const p = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Pat Participant');
  await teamWithProject(ev.slug, p, 'Zephyr', ev.trackIds[0]);
  await person(ev.slug, 'JUDGE', ev.organizer.token, 'Judge Cy');
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/assignments`);
  await expect(page.getByText('No assignments yet.')).toBeVisible();
  await expect(page.getByLabel('Judge', { exact: true })).toContainText('Judge Cy');
  await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Zephyr' });
  await page.getByRole('button', { name: 'Assign', exact: true }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Judge Cy now reviews Zephyr.' })).toBeVisible();
  const current = page.getByRole('region', { name: '1 assignment' });
  await expect(current.getByRole('row').nth(1)).toContainText('manual');
  // The same pair again: the server's refusal, as it said it.
  await page.getByRole('button', { name: 'Assign', exact: true }).click();
  await expect(page.getByRole('alert')).toHaveAttribute('data-code', 'CONFLICT');
  await checkA11y(page, 'the assignments page with a refusal');
  await current.getByRole('button', { name: 'Unassign Judge Cy from Zephyr' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Judge Cy no longer reviews Zephyr.' })).toBeVisible();
  await expect(page.getByText('No assignments yet.')).toBeVisible();
});

test('the organizer pages show a non-organizer the refusal as the server says it', async ({ page }) => {
  const ev = await createEvent();
  const judge = await person(ev.slug, 'JUDGE', ev.organizer.token, 'Judge Nosy');
  await logIn(page, judge);
  for (const path of ['admin', 'admin/assignments', 'admin/calibration']) {
    await page.goto(`/e/${ev.slug}/${path}`);
    await expect(page.getByRole('alert')).toHaveAttribute('data-code', 'FORBIDDEN');
  }
  await checkA11y(page, 'a refused organizer page');
});
