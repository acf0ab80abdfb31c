// Live pages over a socket that drops: the client reconnects with backoff and refetches
// what it missed while it was away, without a reload.
import { expect, test, type Page, type WebSocketRoute } from '@playwright/test';
import { judgingEvent } from './judge-seed';
import { gql, logIn } from './support';

function stat(page: Page, label: string) {
  return page
    .locator('.stat')
    .filter({ hasText: new RegExp(`^\\s*\\d+\\s+${label}\\s*$`) })
    .locator('strong');
}

test('a dropped socket comes back and the overview catches up on what it missed', async ({ page }) => {
  const ev = await judgingEvent({ projects: 2, judges: 1, perJudge: 2 });
  const judge = ev.judges[0];

  // Every socket the page opens goes through here: the first is passed on to Verdict, then
  // dropped; while `down`, new attempts are refused; after that they pass again.
  // The page's messages are passed on by hand, to notice when a socket is live: the client
  // subscribes only once Verdict acknowledged the connection and the page took it as live,
  // and only a live socket that drops is "reconnecting". (Counting Verdict's
  // connection_ack instead raced the page: the ack could still be on its way to it.)
  let down = false;
  let opened = 0;
  let subscribed = 0;
  const sockets: WebSocketRoute[] = [];
  await page.routeWebSocket(/\/graphql\/ws$/, (ws) => {
    if (down) {
      ws.close({ code: 1012, reason: 'test: server restarting' });
      return;
    }
    opened++;
    sockets.push(ws);
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      if (typeof message === 'string' && message.includes('"subscribe"')) subscribed++;
      server.send(message);
    });
  });

  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin`);
  await expect(stat(page, 'assignments')).toHaveText('2');
  await expect(stat(page, 'done')).toHaveText('0');
  await expect.poll(() => subscribed).toBeGreaterThan(0);
  let navigations = 0;
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) navigations++;
  });

  // The drop: the page says it is reconnecting.
  down = true;
  for (const ws of sockets.splice(0)) await ws.close({ code: 1012, reason: 'test: dropped' });
  await expect(page.getByRole('status').filter({ hasText: 'reconnecting' })).toBeVisible();

  // A review lands while the page cannot hear of it.
  const [a] = judge.assignments;
  await gql(
    `mutation($a: ID!, $s: [ScoreInput!]!) { saveReview(assignment: $a, scores: $s, submit: true) { id } }`,
    { a: a.id, s: [{ criterion: 'impact', value: 7 }, { criterion: 'craft', value: 6 }] },
    judge.token,
  );
  await page.waitForTimeout(1500);
  await expect(stat(page, 'done')).toHaveText('0');

  // Back up: the page reconnects by itself and refetches, without a reload.
  const before = opened;
  down = false;
  await expect.poll(() => opened, { timeout: 40_000 }).toBeGreaterThan(before);
  await expect(stat(page, 'done')).toHaveText('1', { timeout: 20_000 });
  await expect(page.getByRole('status').filter({ hasText: 'reconnecting' })).toHaveCount(0);

  // And it is live again: the next review arrives over the socket.
  await gql(
    `mutation($a: ID!, $s: [ScoreInput!]!) { saveReview(assignment: $a, scores: $s, submit: true) { id } }`,
    { a: judge.assignments[1].id, s: [{ criterion: 'impact', value: 5 }, { criterion: 'craft', value: 5 }] },
    judge.token,
  );
  await expect(stat(page, 'done')).toHaveText('2');
  expect(navigations, 'the page was never reloaded').toBe(0);
});
