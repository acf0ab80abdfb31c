// The public pages as an anonymous visitor sees them: events, an event, its gallery, a
// project, the published results with the forest plot, and the verify page.
import { expect, test } from '@playwright/test';
import { HOSTILE, publishAgain, seedPublishedEvent, type PublicSeed } from './public-seed';
import { adminToken, BASE, checkA11y, createEvent, gql, logIn, PASSWORD, person, PHONE, sameOriginOnly, snapshot, teamWithProject, unique } from './support';

let seed: PublicSeed;
test.beforeAll(async () => {
  seed = await seedPublishedEvent();
});

test('an anonymous visitor reads the podium and the forest plot, and the page makes no request to any other origin', async ({ page }, testInfo) => {
  const guard = sameOriginOnly(page);

  // Every event, with the seeded one among them.
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1, name: 'Events' })).toBeVisible();
  const card = page.locator('.event-card', { has: page.getByRole('link', { name: seed.name }) });
  // Other stories make events on the same server: page on until this one is listed.
  await expect(page.locator('.event-card').first()).toBeVisible();
  while ((await card.count()) === 0) {
    const more = page.getByRole('button', { name: /Load more/ });
    await expect(more, `the seeded event ${seed.slug} is listed`).toBeVisible();
    const shown = await page.locator('.event-card').count();
    await more.click();
    await expect(page.locator('.event-card')).not.toHaveCount(shown);
  }
  await expect(card).toContainText('8 submitted');
  await expect(page.getByRole('link', { name: 'New event' })).toHaveCount(0);
  await checkA11y(page, 'the events page');

  // The event.
  await card.getByRole('link', { name: seed.name }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${seed.slug}$`));
  await expect(page.getByRole('heading', { level: 1, name: seed.name })).toBeVisible();
  await expect(page.getByText('Every window of this event has closed.')).toBeVisible();
  await expect(page.getByRole('link', { name: '8 submitted projects' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Final results' })).toBeVisible();
  await expect(page.getByRole('button', { name: /Register/ })).toHaveCount(0);
  await checkA11y(page, 'the event page');

  // The gallery: all eight, then one track, then a search.
  await page.getByRole('link', { name: '8 submitted projects' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Projects');
  const cards = page.locator('.project-card');
  await expect(cards).toHaveCount(8);
  await checkA11y(page, 'the gallery');
  await page.getByLabel('Track').selectOption({ label: 'Climate' });
  await expect(cards).toHaveCount(4);
  await expect(cards.first()).toContainText('Climate');
  await expect(page.getByText('4 submitted projects in this track.')).toBeVisible();
  await page.getByLabel('Track').selectOption({ label: 'All tracks' });
  await expect(cards).toHaveCount(8);
  await page.getByLabel('Search').fill('bee sensor');
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toContainText('Bee Sensor Kit');
  await page.getByLabel('Search').fill('energy');
  await expect(cards).toHaveCount(4);
  await page.getByLabel('Search').fill('Team Seed');
  await expect(cards).toHaveCount(1);
  await page.getByLabel('Search').fill('');

  // A project whose description carries markup: shown as text, never run.
  await cards.filter({ hasText: 'Solar Ledger' }).getByRole('link', { name: 'Solar Ledger' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Solar Ledger' })).toBeVisible();
  const description = page.locator('.description').last();
  await expect(description).toHaveText(HOSTILE);
  await expect(description.locator('b, script')).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  const source = page.getByRole('link', { name: 'Source code' });
  await expect(source).toHaveAttribute('href', /^https:\/\/example\.org\//);
  await expect(source).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(page.getByText('Team Solar Ledger')).toBeVisible();
  await checkA11y(page, 'a project page');

  // The results: podium in rank order, one forest row per ranked project, the table.
  await page.goto(`/e/${seed.slug}/results`);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Results');
  await expect(page.locator('.results-meta .badge')).toHaveText('final');
  const top = seed.ranking.filter((r) => r.rank <= 3).map((r) => r.title);
  expect(top.length).toBeGreaterThanOrEqual(3);
  await expect(page.locator('.podium li .title')).toHaveText(top);
  // How sure each podium place is, and the order of neighbouring places (from the run's
  // posterior draws, public with the results).
  await expect(page.getByTestId('place-odds')).toHaveCount(top.length);
  await expect(page.getByTestId('place-odds').first()).toContainText(/^1st in \d+% of \d+ plausible rankings$/);
  await expect(page.getByTestId('podium-order').getByRole('listitem')).toHaveCount(top.length - 1);
  await expect(page.getByTestId('podium-order').getByRole('listitem').first()).toContainText(`${top[0]} ahead of ${top[1]}: `);
  // The prizes go to the published ranking's places.
  const prizes = page.getByTestId('prizes').getByRole('listitem');
  await expect(prizes).toHaveCount(2);
  await expect(prizes.first()).toContainText(`Grand prize: ${top[0]} — 1st in the ranking, `);
  await expect(prizes.nth(1)).toContainText(`Runner-up: ${top[1]} — 2nd in the ranking`);
  const ranked = seed.ranking.length;
  expect(ranked).toBeGreaterThanOrEqual(6);
  await expect(page.locator('svg.forest .fp-row')).toHaveCount(ranked);
  await expect(page.locator('svg.forest')).toHaveAttribute('aria-label', new RegExp(`${ranked} ranked projects`));
  await expect(page.getByRole('table').locator('tbody tr')).toHaveCount(seed.ranking.length);
  await checkA11y(page, 'the results page');
  await snapshot(page, testInfo, 'results');

  // Verify: the page's fingerprint is the one the well-known address serves.
  await page.getByRole('link', { name: 'Verify these results' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Verify the results');
  const resp = await page.request.get(`${BASE}/.well-known/verdict-signing-key`);
  const fingerprint = resp.headers()['x-signing-key-fingerprint'];
  expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
  const list = page.locator('.verify-list');
  await expect(list.first().locator('dd').nth(1).locator('code')).toHaveText(fingerprint);
  await expect(page.getByText('matches this deployment’s key')).toBeVisible();
  await expect(page.locator('pre').last()).toContainText(`verdict results export --event ${seed.slug} bundle/`);
  await expect(page.locator('pre').last()).toContainText('verdict results verify bundle/');
  expect((await page.locator('[data-testid="public-key"]').textContent())?.trim()).toBe((await resp.text()).trim());
  await checkA11y(page, 'the verify page');

  // An unknown event says so.
  await page.goto('/e/no-such-event-here');
  await expect(page.getByRole('heading', { level: 1, name: 'No such event' })).toBeVisible();
  await page.goto('/e/no-such-event-here/results');
  await expect(page.getByRole('heading', { level: 1, name: 'No such event' })).toBeVisible();

  guard.check();
});

test('a signed-in visitor registers for an event with open registration', async ({ page }) => {
  const guard = sameOriginOnly(page);
  const ev = await createEvent();
  await gql(`mutation($e: String!) { updateEvent(event: $e, input: { registration: OPEN }) { id } }`, { e: ev.slug }, await adminToken());
  const who = { email: `${unique('visitor')}@example.org`, password: PASSWORD };
  await gql(`mutation($e: String!, $p: String!) { signUp(email: $e, password: $p, displayName: "Vera Visitor") { token } }`, { e: who.email, p: who.password });

  // Anonymous: asked to log in first.
  await page.goto(`/e/${ev.slug}`);
  await expect(page.getByText(/Open: anyone with an account may register/)).toBeVisible();
  await expect(page.getByRole('main').getByRole('link', { name: 'Log in' })).toBeVisible();
  await expect(page.getByText(/Submissions close in/)).toBeVisible();

  await logIn(page, who);
  await page.goto(`/e/${ev.slug}`);
  await page.getByRole('button', { name: 'Register as a participant' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'You are registered as a participant' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Register as a participant' })).toHaveCount(0);
  await expect(page.getByRole('navigation', { name: 'Event' }).getByRole('link', { name: 'My team' })).toBeVisible();
  await expect(page.locator('.role-list').getByRole('link', { name: 'My project' })).toBeVisible();
  await checkA11y(page, 'the event page of a participant');
  guard.check();
});

test('a visitor comments on a project, markup stays text, and an organizer hides the comment', async ({ page, browser }) => {
  const guard = sameOriginOnly(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const ev = await createEvent();
  const maker = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Mia Maker');
  const { projectId } = await teamWithProject(ev.slug, maker, 'Comment Board', ev.trackIds[0]);
  const who = { email: `${unique('commenter')}@example.org`, password: PASSWORD };
  await gql(`mutation($e: String!, $p: String!) { signUp(email: $e, password: $p, displayName: "Cory Commenter") { token } }`, { e: who.email, p: who.password });
  const path = `/e/${ev.slug}/projects/${encodeURIComponent(projectId)}`;

  // Anonymous: an empty thread and a way to log in.
  await page.goto(path);
  await expect(page.getByRole('heading', { level: 2, name: 'Comments' })).toBeVisible();
  await expect(page.getByText('No comments yet.')).toBeVisible();
  await expect(page.getByLabel('Your comment')).toHaveCount(0);

  // Signed in: a comment full of markup is posted and shown as the text it is.
  await logIn(page, who);
  await page.goto(path);
  const markup = '<img src=x onerror="window.__pwned=1"><b>bold?</b> <script>window.__pwned=2</script>\nsecond line';
  await page.getByLabel('Your comment').fill(markup);
  await page.getByRole('button', { name: 'Post comment' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Your comment was posted.' })).toBeVisible();
  const comment = page.getByTestId('comment');
  await expect(comment).toHaveCount(1);
  await expect(comment.locator('.comment-body')).toHaveText(markup);
  await expect(comment.locator('.comment-author')).toHaveText('Cory Commenter');
  await expect(page.locator('.comments').locator('img, b, script')).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  await expect(comment.getByRole('button', { name: 'Hide' })).toHaveCount(0);
  await checkA11y(page, 'a project page with its comments');

  // The organizer hides it, with a reason; they still read what it said.
  const orgContext = await browser.newContext({ baseURL: BASE });
  const orgPage = await orgContext.newPage();
  await logIn(orgPage, ev.organizer);
  await orgPage.goto(path);
  const item = orgPage.getByTestId('comment');
  await item.getByRole('button', { name: 'Hide' }).click();
  await item.getByLabel('Reason for hiding').fill('Markup spam');
  await item.getByRole('button', { name: 'Hide comment' }).click();
  await expect(item.getByTestId('comment-hidden-note')).toHaveText('Hidden by the organizers: Markup spam');
  await expect(item.locator('.comment-body')).toHaveText(markup);
  await expect(item.getByRole('button', { name: 'Hide' })).toHaveCount(0);
  await orgContext.close();

  // The public sees a placeholder in its place, without the body.
  const anonContext = await browser.newContext({ baseURL: BASE });
  const anonPage = await anonContext.newPage();
  await anonPage.goto(path);
  const placeholder = anonPage.getByTestId('comment');
  await expect(placeholder.getByTestId('comment-hidden-note')).toHaveText('This comment was hidden by the organizers.');
  await expect(placeholder.locator('.comment-author')).toHaveText('Cory Commenter');
  await expect(placeholder.locator('.comment-body')).toHaveCount(0);
  await expect(anonPage.locator('.comments')).not.toContainText('bold?');
  await anonContext.close();

  // The author reads the reason.
  await page.reload();
  await expect(comment.getByTestId('comment-hidden-note')).toHaveText('Hidden by the organizers: Markup spam');
  expect(dialogs, 'no script ran').toEqual([]);
  guard.check();
});

test('the results page follows a new publication live', async ({ page }) => {
  const guard = sameOriginOnly(page);
  const provisional = await seedPublishedEvent({ final: false });
  // The subscription is live once the socket was acknowledged and the subscribe frame sent.
  const subscribed = new Promise<void>((resolve) => {
    page.on('websocket', (ws) => {
      let acked = false;
      ws.on('framereceived', (f) => {
        if (String(f.payload).includes('connection_ack')) acked = true;
      });
      ws.on('framesent', (f) => {
        if (String(f.payload).includes('"subscribe"') && String(f.payload).includes('resultsPublished')) {
          const wait = () => (acked ? resolve() : setTimeout(wait, 50));
          wait();
        }
      });
    });
  });
  await page.goto(`/e/${provisional.slug}/results`);
  await expect(page.locator('.results-meta .badge')).toHaveText('provisional');
  await expect(page.locator('.results-meta')).toContainText('Version 1');
  await expect(page.locator('svg.forest .fp-row')).toHaveCount(provisional.ranking.length);
  await subscribed;
  const version = await publishAgain(provisional.slug, true);
  expect(version).toBe(2);
  await expect(page.locator('.results-meta .badge')).toHaveText('final');
  await expect(page.locator('.results-meta')).toContainText('Version 2');
  await expect(page.getByRole('status').filter({ hasText: 'Version 2 was just published' })).toBeVisible();
  guard.check();
});

test.describe('on a phone', () => {
  test.use(PHONE);
  test('the results fit a 390 px screen', async ({ page }, testInfo) => {
    const guard = sameOriginOnly(page);
    await page.goto(`/e/${seed.slug}/results`);
    await expect(page.locator('svg.forest .fp-row')).toHaveCount(seed.ranking.length);
    await expect(page.locator('.podium li')).toHaveCount(seed.ranking.filter((r) => r.rank <= 3).length);
    const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    expect(fits, 'nothing wider than the viewport').toBe(true);
    await checkA11y(page, 'the results page on a phone');
    await snapshot(page, testInfo, 'results-phone');
    await page.goto(`/e/${seed.slug}/verify`);
    await expect(page.getByRole('heading', { level: 1 })).toContainText('Verify');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'verify page fits').toBe(true);
    guard.check();
  });
});
