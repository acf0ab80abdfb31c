// A judging-ready event, seeded through the public API as an organizer's script would:
// submitted projects, submissions closed, the judging window open now, judges with their
// assignments. Other stories import `judgingEvent` when they need reviews to exist.
import { createEvent, gql, person, teamWithProject, type Person, type SeededEvent } from './support';

export type SeededProject = { id: string; title: string; trackId: string; owner: Person };
export type SeededJudge = Person & {
  /** The judge's membership id (what `assignJudge` and recusals take). */
  membershipId: string;
  /** The judge's assignments, in the order they were made. */
  assignments: { id: string; projectId: string; title: string }[];
};
export type JudgingEvent = SeededEvent & {
  projects: SeededProject[];
  judges: SeededJudge[];
  /** Moves the judging window (as the organizer): `closed` ends it a few seconds ago. */
  setJudging: (state: 'open' | 'closed') => Promise<void>;
};

const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

const UPDATE = `mutation($e: String!, $i: UpdateEventInput!) { updateEvent(event: $e, input: $i) { id } }`;

/**
 * An event ready for judging: `projects` (default 4) submitted projects, each by its own
 * participant and team, alternating between the two tracks; submissions closed a minute
 * ago; judging open from an hour ago for two days; `judges` (default 2) judges, each
 * assigned `perJudge` (default 2) projects, judge i taking projects i*perJudge onwards
 * (wrapping around when there are fewer projects than that).
 */
export async function judgingEvent(opts: { projects?: number; judges?: number; perJudge?: number } = {}): Promise<JudgingEvent> {
  const nProjects = opts.projects ?? 4;
  const nJudges = opts.judges ?? 2;
  const perJudge = Math.min(opts.perJudge ?? 2, nProjects);
  const ev = await createEvent({ submissions: 'open' });
  const org = ev.organizer.token;

  const titles = ['Lantern', 'Quill', 'Orbit', 'Tidepool', 'Beacon', 'Marble', 'Juniper', 'Kettle'];
  const projects: SeededProject[] = [];
  for (let i = 0; i < nProjects; i++) {
    const owner = await person(ev.slug, 'PARTICIPANT', org);
    const title = `${titles[i % titles.length]}${i >= titles.length ? ` ${i}` : ''}`;
    const trackId = ev.trackIds[i % ev.trackIds.length];
    const { projectId } = await teamWithProject(ev.slug, owner, title, trackId);
    projects.push({ id: projectId, title, trackId, owner });
  }

  await gql(UPDATE, { e: ev.slug, i: { submissionsClose: at(-1), judgingOpen: at(-60), judgingClose: at(48 * 60) } }, org);

  const people: Person[] = [];
  for (let j = 0; j < nJudges; j++) people.push(await person(ev.slug, 'JUDGE', org, `Judge ${String.fromCharCode(65 + j)}`));
  const members = await gql(
    `query($e: String!) { event(slug: $e) { members(role: JUDGE, first: 100) { nodes { id email } } } }`,
    { e: ev.slug },
    org,
  );
  const byEmail = new Map<string, string>(
    members.event.members.nodes.map((m: { id: string; email: string }) => [m.email.toLowerCase(), m.id]),
  );

  const judges: SeededJudge[] = [];
  for (const [j, p] of people.entries()) {
    const membershipId = byEmail.get(p.email.toLowerCase());
    if (!membershipId) throw new Error(`no JUDGE membership for ${p.email} in ${ev.slug}`);
    const assignments: SeededJudge['assignments'] = [];
    for (let k = 0; k < perJudge; k++) {
      const project = projects[(j * perJudge + k) % nProjects];
      const a = await gql(
        `mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }`,
        { e: ev.slug, j: membershipId, p: project.id },
        org,
      );
      assignments.push({ id: a.assignJudge.id, projectId: project.id, title: project.title });
    }
    judges.push({ ...p, membershipId, assignments });
  }

  const setJudging = async (state: 'open' | 'closed') => {
    const i = state === 'open' ? { judgingOpen: at(-60), judgingClose: at(48 * 60) } : { judgingOpen: at(-60), judgingClose: at(-0.1) };
    await gql(UPDATE, { e: ev.slug, i }, org);
  };

  return { ...ev, projects, judges, setJudging };
}
