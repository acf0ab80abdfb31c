// Forms that lose nothing and refuse as a person would say it: a draft survives a reload
// and leaving asks first; a closed window disables the form and says why before anyone
// types; a refusal is a sentence beside the field it names; the event form's slug pattern
// works in Chromium; titles name the event; long titles do not push a table's numbers off
// a phone.
import { expect, test, type Page } from '@playwright/test';
import { judgingEvent } from './judge-seed';
import { publicFixture } from './public-seed';
import { adminToken, checkA11y, createEvent, gql, logIn, person, PHONE, snapshot, teamWithProject, unique } from './support';

const hours = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
const UPDATE = `mutation($e: String!, $i: UpdateEventInput!) { updateEvent(event: $e, input: $i) { id } }`;

async function fits(page: Page, what: string) {
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll, `${what} scrolls sideways`).toBeLessThanOrEqual(inner);
}

test("a participant's unsaved project survives a reload, leaving asks first, and saving drops the draft", async ({ page }) => {
  const ev = await createEvent();
  const pat = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Dana Draft');
  await teamWithProject(ev.slug, pat, unique('Kite'), ev.trackIds[0], { draft: true });
  await logIn(page, pat);
  await page.goto(`/e/${ev.slug}/my-project`);
  // The title names the event, so two events in two tabs differ.
  await expect(page).toHaveTitle(`My project · Browser ${ev.slug} · Verdict`);

  const tagline = page.getByLabel('Tagline');
  await tagline.fill('Words nobody saved yet');
  await page.getByLabel('Summary').fill('A summary typed and not saved.');

  // An in-app link asks first; staying keeps the page and the text.
  const asked: string[] = [];
  page.once('dialog', (d) => {
    asked.push(d.type());
    void d.dismiss();
  });
  await page.getByRole('navigation', { name: 'Event' }).getByRole('link', { name: 'My team' }).click();
  await expect.poll(() => asked).toEqual(['confirm']);
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/my-project$`));
  await expect(tagline).toHaveValue('Words nobody saved yet');

  // A reload warns (beforeunload), and once through, the text is back with a note.
  page.once('dialog', (d) => {
    asked.push(d.type());
    void d.accept();
  });
  await page.reload();
  await expect(page.getByRole('status').filter({ hasText: 'restored your unsaved changes' })).toBeVisible();
  await expect(page.getByLabel('Tagline')).toHaveValue('Words nobody saved yet');
  await expect(page.getByLabel('Summary')).toHaveValue('A summary typed and not saved.');
  expect(asked).toEqual(['confirm', 'beforeunload']);
  await checkA11y(page, 'my project with a restored draft');

  // Saved: the draft is gone, a reload shows the server's text and no note, nothing asks.
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Your changes are saved' })).toBeVisible();
  await expect.poll(() => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('verdict.draft.')))).toEqual([]);
  await page.reload();
  await expect(page.getByLabel('Tagline')).toHaveValue('Words nobody saved yet');
  await expect(page.getByText('restored your unsaved changes')).toHaveCount(0);
});

test('after the deadline the project form says closed before anyone types; outside judging the review form too', async ({ page }) => {
  const ev = await createEvent();
  const pat = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Lou Late');
  await teamWithProject(ev.slug, pat, unique('Clock'), ev.trackIds[0], { draft: true });
  await gql(UPDATE, { e: ev.slug, i: { submissionsOpen: hours(-48), submissionsClose: hours(-0.01) } }, ev.organizer.token);
  await logIn(page, pat);
  await page.goto(`/e/${ev.slug}/my-project`);
  await expect(page.getByTestId('window-closed')).toContainText('Submissions closed');
  await expect(page.getByLabel('Tagline')).not.toBeEditable();
  await expect(page.getByLabel('Title')).not.toBeEditable();
  await expect(page.getByLabel('Track')).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Save changes' })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Submit project' })).toBeDisabled();
  await checkA11y(page, 'my project after the deadline');

  const jev = await judgingEvent({ judges: 1, projects: 1, perJudge: 1 });
  await jev.setJudging('closed');
  const judge = jev.judges[0];
  await logIn(page, judge);
  await page.goto(`/e/${jev.slug}/judge/${judge.assignments[0].id}`);
  await expect(page.getByText('Judging is closed')).toBeVisible();
  await expect(page.getByRole('group', { name: /^Impact/ }).getByRole('radio').first()).toBeDisabled();
  await expect(page.getByLabel('Comment (optional)')).not.toBeEditable();
  await expect(page.getByRole('button', { name: 'Submit review' })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Save draft' })).toBeDisabled();
  await checkA11y(page, 'a review form outside the judging window');
});

test("a judge's unsaved scores and comment survive a reload", async ({ page }) => {
  const ev = await judgingEvent({ judges: 1, projects: 1, perJudge: 1 });
  const judge = ev.judges[0];
  await logIn(page, judge);
  await page.goto(`/e/${ev.slug}/judge/${judge.assignments[0].id}`);
  await expect(page).toHaveTitle(`${judge.assignments[0].title} · Browser ${ev.slug} · Verdict`);
  await page.getByRole('group', { name: /^Impact/ }).getByRole('radio', { name: '7', exact: true }).check();
  await page.getByLabel('Comment (optional)').fill('Half a thought');
  page.once('dialog', (d) => void d.accept());
  await page.reload();
  await expect(page.getByRole('status').filter({ hasText: 'restored your unsaved changes' })).toBeVisible();
  await expect(page.getByRole('group', { name: /^Impact/ }).getByRole('radio', { name: '7', exact: true })).toBeChecked();
  await expect(page.getByLabel('Comment (optional)')).toHaveValue('Half a thought');
  await page.getByRole('group', { name: /^Craft/ }).getByRole('radio', { name: '4', exact: true }).check();
  await page.getByRole('button', { name: 'Submit review' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Review submitted' })).toBeVisible();
  await expect.poll(() => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('verdict.draft.')))).toEqual([]);
});

test('a refusal is a sentence beside the field it names, never a raw code', async ({ page }) => {
  const ev = await createEvent();
  const pat = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Tia Tags');
  await teamWithProject(ev.slug, pat, unique('Lamp'), ev.trackIds[0], { draft: true });

  // Log-in: no "UNAUTHENTICATED wrong email or password".
  await page.goto('/login');
  await page.getByLabel('Email').fill(pat.email);
  await page.getByLabel('Password').fill('not-the-password-at-all');
  await page.getByRole('button', { name: 'Log in' }).click();
  const alert = page.getByRole('alert');
  await expect(alert).toHaveText('That email and password do not match an account. Check both and try again.');
  await expect(alert).not.toContainText('UNAUTHENTICATED');

  await logIn(page, pat);
  await page.goto(`/e/${ev.slug}/my-project`);
  const tags = page.getByLabel('Tags');
  await tags.fill('a, b, c, d, e, f, g, h, i, j, k');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('alert')).toHaveText('At most 10 tags are allowed.');
  await expect(tags).toHaveAttribute('aria-invalid', 'true');
  await expect(tags).toHaveAccessibleDescription(/At most 10 tags are allowed\./);
  await expect(page.getByLabel('Title')).not.toHaveAttribute('aria-invalid', 'true');
  await checkA11y(page, 'a refused project form');

  // The rubric: the criterion's bounds, named by the form's own label.
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/rubric`);
  await expect(page).toHaveTitle(`Rubric · Browser ${ev.slug} · Verdict`);
  await page.getByLabel('Key').fill('polish');
  await page.getByLabel('Criterion name').fill('Polish');
  await page.getByLabel('Lowest score').fill('5');
  await page.getByLabel('Highest score').fill('3');
  await page.getByRole('button', { name: 'Add criterion' }).click();
  const refused = page.getByRole('alert');
  await expect(refused).toContainText(/^Highest score must be/);
  await expect(refused).not.toContainText('BAD_USER_INPUT');
  await expect(page.getByLabel('Highest score')).toHaveAttribute('aria-invalid', 'true');
  await checkA11y(page, 'a refused criterion');

  // Removing a criterion asks first (the client's one Confirm), its "yes" focused.
  await page.getByRole('button', { name: 'Remove craft' }).click();
  const yes = page.getByRole('button', { name: 'Confirm removal of craft' });
  await expect(yes).toBeFocused();
  await checkA11y(page, 'the rubric asking before a removal');
  await yes.click();
  await expect(page.getByRole('status').filter({ hasText: 'Criterion craft removed.' })).toBeVisible();
});

