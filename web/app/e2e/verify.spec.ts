// The verify page as a participant sees it after the organizers publish: their own
// project's Merkle inclusion proof, checked in the browser (WebCrypto, no network) against
// the signed root, each check on its line; and the same page failing when one byte of the
// proof or its root is changed on the way, so the green lines are a check, not a label.
import { expect, test, type Page } from '@playwright/test';
import { publicFixture } from './public-seed';
import { adminToken, checkA11y, gql, invite, logIn, PASSWORD, sameOriginOnly, type Person } from './support';

/** Gives an imported person (who has no password) one, through an invitation to `role`. */
async function claim(slug: string, email: string, role: string, name: string): Promise<Person> {
  const path = await invite(slug, email, role, await adminToken());
  const d = await gql(`mutation($t: String!, $p: String) { redeemInvitation(token: $t, password: $p) { token } }`, { t: path.split('/').pop(), p: PASSWORD });
  return { email, password: PASSWORD, name, token: d.redeemInvitation.token };
}

type Seed = { slug: string; maker: Person; project: string; title: string };
let seed: Seed;

// The public fixture (8 projects, each a team of one maker), imported by the site admin;
// its organizer and the maker of "Bee Sensor Kit" get passwords; the organizer calibrates
// and publishes.
test.beforeAll(async () => {
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const fixture = publicFixture(tag);
  const imported = await gql(`mutation($f: JSON!) { importEvent(fixture: $f) { event { slug } } }`, { f: fixture }, await adminToken());
  const slug: string = imported.importEvent.event.slug;
  const organizer = await claim(slug, `pub-org-${tag}@example.org`, 'ORGANIZER', 'Olivia Organizer');
  const run = await gql(`mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id } }`, { e: slug }, organizer.token);
  await gql(`mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r, final: true) { version } }`, { e: slug, r: run.runCalibration.id }, organizer.token);
  const i = 3;
  const maker = await claim(slug, `pub-maker${i}-${tag}@example.org`, 'PARTICIPANT', `Maker ${i + 1}`);
  seed = { slug, maker, project: fixture.projects[i].external_id, title: fixture.projects[i].title };
});

/** The proof section of the verify page, once the browser has checked the proof. */
async function openProof(page: Page) {
  await page.goto(`/e/${seed.slug}/verify`);
  const section = page.getByRole('region', { name: 'Your project, checked in this browser' });
  await expect(section).toContainText(`“${seed.title}” is entry`);
  const lines = section.getByTestId('proof-checks').getByRole('listitem');
  await expect(lines).toHaveCount(5);
  return { section, lines };
}

/** Answers the page's proof query with the server's answer, its proof document changed by `change`. */
async function tamper(page: Page, change: (proof: Record<string, unknown>, text: string) => string) {
  await page.route('**/graphql', async (route) => {
    if (!route.request().postData()?.includes('MyInclusionProof')) return route.fallback();
    const response = await route.fetch();
    const body = await response.json();
    const proof = body.data.event.results.inclusionProof;
    const changed = change(JSON.parse(proof.document), proof.document);
    expect(changed.length, 'one byte changed, none added').toBe(proof.document.length);
    expect(changed).not.toBe(proof.document);
    proof.document = changed;
    await route.fulfill({ response, json: body });
  });
}

/** `text` with the hex digit at `at` replaced by another. */
function flip(text: string, at: number): string {
  return text.slice(0, at) + (text[at] === 'a' ? 'b' : 'a') + text.slice(at + 1);
}

test('a participant sees their project’s inclusion proof checked in the browser, and a changed byte fail', async ({ page }) => {
  const guard = sameOriginOnly(page);
  await logIn(page, seed.maker);

  // As published: every check passes.
  const { section, lines } = await openProof(page);
  await expect(section.getByText('PASS', { exact: true })).toBeVisible();
  await expect(section.getByText('FAIL', { exact: true })).toHaveCount(0);
  for (const line of await lines.all()) await expect(line).toHaveText(/^ok: /);
  await expect(lines.nth(0)).toContainText('the proof’s key is this deployment’s key');
  await expect(lines.nth(1)).toContainText(`publication signature (verdict.publication.v3) over event evt_`);
  await expect(lines.nth(1)).not.toContainText('not checked');
  await expect(lines.nth(2)).toContainText('the proof’s root and tree size (8) are the signed ones');
  await expect(lines.nth(3)).toHaveText(`ok: the entry is project ${seed.project}’s`);
  await expect(lines.nth(4)).toContainText(/the audit path \(3 hashes\) leads from leaf \d of 8 to the root/);
  await expect(section.locator('p.muted code').first()).toContainText(`verdict results prove --event ${seed.slug} --project ${seed.project}`);
  await checkA11y(page, 'the verify page with a checked proof');

  // One hex digit of an audit path hash changed on the way: the path no longer leads to
  // the signed root.
  await tamper(page, (proof, text) => {
    const hash = (proof.audit_path as string[])[0];
    return flip(text, text.indexOf(hash) + 5);
  });
  const bad = await openProof(page);
  await expect(bad.section.getByText('FAIL', { exact: true })).toBeVisible();
  await expect(bad.section.getByText('PASS', { exact: true })).toHaveCount(0);
  await expect(bad.lines.nth(4)).toHaveText(/^FAIL: the audit path/);
  await expect(bad.lines.nth(0)).toHaveText(/^ok: /);
  await expect(bad.lines.nth(1)).toHaveText(/^ok: /);
  await expect(bad.lines.nth(3)).toHaveText(/^ok: /);
  await checkA11y(page, 'the verify page with a failing proof');

  // The proof's root changed instead: it is not the signed one, and the path misses it.
  await page.unrouteAll({ behavior: 'wait' });
  await tamper(page, (proof, text) => flip(text, text.lastIndexOf(proof.root as string) + 10));
  const rootless = await openProof(page);
  await expect(rootless.section.getByText('FAIL', { exact: true })).toBeVisible();
  await expect(rootless.lines.nth(2)).toHaveText(/^FAIL: the proof’s root and tree size/);
  await expect(rootless.lines.nth(4)).toHaveText(/^FAIL: the audit path/);
  await expect(rootless.lines.nth(1)).toHaveText(/^ok: /);

  // Untouched again: PASS.
  await page.unrouteAll({ behavior: 'wait' });
  const again = await openProof(page);
  await expect(again.section.getByText('PASS', { exact: true })).toBeVisible();
  guard.check();
});
