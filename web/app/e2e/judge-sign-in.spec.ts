// A judge's standing sign-in (issue 28): an organizer issues a judge's link and code on the
// People page (shown once), the judge opens the link on a phone and with one tap lands
// signed in on their judging queue; a revoked link says so at once; the code works too;
// the session it starts cannot change the password.
import { expect, test } from '@playwright/test';
import { judgingEvent } from './judge-seed';
import { checkA11y, logIn, PHONE, snapshot } from './support';

test('an organizer issues a judge a standing link; on a phone it signs the judge in with one tap', async ({ page, browser }, testInfo) => {
  const ev = await judgingEvent({ projects: 1, judges: 1, perJudge: 1 });
  const judge = ev.judges[0];
  await logIn(page, ev.organizer);
  await page.goto(`/e/${ev.slug}/admin/people`);
  const row = page.getByRole('region', { name: 'Members', exact: true }).getByRole('row').filter({ hasText: judge.email });
  await expect(row).toContainText('No sign-in link.');
  await row.getByRole('button', { name: `Issue sign-in link for ${judge.name}` }).click();
  const handout = row.getByRole('status', { name: `Sign-in link for ${judge.name}` });
  await expect(handout).toContainText('Shown once');
  const link = (await handout.getByTestId('judge-link').textContent()) ?? '';
  const code = (await handout.getByTestId('judge-code').textContent()) ?? '';
  expect(link).toMatch(/\/judge-sign-in\/vjs_[A-Za-z0-9_-]+$/);
  expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
  await expect(handout.getByRole('img', { name: `QR code of ${judge.name}'s sign-in link` })).toBeVisible();
  await checkA11y(page, 'the People page with a judge sign-in link');
  await snapshot(page, testInfo, 'judge-sign-in-issued');

  // The judge, on a phone, opens the link: it says what it is, one tap signs in.
  const phone = await browser.newContext({ ...PHONE, baseURL: testInfo.project.use.baseURL });
  const judgePage = await phone.newPage();
  await judgePage.goto(new URL(link).pathname);
  await expect(judgePage.getByTestId('link-summary')).toContainText('as a judge of');
  await checkA11y(judgePage, 'a judge sign-in link');
  await snapshot(judgePage, testInfo, 'judge-sign-in-link-phone');
  await judgePage.getByRole('button', { name: 'Start judging' }).tap();
  await expect(judgePage).toHaveURL(new RegExp(`/e/${ev.slug}/judge$`));
  await expect(judgePage.getByRole('list', { name: 'To review' })).toContainText(judge.assignments[0].title);
  await snapshot(judgePage, testInfo, 'judge-sign-in-queue-phone');

  // The session only scores: the password cannot be changed with it.
  const refused = await judgePage.evaluate(async () => {
    const r = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-verdict-csrf': '1' },
      body: JSON.stringify({ query: 'mutation { changePassword(currentPassword: "x", newPassword: "y-y-y-y-y-y-y") }' }),
    });
    return (await r.json()).errors?.[0]?.extensions?.code;
  });
  expect(refused).toBe('FORBIDDEN');

  // The organizer reissues: the old link says at once that it was replaced.
  await row.getByRole('button', { name: `Reissue sign-in link for ${judge.name}` }).click();
  await row.getByRole('button', { name: 'Yes, reissue' }).click();
  await expect(row.getByTestId('judge-link')).not.toHaveText(link);
  // The reissue also ended the phone's session. Its cookie is still in the phone: the
  // first request it sends is refused once, which drops the cookie, and the page asks
  // again without it (no clearing of cookies by the test).
  const fresh = phone.pages()[0];
  await fresh.goto(new URL(link).pathname);
  await expect(fresh.getByRole('alert')).toContainText('revoked or replaced');
  await expect(fresh.getByRole('button', { name: 'Start judging' })).toHaveCount(0);
  await checkA11y(fresh, 'a replaced judge sign-in link');
  await snapshot(fresh, testInfo, 'judge-sign-in-replaced-phone');

  // The new code, typed with the event, signs in too.
  const newCode = (await row.getByTestId('judge-code').textContent()) ?? '';
  await fresh.goto(`/judge-sign-in?event=${ev.slug}`);
  await fresh.getByLabel('Code').fill(newCode.toLowerCase());
  await fresh.getByRole('button', { name: 'Start judging' }).tap();
  await expect(fresh).toHaveURL(new RegExp(`/e/${ev.slug}/judge$`));
  await phone.close();
});
