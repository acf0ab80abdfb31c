// An event with PUBLISHED, final results, seeded through the public API as the site
// administrator would script it: a `verdict.event.v1` fixture (8 projects in 2 tracks,
// 4 judges of differing severity, 3 reviews per project) imported with `importEvent`,
// then `runCalibration` and `publishResults(final: true)` (organizers; a site admin acts
// as an organizer of every event).
import { adminToken, gql } from './support';

export const HOSTILE = 'Line one of the story.\n<b>x</b><script>window.__pwned = 1</script>\nLine three.';

const TITLES = [
  'Solar Ledger',
  'Grid Whisper',
  'Clinic Queue Bot',
  'Bee Sensor Kit',
  'Recipe Costs',
  'Flood Watch',
  'Transit Pulse',
  'Seed Library',
];

export type PublicSeed = {
  slug: string;
  name: string;
  tracks: { externalId: string; name: string }[];
  /** Titles by project external id. */
  titles: Record<string, string>;
  /** The project whose description carries markup and a script tag. */
  hostile: string;
  /** Ranked titles in published rank order, and how many projects are ranked. */
  ranking: { title: string; rank: number }[];
};

export function publicFixture(tag: string) {
  const iso = (d: string) => `${d}T00:00:00Z`;
  const tracks = [
    { external_id: `trk_tools_${tag}`, name: 'Tools' },
    { external_id: `trk_climate_${tag}`, name: 'Climate' },
  ];
  const judges = [0, 1, 2, 3];
  const severity = [0, -2, 2, -1]; // judge 1 harsh, judge 2 generous, judge 3 a bit harsh
  const quality = [9, 8, 7, 6, 5, 4, 3, 2];
  const people = [
    { external_id: `org_${tag}`, email: `pub-org-${tag}@example.org`, display_name: 'Olivia Organizer' },
    ...judges.map((j) => ({ external_id: `jp${j}_${tag}`, email: `pub-judge${j}-${tag}@example.org`, display_name: `Judge ${j + 1}` })),
    ...TITLES.map((_, i) => ({ external_id: `mp${i}_${tag}`, email: `pub-maker${i}-${tag}@example.org`, display_name: `Maker ${i + 1}` })),
  ];
  const projects = TITLES.map((title, i) => ({
    external_id: `prj${i}_${tag}`,
    team: `team${i}_${tag}`,
    track: tracks[i % 2].external_id,
    title,
    tagline: `${title}: a tagline for project ${i + 1}`,
    summary: `What ${title} does, in a few words.`,
    description: i === 0 ? HOSTILE : `The long story of ${title}.\nSecond line.`,
    repo_url: `https://example.org/${tag}/repo${i}`,
    demo_url: i === 0 ? `https://example.org/${tag}/demo${i}` : '',
    tags: i % 2 === 0 ? ['energy', `tag${i}`] : ['health'],
    status: 'submitted',
    submitted_at: '2026-01-11T08:00:00Z',
  }));
  const reviews = [];
  for (let i = 0; i < TITLES.length; i++) {
    for (const j of judges) {
      if (j === i % 4) continue; // three judges per project; the graph stays connected
      const s = (d: number) => Math.max(1, Math.min(10, quality[i] + severity[j] + d));
      reviews.push({
        judge: `jdg${j}_${tag}`,
        project: `prj${i}_${tag}`,
        scores: { impact: s(0), craft: s((i + j) % 3 === 0 ? 1 : 0) },
        comment: 'Seeded review.',
        submitted_at: '2026-01-12T10:00:00Z',
      });
    }
  }
  return {
    format: 'verdict.event.v1',
    event: {
      external_id: `evt_${tag}`,
      slug: `pub-${tag}`,
      name: `Public Results ${tag}`,
      submissions_open: iso('2026-01-10'),
      submissions_close: iso('2026-01-11'),
      judging_open: '2026-01-11T09:00:00Z',
      judging_close: iso('2026-01-13'),
      voting_open: null,
      voting_close: null,
      reviews_per_project: 3,
      max_team_size: 3,
    },
    tracks,
    people,
    organizers: [`org_${tag}`],
    judges: judges.map((j) => ({ external_id: `jdg${j}_${tag}`, person: `jp${j}_${tag}`, tracks: [] })),
    teams: TITLES.map((title, i) => ({ external_id: `team${i}_${tag}`, name: `Team ${title}`, members: [`mp${i}_${tag}`] })),
    projects,
    criteria: [
      { key: 'impact', name: 'Impact', weight: 1.0, min: 1, max: 10, position: 1 },
      { key: 'craft', name: 'Craft', weight: 1.0, min: 1, max: 10, position: 2 },
    ],
    reviews,
  };
}

/** Calibrates again and publishes the run as the next version (as the site admin). */
export async function publishAgain(slug: string, final: boolean): Promise<number> {
  const token = await adminToken();
  const run = await gql(`mutation($e: String!) { runCalibration(event: $e, seed: 8, bootstrap: 100) { id } }`, { e: slug }, token);
  const p = await gql(
    `mutation($e: String!, $r: ID!, $f: Boolean) { publishResults(event: $e, run: $r, final: $f) { version } }`,
    { e: slug, r: run.runCalibration.id, f: final },
    token,
  );
  return p.publishResults.version;
}

/** Imports the fixture, calibrates and publishes results (final unless told otherwise); returns what the pages
 *  should show. */
export async function seedPublishedEvent(opts: { final?: boolean } = {}): Promise<PublicSeed> {
  const token = await adminToken();
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const fixture = publicFixture(tag);
  const imported = await gql(`mutation($f: JSON!) { importEvent(fixture: $f) { event { slug name } } }`, { f: fixture }, token);
  const slug: string = imported.importEvent.event.slug;
  for (const [name, position] of [
    ['Grand prize', 1],
    ['Runner-up', 2],
  ] as const) {
    await gql(`mutation($e: String!, $i: PrizeInput!) { createPrize(event: $e, input: $i) { id } }`, { e: slug, i: { name, position } }, token);
  }
  const run = await gql(`mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 200) { id } }`, { e: slug }, token);
  await gql(
    `mutation($e: String!, $r: ID!, $f: Boolean) { publishResults(event: $e, run: $r, final: $f) { version } }`,
    { e: slug, r: run.runCalibration.id, f: opts.final ?? true },
    token,
  );
  const res = await gql(`query($e: String!) { event(slug: $e) { results { ranking { rank project { title } } } } }`, { e: slug });
  const ranking = (res.event.results.ranking as { rank: number | null; project: { title: string } | null }[])
    .filter((r) => r.rank != null && r.project)
    .map((r) => ({ title: r.project!.title, rank: r.rank! }));
  return {
    slug,
    name: imported.importEvent.event.name,
    tracks: fixture.tracks.map((t) => ({ externalId: t.external_id, name: t.name })),
    titles: Object.fromEntries(fixture.projects.map((p) => [p.external_id, p.title])),
    hostile: fixture.projects[0].external_id,
    ranking,
  };
}
