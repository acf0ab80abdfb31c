// The judge's pages: the queue with its progress, and scoring a project on a phone.
import { expect, test, type Page } from '@playwright/test';
import { judgingEvent } from './judge-seed';
import { checkA11y, gql, logIn, PHONE, sameOriginOnly, snapshot } from './support';

test.use(PHONE);

async function noSideways(page: Page, what: string) {
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll, `horizontal scroll on ${what}`).toBeLessThanOrEqual(inner);
}

/** Taps a value for every criterion of the rubric seeded by createEvent (Impact, Craft). */
async function score(page: Page, values: Record<'Impact' | 'Craft', number>) {
  for (const [name, v] of Object.entries(values)) {
    const group = page.getByRole('group', { name: new RegExp(`^${name}`) });
    const radio = group.getByRole('radio', { name: String(v), exact: true });
    // A tap the page is too busy to take (a loaded CI machine) is tapped again, as a
    // person would; what must hold is that the value sticks once taken.
    await expect(async () => {
      await radio.tap();
      await expect(radio).toBeChecked({ timeout: 2000 });
    }).toPass({ timeout: 15_000 });
  }
}

test('a judge scores two projects on a phone-sized viewport and sees progress move', async ({ page }, testInfo) => {
  const guard = sameOriginOnly(page);
  const ev = await judgingEvent();
  const judge = ev.judges[0];
  // The organizer explains a criterion: judges read it under its name, line breaks kept.
  await gql(
    `mutation($e: String!, $i: CriterionInput!) { setCriterion(event: $e, input: $i) { id } }`,
    { e: ev.slug, i: { key: 'impact', name: 'Impact', min: 1, max: 10, weight: 1, position: 1, description: 'Who it helps and how much.\nA working demo counts more than slides.' } },
    ev.organizer.token,
  );
  await logIn(page, judge);

  // The queue: nothing reviewed yet, two projects to do.
  await page.goto(`/e/${ev.slug}/judge`);
  await expect(page.getByRole('heading', { level: 1, name: 'Judging' })).toBeVisible();
  await expect(page.getByText('0 of 2')).toBeVisible();
  await expect(page.getByText('Judging is open')).toBeVisible();
  const nextLinkText = await page.getByRole('link', { name: /Score the next project/ }).textContent();
  const toReview = page.getByRole('list', { name: 'To review' });
  await expect(toReview.getByRole('listitem')).toHaveCount(2);
  await expect(toReview.getByText('to do')).toHaveCount(2);
  await noSideways(page, 'the queue');
  await checkA11y(page, 'the judging queue');

  // The first project: tap a value per criterion, save a draft, reload: still there.
  const titles = judge.assignments.map((a) => a.title);
  const nextLink = page.getByRole('link', { name: /Score the next project/ });
  const firstTitle = titles.find((t) => (nextLinkText ?? '').includes(t)) ?? '';
  expect(firstTitle, 'the next project is one of the judge\'s').not.toBe('');
  await nextLink.tap();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(firstTitle);
  await expect(page.getByRole('group', { name: /^Impact/ })).toContainText('1 to 10');
  const explained = page.getByRole('group', { name: /^Impact/ }).locator('.judge-criterion-description');
  await expect(explained).toHaveText('Who it helps and how much.\nA working demo counts more than slides.', { useInnerText: true });
  await expect(page.getByRole('group', { name: /^Craft/ }).locator('.judge-criterion-description')).toHaveCount(0);
  await score(page, { Impact: 7, Craft: 4 });
  await page.getByLabel('Comment (optional)').fill('Clear pitch.\nThe demo crashed once.');
  await page.getByRole('button', { name: 'Save draft' }).tap();
  await expect(page.getByRole('status').filter({ hasText: 'Draft saved' })).toBeVisible();
  await noSideways(page, 'the scoring page');
  await checkA11y(page, 'the scoring page');
  await snapshot(page, testInfo, 'judge-score-phone');

  await page.reload();
  await expect(page.getByRole('group', { name: /^Impact/ }).getByRole('radio', { name: '7', exact: true })).toBeChecked();
  await expect(page.getByRole('group', { name: /^Craft/ }).getByRole('radio', { name: '4', exact: true })).toBeChecked();
  await expect(page.getByLabel('Comment (optional)')).toHaveValue('Clear pitch.\nThe demo crashed once.');
  await expect(page.getByText('draft saved', { exact: true })).toBeVisible();

  // Change one value and submit: progress moves to 1 of 2.
  await score(page, { Impact: 8, Craft: 4 });
  await page.getByRole('button', { name: 'Submit review' }).tap();
  await expect(page.getByRole('status').filter({ hasText: 'Review submitted' })).toContainText('1 of 2 reviewed');

  // The second project, through "Next project".
  await page.getByRole('link', { name: 'Next project' }).tap();
  const secondTitle = titles.find((t) => t !== firstTitle)!;
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(secondTitle);
  // Keyboard: arrows move between the values of a criterion (real radios).
  const craft = page.getByRole('group', { name: /^Craft/ });
  await craft.getByRole('radio', { name: '5', exact: true }).focus();
  await page.keyboard.press('ArrowRight');
  await expect(craft.getByRole('radio', { name: '6', exact: true })).toBeChecked();
  await score(page, { Impact: 9, Craft: 6 });
  await page.getByRole('button', { name: 'Submit review' }).tap();
  const done = page.getByRole('status').filter({ hasText: 'Review submitted' });
  await expect(done).toContainText('2 of 2 reviewed');
  await expect(page.getByRole('link', { name: 'Next project' })).toHaveCount(0);
  await expect(page.getByText('No more projects in your queue.')).toBeVisible();

  // Back in the queue: both reviewed, with their totals, nothing left to score.
  await page.getByRole('link', { name: 'Back to the queue' }).tap();
  await expect(page.getByText('2 of 2')).toBeVisible();
  await expect(page.getByRole('link', { name: /Score the next project/ })).toHaveCount(0);
  const reviewed = page.getByRole('list', { name: 'Reviewed' });
  await expect(reviewed.getByRole('listitem')).toHaveCount(2);
  await expect(reviewed.getByText('submitted', { exact: true })).toHaveCount(2);
  // (8-1)/9 and (4-1)/9 weigh equally: 56 of 100; (9-1)/9 and (6-1)/9: 72.
  await expect(reviewed.getByRole('listitem').filter({ hasText: firstTitle })).toContainText('Total 56');
  await expect(reviewed.getByRole('listitem').filter({ hasText: secondTitle })).toContainText('Total 72');
  await expect(reviewed.getByRole('link', { name: `Edit your review of ${firstTitle}` })).toBeVisible();
  await noSideways(page, 'the finished queue');
  await checkA11y(page, 'the finished queue');
  guard.check();
});

