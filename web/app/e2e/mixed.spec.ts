// A mixed event (issue 26): the Tools track judged by the rubric, the Games track both by
// the rubric and by comparisons on the expo floor. Two judges score, two others only
// compare. The organizer's leaderboard shows one ranking of both tracks with the same
// forest plot, the scoring judges' severity and the comparing judges' reliability (not an
// offset of zero), and moves live when a comparison is made; the organizer runs a
// calibration, publishes it, and the public results show the same mixed ranking.
import { expect, test, type Page } from '@playwright/test';
import { BASE, checkA11y, createEvent, gql, logIn, person, sameOriginOnly, snapshot, teamWithProject, type Person } from './support';

const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

// Tools projects are only scored; Games 1 and 2 are scored and compared (they tie the two
// kinds of judgment together); Games 3 and 4 are only compared. Quality, best first:
// Tools 1 > Games 1 > Tools 2 > Games 3 > Games 2 > Tools 3 > Games 4 > Tools 4.
const TOOLS = ['Anvil', 'Bellows', 'Chisel', 'Dowel'];
const GAMES = ['Meteor Rally', 'Nimbus Chess', 'Orbit Golf', 'Pixel Polo'];
const SCORE: Record<string, number> = { Anvil: 9, 'Meteor Rally': 8, Bellows: 7, 'Nimbus Chess': 5, Chisel: 4, Dowel: 2 };
/** Games by quality, best first: each comparison follows this order. */
const GAMES_ORDER = ['Meteor Rally', 'Orbit Golf', 'Nimbus Chess', 'Pixel Polo'];

type Mixed = { slug: string; organizer: Person; ids: Record<string, string>; comparers: Person[] };

async function compare(slug: string, judge: Person, better: string, worse: string) {
  await gql(`mutation($e: String!, $b: ID!, $w: ID!) { compareProjects(event: $e, better: $b, worse: $w) { id } }`, { e: slug, b: better, w: worse }, judge.token);
}

/** Every pair of the Games track in true order; the last pair of the second comparing
 *  judge is left for the story to make while the leaderboard is open. */
function pairs(): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < GAMES_ORDER.length; i++) for (let j = i + 1; j < GAMES_ORDER.length; j++) out.push([GAMES_ORDER[i], GAMES_ORDER[j]]);
  return out;
}

async function seedMixedEvent(): Promise<Mixed> {
  const ev = await createEvent({ submissions: 'open' });
  const org = ev.organizer.token;
  const [tools, games] = ev.trackIds;
  // Before judging opens: the Games track is judged both ways; Tools follows the event (scores).
  await gql(`mutation($e: String!, $t: ID) { setJudgingMode(event: $e, mode: BOTH, track: $t) { id } }`, { e: ev.slug, t: games }, org);
  const ids: Record<string, string> = {};
  for (const [titles, track] of [
    [TOOLS, tools],
    [GAMES, games],
  ] as const) {
    for (const title of titles) {
      const owner = await person(ev.slug, 'PARTICIPANT', org);
      ids[title] = (await teamWithProject(ev.slug, owner, title, track)).projectId;
    }
  }
  await gql(
    `mutation($e: String!, $i: UpdateEventInput!) { updateEvent(event: $e, input: $i) { id } }`,
    { e: ev.slug, i: { submissionsClose: at(-1), judgingOpen: at(-60), judgingClose: at(48 * 60) } },
    org,
  );
  const scorers = [await person(ev.slug, 'JUDGE', org, 'Judge Ada'), await person(ev.slug, 'JUDGE', org, 'Judge Bo')];
  const comparers = [await person(ev.slug, 'JUDGE', org, 'Judge Cy'), await person(ev.slug, 'JUDGE', org, 'Judge Di')];
  const members = await gql(`query($e: String!) { event(slug: $e) { members(role: JUDGE, first: 100) { nodes { id email } } } }`, { e: ev.slug }, org);
  const membership = new Map<string, string>(members.event.members.nodes.map((m: { id: string; email: string }) => [m.email.toLowerCase(), m.id]));
  // The scoring judges review every scored project; Bo is a point harsher than Ada.
  for (const [j, judge] of scorers.entries()) {
    for (const [title, score] of Object.entries(SCORE)) {
      const a = await gql(
        `mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }`,
        { e: ev.slug, j: membership.get(judge.email.toLowerCase()), p: ids[title] },
        org,
      );
      const s = score - j;
      await gql(
        `mutation($a: ID!, $s: [ScoreInput!]!) { saveReview(assignment: $a, scores: $s, submit: true) { id } }`,
        { a: a.assignJudge.id, s: [{ criterion: 'impact', value: s }, { criterion: 'craft', value: s }] },
        judge.token,
      );
    }
  }
  // The comparing judges walk the Games track: Cy compares all six pairs, Di five.
  const all = pairs();
  for (const [better, worse] of all) await compare(ev.slug, comparers[0], ids[better], ids[worse]);
  for (const [better, worse] of all.slice(0, -1)) await compare(ev.slug, comparers[1], ids[better], ids[worse]);
  return { slug: ev.slug, organizer: ev.organizer, ids, comparers };
}

