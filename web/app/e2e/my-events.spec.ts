// After log-in everyone lands on "My events": each event, their roles, and the one next
// thing to do. An organizer's overview shows the setup checklist, checked from the data.
import { expect, test } from '@playwright/test';
import { judgingEvent } from './judge-seed';
import { checkA11y, createEvent, logIn, person, PHONE, snapshot, teamWithProject, unique } from './support';

test.describe('on a phone', () => {
  test.use(PHONE);

  test('a judge lands on My events and sees how many projects to score and when judging closes', async ({ page }, info) => {
    const ev = await judgingEvent({ projects: 3, judges: 1, perJudge: 3 });
    await logIn(page, ev.judges[0]);
    await expect(page.getByRole('heading', { level: 1, name: 'My events' })).toBeVisible();
    const next = page.getByRole('list', { name: `Next in Browser ${ev.slug}` });
    // Judging closes 48 h after the seed: "47 h" or "2 days" by the time the page reads it.
    await expect(next).toContainText(/3 projects to score, judging closes in (4\d h|2 days)\./);
    await checkA11y(page, 'a judge\'s My events');
    await snapshot(page, info, 'my-events-judge');
    await next.getByRole('link').first().click();
    await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/judge$`));
  });

  test('a participant with a draft is told it is not submitted and how long is left', async ({ page }, info) => {
    const ev = await createEvent();
    const pat = await person(ev.slug, 'PARTICIPANT', ev.organizer.token, 'Pat Draft');
    await teamWithProject(ev.slug, pat, unique('Draft'), ev.trackIds[0], { draft: true });
    await logIn(page, pat);
    const next = page.getByRole('list', { name: `Next in Browser ${ev.slug}` });
    await expect(next).toContainText(/your draft is not submitted, 2\d h left/);
    await checkA11y(page, 'a participant\'s My events');
    await snapshot(page, info, 'my-events-participant');
  });
});

test('an organizer is told the setup step the event is at, and the overview checks each step from the data', async ({ page }, info) => {
  const ev = await createEvent();
  await logIn(page, ev.organizer);
  const next = page.getByRole('list', { name: `Next in Browser ${ev.slug}` });
  // createEvent made tracks, a rubric and both judging times: judges come next.
  await expect(next).toContainText('next setup step, invite judges');
  await next.getByRole('link').first().click();
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/admin/people$`));

  await page.goto(`/e/${ev.slug}/admin`);
  const steps = page.getByRole('list', { name: 'Setup steps' });
  await expect(steps.locator('li[data-done="yes"]')).toHaveCount(3);
  await expect(steps.locator('li[aria-current="step"]')).toContainText('Invite judges');
  await checkA11y(page, 'the setup checklist');
  await snapshot(page, info, 'setup-checklist');

  // A judge is invited and in: the step is checked, from the data.
  await person(ev.slug, 'JUDGE', ev.organizer.token, 'Jo Checklist');
  await page.reload();
  await expect(steps.locator('li[data-step="INVITE_JUDGES"]')).toHaveAttribute('data-done', 'yes');
  await expect(steps.locator('li[aria-current="step"]')).toContainText('Assign projects');
  await steps.getByRole('link', { name: 'Assign projects' }).click();
  await expect(page).toHaveURL(new RegExp(`/e/${ev.slug}/admin/assignments$`));
});