test("the event form's slug pattern is valid under the v flag and the browser enforces it", async ({ page }) => {
  await logIn(page, { email: process.env.VERDICT_ADMIN_EMAIL!, password: process.env.VERDICT_ADMIN_PASSWORD! });
  await page.goto('/new-event');
  const slug = page.getByLabel('Slug');
  const pattern = await slug.getAttribute('pattern');
  // Chromium compiles `pattern` with the v flag; an invalid one is ignored silently.
  expect(await page.evaluate((p) => { try { new RegExp(`^(?:${p})$`, 'v'); return true; } catch { return false; } }, pattern)).toBe(true);
  await slug.fill('Not A Slug!');
  expect(await slug.evaluate((el: HTMLInputElement) => el.validity.patternMismatch)).toBe(true);
  await slug.fill('-leading-dash');
  expect(await slug.evaluate((el: HTMLInputElement) => el.validity.patternMismatch)).toBe(true);
  await slug.fill('spring-hack-2027');
  expect(await slug.evaluate((el: HTMLInputElement) => el.validity.patternMismatch)).toBe(false);
});

test.describe('on a phone', () => {
  test.use(PHONE);

  test("a control reached with the keyboard scrolls clear of the judge's sticky Save/Submit bar", async ({ page }, testInfo) => {
    const ev = await judgingEvent({ judges: 1, projects: 1, perJudge: 1 });
    const judge = ev.judges[0];
    await logIn(page, judge);
    await page.goto(`/e/${ev.slug}/judge/${judge.assignments[0].id}`);
    const bar = page.locator('.judge-bar');
    await expect(bar).toBeVisible();
    for (const next of [page.getByRole('group', { name: /^Craft/ }).getByRole('radio').first(), page.getByLabel('Comment (optional)')]) {
      // From the top of the page, Tab until the control has focus, as a keyboard user would.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.getByRole('heading', { level: 1 }).click();
      for (let i = 0; i < 60 && !(await next.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
      await expect(next).toBeFocused();
      const box = (await next.boundingBox())!;
      const barBox = (await bar.boundingBox())!;
      expect(box.y, 'the focused control is on screen').toBeGreaterThanOrEqual(0);
      expect(box.y + Math.min(box.height, 40), 'the focused control is under the sticky bar').toBeLessThanOrEqual(barBox.y);
    }
    // Issue 28, "focused controls scrolled clear of sticky bars": the comment field, focused.
    await page.screenshot({ path: testInfo.outputPath('issue28-focus-clear-of-sticky-bar.png') });
  });

  test("a long unbroken title wraps in full and keeps the ranking's, leaderboard's and assignments' columns on a 390 px screen", async ({ page }, testInfo) => {
    const token = await adminToken();
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const fixture = publicFixture(tag);
    const long = `Supercalifragilisticexpialidocious${'Hyperloop'.repeat(8)}`;
    fixture.projects[0].title = long;
    const imported = await gql(`mutation($f: JSON!) { importEvent(fixture: $f) { event { slug } } }`, { f: fixture }, token);
    const slug: string = imported.importEvent.event.slug;
    const run = await gql(`mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id } }`, { e: slug }, token);
    await gql(`mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r, final: true) { version } }`, { e: slug, r: run.runCalibration.id }, token);

    await page.goto(`/e/${slug}/results`);
    const table = page.getByRole('table', { name: 'The ranking' });
    const row = table.getByRole('row').filter({ hasText: long });
    await expect(row).toBeVisible();
    // The full title is there, wrapped, and every number column is on screen.
    await expect(row.getByRole('rowheader')).toContainText(long);
    for (const cell of await row.getByRole('cell').all()) {
      if (!(await cell.isVisible())) continue;
      const box = (await cell.boundingBox())!;
      expect(box.x + box.width, 'a cell past the right edge').toBeLessThanOrEqual(390);
    }
    await fits(page, 'the public results');
    await checkA11y(page, 'the public results on a phone');
    // Issue 28, "long words wrap" and "390 px tables": the public ranking on a phone.
    await snapshot(page, testInfo, 'issue28-long-words-wrap');

    await logIn(page, { email: process.env.VERDICT_ADMIN_EMAIL!, password: process.env.VERDICT_ADMIN_PASSWORD! });
    await page.goto(`/e/${slug}/admin/leaderboard`);
    const board = page.getByRole('row').filter({ hasText: long }).first();
    await expect(board).toBeVisible();
    const last = board.getByRole('cell').last();
    const box = (await last.boundingBox())!;
    const wrap = (await page.locator('.table-wrap').first().boundingBox())!;
    expect(box.x + box.width, "the leaderboard's last column is past its frame").toBeLessThanOrEqual(wrap.x + wrap.width + 1);
    await fits(page, 'the leaderboard');

    // The assignments: the long title's rows wrap, the status column stays on screen.
    await page.goto(`/e/${slug}/admin/assignments`);
    const assigned = page.getByRole('row').filter({ hasText: long }).first();
    await expect(assigned).toBeVisible();
    const status = (await assigned.getByRole('cell').nth(2).boundingBox())!;
    expect(status.x + status.width, 'the status column is past the screen').toBeLessThanOrEqual(390);
    await fits(page, 'the assignments');
    await snapshot(page, testInfo, 'issue28-tables-390px');
  });
});