/** Resolves once the page's websocket is acknowledged and has sent a subscription to `field`. */
function subscribed(page: Page, field: string): Promise<void> {
  return new Promise((resolve) => {
    page.on('websocket', (ws) => {
      let acked = false;
      ws.on('framereceived', (f) => {
        if (String(f.payload).includes('connection_ack')) acked = true;
      });
      ws.on('framesent', (f) => {
        if (String(f.payload).includes('"subscribe"') && String(f.payload).includes(field)) {
          const wait = () => (acked ? resolve() : setTimeout(wait, 50));
          wait();
        }
      });
    });
  });
}

test('a mixed event: scores and comparisons in one ranking on the leaderboard, in a run and in the public results', async ({ page, browser }, info) => {
  test.setTimeout(180_000);
  const guard = sameOriginOnly(page);
  const ev = await seedMixedEvent();
  const titles = [...TOOLS, ...GAMES];
  const [lastBetter, lastWorse] = pairs()[pairs().length - 1];

  // The live leaderboard: every project of both tracks in one ranking.
  await logIn(page, ev.organizer);
  const live = subscribed(page, 'leaderboardUpdated');
  await page.goto(`/e/${ev.slug}/admin/leaderboard`);
  const board = page.getByRole('region', { name: 'Leaderboard: projects by rank' });
  await expect(board.locator('tbody tr')).toHaveCount(titles.length);
  await expect(page.getByText(`${titles.length} of ${titles.length} projects ranked.`)).toBeVisible();
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
  // The forest plot draws every project, the compared-only ones included.
  await expect(page.locator('svg.forest .fp-row')).toHaveCount(titles.length);
  // A project only compared: no reviews, its comparisons counted; ranked like the others.
  await expect(board.getByRole('columnheader', { name: 'Comparisons' })).toBeVisible();
  const orbit = board.locator('tbody tr').filter({ hasText: 'Orbit Golf' });
  await expect(orbit.locator('td').first()).toHaveText(/^\d+$/);
  await expect(orbit.locator('td').nth(-2)).toHaveText('0');
  await expect(orbit.locator('td').last()).toHaveText('6');
  const anvil = board.locator('tbody tr').filter({ hasText: 'Anvil' });
  await expect(anvil.locator('td').nth(-2)).toHaveText('2');
  await expect(anvil.locator('td').last()).toHaveText('0');

  // Judges: the scoring ones with their severity, the comparing ones with their
  // reliability and comparisons, and no severity they never had.
  const judges = page.getByRole('region', { name: 'Leaderboard: judges' });
  await expect(judges.locator('tbody tr')).toHaveCount(4);
  const cy = judges.locator('tbody tr').filter({ hasText: 'Judge Cy' });
  const cells = (row: typeof cy) => row.locator('td');
  // Judge | Offset | Scale | Noise | Reviews | Comparisons | Reliability | Flag
  await expect(cells(cy).nth(1)).toHaveText('–');
  await expect(cells(cy).nth(3)).toHaveText('–');
  await expect(cells(cy).nth(4)).toHaveText('0');
  await expect(cells(cy).nth(5)).toHaveText('6');
  await expect(cells(cy).nth(6)).toHaveText(/^\d+ %$/);
  const ada = judges.locator('tbody tr').filter({ hasText: 'Judge Ada' });
  await expect(cells(ada).nth(1)).toHaveText(/^[−-]?\d+\.\d\d$/);
  await expect(cells(ada).nth(4)).toHaveText('6');
  await expect(cells(ada).nth(5)).toHaveText('0');
  await expect(cells(ada).nth(6)).toHaveText('–');
  await expect(page.getByRole('img', { name: /^Severity of 2 judges/ })).toBeVisible();
  await expect(page.getByRole('img', { name: /^Reliability of 2 judges who compared projects/ })).toBeVisible();
  await snapshot(page, info, 'mixed-leaderboard');
  await checkA11y(page, 'the leaderboard of a mixed event');

  // Live: Di makes the last comparison of the floor, and the leaderboard counts it
  // without a reload.
  await live;
  const di = judges.locator('tbody tr').filter({ hasText: 'Judge Di' });
  const nimbus = board.locator('tbody tr').filter({ hasText: 'Nimbus Chess' });
  await expect(cells(di).nth(5)).toHaveText('5');
  await expect(nimbus.locator('td').last()).toHaveText('5');
  await compare(ev.slug, ev.comparers[1], ev.ids[lastBetter], ev.ids[lastWorse]);
  await expect(cells(di).nth(5)).toHaveText('6');
  await expect(nimbus.locator('td').last()).toHaveText('6');
  await expect(page.getByRole('alert'), 'no refusal, of the query or of the live feed').toHaveCount(0);

  // A calibration run of the same inputs, read on the calibration page, then published.
  await page.goto(`/e/${ev.slug}/admin/calibration`);
  await page.getByLabel('Seed').fill('7');
  await page.getByLabel('Bootstrap').fill('100');
  await page.getByRole('button', { name: 'Run calibration' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'The run is computed and stored, signed.' })).toBeVisible();
  await expect(page.locator('.run-facts')).toContainText('verdict-calibrate/8');
  const run = page.getByRole('region', { name: 'This run: projects by rank' });
  await expect(run.locator('tbody tr')).toHaveCount(titles.length);
  await expect(page.locator('figure.plot').filter({ hasText: 'This run: calibrated quality' }).locator('svg.forest .fp-row')).toHaveCount(titles.length);
  await expect(page.getByRole('region', { name: 'This run: judges' }).locator('tbody tr')).toHaveCount(4);
  await expect(page.getByRole('img', { name: /^Reliability of 2 judges who compared projects/ })).toBeVisible();
  await expect(page.getByTestId('run-summary')).toContainText('comparison');
  const order = (await run.locator('tbody tr th').allInnerTexts()).map((t) => titles.find((x) => t.startsWith(x)));
  // Scores and comparisons each keep their own order inside the one ranking.
  const before = (a: string, b: string) => expect(order.indexOf(a), `${a} ranks above ${b}: ${order.join(', ')}`).toBeLessThan(order.indexOf(b));
  before('Anvil', 'Dowel');
  before('Meteor Rally', 'Nimbus Chess');
  before('Orbit Golf', 'Pixel Polo');
  before('Meteor Rally', 'Pixel Polo');
  await checkA11y(page, 'the calibration page with a mixed run');

  await page.getByLabel('Final results').check();
  await page.getByRole('button', { name: 'Publish this run…' }).click();
  await page.getByRole('group', { name: /Publish this run as version 1, final\?/ }).getByRole('button', { name: 'Confirm: publish final results' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Published version 1 (final).' })).toBeVisible();
  guard.check();

  // The public results, to anyone: the same ranking, the same plot, comparisons counted.
  const visitorContext = await browser.newContext({ baseURL: BASE });
  const visitor = await visitorContext.newPage();
  await visitor.goto(`/e/${ev.slug}/results`);
  await expect(visitor.locator('.results-meta .badge')).toHaveText('final');
  const ranking = visitor.getByRole('table', { name: 'The ranking' });
  await expect(ranking.locator('tbody tr')).toHaveCount(titles.length);
  expect((await ranking.locator('tbody tr th').allInnerTexts()).map((t) => titles.find((x) => t.startsWith(x)))).toEqual(order);
  await expect(visitor.locator('svg.forest .fp-row')).toHaveCount(titles.length);
  await expect(visitor.locator('svg.forest')).toHaveAttribute('aria-label', new RegExp(`${titles.length} ranked projects`));
  await expect(visitor.locator('.podium li')).toHaveCount(3);
  await expect(visitor.locator('.podium li .title').first()).toHaveText(order[0]!);
  await expect(visitor.getByText('compared them two at a time')).toBeVisible();
  await expect(ranking.getByRole('columnheader', { name: 'Comparisons' })).toBeVisible();
  await expect(ranking.locator('tbody tr').filter({ hasText: 'Orbit Golf' }).locator('td').last()).toHaveText('6');
  await checkA11y(visitor, 'the public results of a mixed event');
  await snapshot(visitor, info, 'mixed-results');
  await visitorContext.close();
});