test('after the organizer closes judging, submitting says the window has closed', async ({ page }) => {
  const ev = await judgingEvent({ judges: 1, projects: 2 });
  const judge = ev.judges[0];
  await logIn(page, judge);
  await page.goto(`/e/${ev.slug}/judge/${judge.assignments[0].id}`);
  await expect(page.getByRole('heading', { level: 1, name: judge.assignments[0].title })).toBeVisible();
  await score(page, { Impact: 5, Craft: 5 });

  await ev.setJudging('closed');
  await page.getByRole('button', { name: 'Submit review' }).tap();
  const alert = page.getByRole('alert');
  await expect(alert).toHaveText('The judging window has closed.');
  // The form now knows it too: nothing more to press.
  await expect(page.getByRole('button', { name: 'Submit review' })).toBeDisabled();

  // The queue says so too, and offers nothing to score.
  await page.goto(`/e/${ev.slug}/judge`);
  await expect(page.getByText('Judging is closed')).toBeVisible();
});

test('an incomplete review is refused as the server said it; a stranger assignment is explained', async ({ page }) => {
  const ev = await judgingEvent({ judges: 2, projects: 2, perJudge: 1 });
  const [judge, other] = ev.judges;
  await logIn(page, judge);
  await page.goto(`/e/${ev.slug}/judge/${judge.assignments[0].id}`);
  await expect(page.getByRole('heading', { level: 1, name: judge.assignments[0].title })).toBeVisible();
  await score(page, { Impact: 3 } as Record<'Impact' | 'Craft', number>);
  await page.getByRole('button', { name: 'Submit review' }).tap();
  await expect(page.getByRole('alert')).toHaveText('Craft is not scored; a submitted review scores every criterion.');
  await expect(page.getByRole('group', { name: /^Craft/ })).toHaveAttribute('aria-invalid', 'true');

  await page.goto(`/e/${ev.slug}/judge/${other.assignments[0].id}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Assignment not found' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Back to your queue' })).toBeVisible();
});
