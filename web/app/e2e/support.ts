// What the browser stories share: seeding events and people through the public API (as a
// script of an organizer would), logging in through the page, the accessibility check and
// the same-origin check.
import AxeBuilder from '@axe-core/playwright';
import { expect, type Page, type TestInfo } from '@playwright/test';

export const BASE = process.env.VERDICT_URL ?? '';
export const PASSWORD = 'correct-horse-battery-staple-42';

if (!BASE) throw new Error('VERDICT_URL is not set: run through `cargo test` or e2e/dev-server.sh');

type GqlError = { message: string; extensions?: { code?: string } };

/** One GraphQL operation over HTTP; throws `CODE: message` on an error. */
export async function gql<T = any>(query: string, variables: Record<string, unknown> = {}, token?: string): Promise<T> {
  const resp = await fetch(`${BASE}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await resp.json()) as { data?: T; errors?: GqlError[] };
  if (body.errors?.length) {
    const e = body.errors[0];
    throw new Error(`${e.extensions?.code ?? 'NO_CODE'}: ${e.message}`);
  }
  return body.data as T;
}

let admin: Promise<string> | undefined;
/** The site administrator's session token (the server's first account). */
export function adminToken(): Promise<string> {
  admin ??= gql<{ logIn: { token: string } }>(
    'mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }',
    { e: process.env.VERDICT_ADMIN_EMAIL, p: process.env.VERDICT_ADMIN_PASSWORD },
  ).then((d) => d.logIn.token);
  return admin;
}

export function unique(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

const hours = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();

export type Person = { email: string; password: string; name: string; token: string };
export type SeededEvent = { slug: string; id: string; organizer: Person; trackIds: string[] };

/**
 * A fresh event, created by the site admin, with an organizer who holds a password, two
 * tracks and a two-criterion rubric. `submissions`: open now (the default) or closed an
 * hour ago; `judging`: open now or (the default) after submissions.
 */
export async function createEvent(
  opts: { submissions?: 'open' | 'closed'; judging?: 'open' | 'later'; reviewsPerProject?: number; maxTeamSize?: number } = {},
): Promise<SeededEvent> {
  const token = await adminToken();
  const slug = unique('ev');
  const closed = opts.submissions === 'closed';
  const judgingNow = opts.judging === 'open';
  const d = await gql(
    `mutation($input: CreateEventInput!) { createEvent(input: $input) { id slug } }`,
    {
      input: {
        slug,
        name: `Browser ${slug}`,
        submissionsOpen: hours(closed ? -48 : -24),
        submissionsClose: hours(closed ? -1 : 24),
        judgingOpen: hours(judgingNow ? -0.5 : 25),
        judgingClose: hours(judgingNow ? 48 : 72),
        reviewsPerProject: opts.reviewsPerProject ?? 2,
        maxTeamSize: opts.maxTeamSize ?? 4,
        registration: 'INVITE_ONLY',
      },
    },
    token,
  );
  const trackIds: string[] = [];
  for (const name of ['Tools', 'Games']) {
    const t = await gql(`mutation($e: String!, $n: String!) { createTrack(event: $e, name: $n) { id } }`, { e: slug, n: name }, token);
    trackIds.push(t.createTrack.id);
  }
  for (const [key, name, position] of [
    ['impact', 'Impact', 1],
    ['craft', 'Craft', 2],
  ] as const) {
    await gql(
      `mutation($e: String!, $i: CriterionInput!) { setCriterion(event: $e, input: $i) { id } }`,
      { e: slug, i: { key, name, min: 1, max: 10, weight: 1, position } },
      token,
    );
  }
  const organizer = await person(slug, 'ORGANIZER', token, 'Olga Organizer');
  return { slug, id: d.createEvent.id, organizer, trackIds };
}

/** Invites `email` to the event as `role` (as `byToken`, an organizer) and returns the
 *  invitation link's path (`/invite/...`), read from the event's outbox. */
export async function invite(slug: string, email: string, role: string, byToken: string): Promise<string> {
  await gql(`mutation($e: String!, $m: [String!]!, $r: Role!) { inviteToEvent(event: $e, emails: $m, role: $r) { id } }`, { e: slug, m: [email], r: role }, byToken);
  return linkFor(slug, email, byToken);
}

/** The newest link mailed to `email` for this event, from its outbox (what an organizer of
 *  an air-gapped event copies by hand). */
export async function linkFor(slug: string, email: string, byToken: string): Promise<string> {
  const d = await gql(`query($e: String!) { event(slug: $e) { outbox(first: 100) { nodes { to body createdAt } } } }`, { e: slug }, byToken);
  const mine = d.event.outbox.nodes.filter((m: { to: string }) => m.to.toLowerCase() === email.toLowerCase());
  const body: string = mine[mine.length - 1]?.body ?? '';
  const m = body.match(/https?:\/\/[^\s]+(\/(invite|reset|confirm)\/[A-Za-z0-9_]+)/);
  if (!m) throw new Error(`no link for ${email} in the outbox of ${slug}`);
  return m[1];
}

/** Someone with a password and `role` in the event: invited, then redeemed through the API. */
export async function person(slug: string, role: string, byToken: string, name?: string): Promise<Person> {
  const email = `${unique(role.toLowerCase())}@example.org`;
  const path = await invite(slug, email, role, byToken);
  const token = path.split('/').pop();
  const displayName = name ?? email.split('@')[0];
  const d = await gql(
    `mutation($t: String!, $p: String, $n: String) { redeemInvitation(token: $t, password: $p, displayName: $n) { token } }`,
    { t: token, p: PASSWORD, n: displayName },
  );
  return { email, password: PASSWORD, name: displayName, token: d.redeemInvitation.token };
}

/** A team with a project for `who` (a participant), submitted unless `draft`. */
export async function teamWithProject(slug: string, who: Person, title: string, trackId: string, opts: { draft?: boolean } = {}) {
  const team = await gql(`mutation($e: String!, $n: String!) { createTeam(event: $e, name: $n) { id inviteCode } }`, { e: slug, n: `Team ${title}` }, who.token);
  const p = await gql(
    `mutation($e: String!, $i: ProjectInput!) { createProject(event: $e, input: $i) { id } }`,
    { e: slug, i: { title, track: trackId, tagline: `${title}, in one line`, summary: `What ${title} does.` } },
    who.token,
  );
  if (!opts.draft) await gql(`mutation($id: ID!) { submitProject(id: $id) { id } }`, { id: p.createProject.id }, who.token);
  return { teamId: team.createTeam.id as string, inviteCode: team.createTeam.inviteCode as string | null, projectId: p.createProject.id as string };
}

/** Logs in through the page, as a person would. */
export async function logIn(page: Page, who: { email: string; password: string }) {
  await page.goto('/login');
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page).toHaveURL(/\/my-events$/);
}

/** axe-core on the page as it is now: no serious or critical violation. */
export async function checkA11y(page: Page, what: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const summary = bad.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
  expect(summary, `accessibility of ${what}`).toEqual([]);
}

/** Records every request the page makes; `check()` asserts all went to Verdict itself. */
export function sameOriginOnly(page: Page) {
  const foreign: string[] = [];
  const origin = new URL(BASE).origin;
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol === 'data:' || u.protocol === 'blob:') return;
    const o = u.protocol.startsWith('ws') ? u.origin.replace(/^ws/, 'http') : u.origin;
    if (o !== origin) foreign.push(r.url());
  });
  page.on('websocket', (ws) => {
    const u = new URL(ws.url());
    if (`http${u.protocol === 'wss:' ? 's' : ''}://${u.host}` !== origin) foreign.push(ws.url());
  });
  return { check: () => expect(foreign, 'requests to other origins').toEqual([]) };
}

/** A screenshot kept with the test's artifacts (not committed). */
export async function snapshot(page: Page, info: TestInfo, name: string) {
  await page.screenshot({ path: info.outputPath(`${name}.png`), fullPage: true });
}

/** A phone-sized viewport (iPhone 12-ish) with touch. */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
