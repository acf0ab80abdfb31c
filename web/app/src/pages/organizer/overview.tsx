// The organizer's overview: judging progress live (the `judgingProgress` subscription
// updates the numbers as judges submit, and the coverage picture is re-read at most every
// two seconds after a change), the event's windows with countdowns, and the areas.
// Also the small helpers the organizer's live pages share (loading, retry keys).
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, asApiError, request, useQuery, useSubscription } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { allPages } from '../../paging';
import { CoveragePlot, type CoverageRow } from '../../plots';
import { Link } from '../../router';
import { Countdown, ErrorNote, Loading, When } from '../../ui';
import { SetupChecklist } from './checklist';
import { OrgPage } from './nav';
import './organizer-live.css';

// ---- shared by the organizer's live pages ---------------------------------------------

export type Loaded<T> = { data: T | undefined; error: ApiError | undefined; loading: boolean; reload: () => Promise<void> };

/** Runs `load` when mounted and when `key` changes, keeping the last data while it
 *  re-reads (for what takes more than one request, such as every page of a list). */
export function useLoad<T>(load: () => Promise<T>, key: string, opts: { skip?: boolean } = {}): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiError>();
  const [loading, setLoading] = useState(!opts.skip);
  const latest = useRef(0);
  const fn = useRef(load);
  fn.current = load;
  const reload = useCallback(async () => {
    const n = ++latest.current;
    setLoading(true);
    try {
      const d = await fn.current();
      if (n === latest.current) {
        setData(d);
        setError(undefined);
      }
    } catch (e) {
      if (n === latest.current) setError(asApiError(e));
    } finally {
      if (n === latest.current) setLoading(false);
    }
  }, [key]);
  useEffect(() => {
    if (!opts.skip) void reload();
  }, [reload, opts.skip]);
  return { data, error, loading, reload };
}

/** Calls `fn` at most once every `ms`: a burst of calls runs it once, `ms` after the last run. */
export function useThrottle(fn: () => void, ms: number): () => void {
  const f = useRef(fn);
  f.current = fn;
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current !== undefined) return;
    const wait = Math.max(0, last.current + ms - Date.now());
    timer.current = setTimeout(() => {
      timer.current = undefined;
      last.current = Date.now();
      f.current();
    }, wait);
  }, [ms]);
}

/** A random retry key for mutations that take an `idempotencyKey`. */
export function retryKey(): string {
  return typeof crypto !== 'undefined' && 'randomUUID' in crypto
    ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/** How a page of an event the caller cannot see, or that is not there, reads. */
export function EventMissing({ slug }: { slug: string }) {
  return (
    <p>
      No event has the address <code>{slug}</code>. <Link href="/">See all events</Link>.
    </p>
  );
}


const CoverageAssignments = graphql(`
  query OrgCoverageAssignments($slug: String!, $after: String) {
    event(slug: $slug) {
      id
      assignments(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id status project { id } }
      }
    }
  }
`);

const CoverageProjects = graphql(`
  query OrgCoverageProjects($slug: String!, $after: String) {
    event(slug: $slug) {
      id
      reviewsPerProject
      projects(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id title status externalId }
      }
    }
  }
`);

export type OrgProject = NonNullable<ResultOf<typeof CoverageProjects>['event']>['projects']['nodes'][number];

/** Every project of the event (drafts and withdrawn ones included). */
export async function eventProjects(slug: string): Promise<{ projects: OrgProject[]; target: number }> {
  let target = 0;
  const projects = await allPages(async (after) => {
    const d = await request(CoverageProjects, { slug, after });
    if (!d.event) throw new ApiError(`No event has the address ${slug}.`, 'NOT_FOUND');
    target = d.event.reviewsPerProject;
    return d.event.projects;
  });
  return { projects, target };
}

/** Done and assigned (pending or done) reviews per project, by project id. */
export async function coverageCounts(slug: string): Promise<Map<string, { done: number; assigned: number }>> {
  const rows = await allPages(async (after) => (await request(CoverageAssignments, { slug, after })).event?.assignments);
  const by = new Map<string, { done: number; assigned: number }>();
  for (const a of rows) {
    const c = by.get(a.project.id) ?? { done: 0, assigned: 0 };
    if (a.status === 'done') c.done++;
    if (a.status === 'done' || a.status === 'pending') c.assigned++;
    by.set(a.project.id, c);
  }
  return by;
}

/** The coverage picture of the submitted projects: reviews done, assigned and the target. */
async function coverage(slug: string): Promise<CoverageRow[]> {
  const [{ projects, target }, counts] = await Promise.all([eventProjects(slug), coverageCounts(slug)]);
  return projects
    .filter((p) => p.status === 'SUBMITTED' || counts.has(p.id))
    .map((p) => ({ label: p.title, done: counts.get(p.id)?.done ?? 0, assigned: counts.get(p.id)?.assigned ?? 0, target }));
}

// ---- the overview ----------------------------------------------------------------------

const Overview = graphql(`
  query OrgOverview($slug: String!) {
    event(slug: $slug) {
      id
      name
      slug
      reviewsPerProject
      submissionsOpen
      submissionsClose
      judgingOpen
      judgingClose
      votingOpen
      votingClose
      timeZone
      judgingProgress { assignments done pending recused withdrawn projectsBelowTarget }
    }
  }
`);

const ProgressFeed = graphql(`
  subscription OrgProgress($event: String!) {
    judgingProgress(event: $event) { assignments done pending recused withdrawn projectsBelowTarget }
  }
`);

type Progress = ResultOf<typeof ProgressFeed>['judgingProgress'];

function Stat({ label, value, tone }: { label: string; value: number; tone?: 'good' | 'warn' }) {
  return (
    <div class={`stat${tone ? ` stat-${tone}` : ''}`}>
      <strong>{value}</strong> {label}
    </div>
  );
}

function Window({ name, open, close, zone }: { name: string; open: string | null | undefined; close: string | null | undefined; zone: string }) {
  const now = Date.now();
  let state: ComponentChildren;
  if (!open || !close) state = <span class="muted">not scheduled</span>;
  else if (now < new Date(open).getTime())
    state = (
      <>
        opens in <Countdown to={open} />
      </>
    );
  else if (now < new Date(close).getTime())
    state = (
      <>
        <span class="badge good">open</span> closes in <Countdown to={close} />
      </>
    );
  else state = <span class="badge">closed</span>;
  return (
    <li class="card window">
      <h3>{name}</h3>
      <p class="window-state">{state}</p>
      {open && close && (
        <p class="muted window-times">
          <When at={open} zone={zone} /> to <When at={close} zone={zone} />
        </p>
      )}
    </li>
  );
}

const AREAS: [string, string, string][] = [
  ['/settings', 'Settings', 'Name, windows, registration, reviews per project.'],
  ['/people', 'People', 'Invite organizers, judges and participants.'],
  ['/tracks', 'Tracks', 'The tracks projects enter and judges cover.'],
  ['/rubric', 'Rubric', 'The criteria judges score.'],
  ['/assignments', 'Assignments', 'Plan and apply who reviews what.'],
  ['/recusals', 'Recusals', 'Conflicts between judges and teams.'],
  ['/leaderboard', 'Leaderboard', 'The live calibrated ranking, unsigned.'],
  ['/calibration', 'Calibration & publishing', 'Signed runs and published results.'],
  ['/moderation', 'Moderation', 'Hide, disqualify, mark duplicates.'],
  ['/exports', 'Exports', 'CSV of everything.'],
  ['/audit', 'Audit log', 'Every change, hash-chained.'],
];

export function OverviewPage({ slug }: { slug: string }) {
  const q = useQuery(Overview, { slug });
  const [live, setLive] = useState<Progress>();
  const [feedError, setFeedError] = useState<ApiError>();
  const cov = useLoad(() => coverage(slug), slug);
  const refreshCoverage = useThrottle(() => void cov.reload(), 2000);
  const forbidden = q.error?.code === 'FORBIDDEN' || q.error?.code === 'UNAUTHENTICATED';
  useSubscription(
    ProgressFeed,
    { event: slug },
    (d) => {
      setLive(d.judgingProgress);
      setFeedError(undefined);
      refreshCoverage();
    },
    {
      skip: forbidden,
      onReconnect: () => {
        void q.refetch();
        void cov.reload();
      },
      onError: setFeedError,
    },
  );
  // A fresh read replaces what the feed said before it.
  useEffect(() => setLive(undefined), [q.data]);

  const ev = q.data?.event;
  const p = live ?? ev?.judgingProgress;
  const reviewable = p ? p.done + p.pending : 0;
  return (
    <OrgPage slug={slug} title={ev ? `Organize ${ev.name}` : 'Organize'}>
      <ErrorNote error={q.error} />
      {q.loading && !q.data && <Loading />}
      {q.data && !ev && <EventMissing slug={slug} />}
      {ev && p && (
        <>
          <SetupChecklist slug={slug} />
          <section aria-labelledby="progress-h">
            <h2 id="progress-h">Judging progress</h2>
            <div class="stats" aria-live="polite" aria-atomic="false">
              <Stat label="assignments" value={p.assignments} />
              <Stat label="done" value={p.done} tone="good" />
              <Stat label="pending" value={p.pending} />
              <Stat label="recused" value={p.recused} />
              <Stat label="withdrawn" value={p.withdrawn} />
              <Stat label="projects below target" value={p.projectsBelowTarget} tone={p.projectsBelowTarget > 0 ? 'warn' : undefined} />
            </div>
            <div class="progress-line">
              <label for="judging-progress">
                {reviewable > 0
                  ? `${p.done} of ${reviewable} reviewable assignments done (${Math.round((100 * p.done) / reviewable)} %)`
                  : 'No reviewable assignments yet'}
              </label>
              <progress id="judging-progress" max={Math.max(reviewable, 1)} value={p.done} />
            </div>
            <p class="muted live-note">
              {feedError ? (
                <>Live updates stopped; reload the page to see the latest numbers.</>
              ) : (
                <>Updates live as judges submit reviews. Target: {ev.reviewsPerProject} reviews per project.</>
              )}
            </p>
            <ErrorNote error={feedError} />
            {reviewable === 0 && (
              <p>
                Nobody is assigned yet: <Link href={`/e/${encodeURIComponent(slug)}/admin/assignments`}>plan the assignments</Link>.
              </p>
            )}
          </section>

          <section aria-labelledby="coverage-h">
            <h2 id="coverage-h">Coverage</h2>
            <ErrorNote error={cov.error} />
            {cov.loading && !cov.data && <Loading what="Reading the assignments" />}
            {cov.data && cov.data.length === 0 && <p class="muted">No project is submitted yet.</p>}
            {cov.data && cov.data.length > 0 && (
              <CoveragePlot rows={cov.data} caption={`Reviews done and assigned per submitted project, against the target of ${ev.reviewsPerProject}.`} />
            )}
          </section>

          <section aria-labelledby="windows-h">
            <h2 id="windows-h">Windows</h2>
            <ul class="cards windows">
              <Window name="Submissions" open={ev.submissionsOpen} close={ev.submissionsClose} zone={ev.timeZone} />
              <Window name="Judging" open={ev.judgingOpen} close={ev.judgingClose} zone={ev.timeZone} />
              <Window name="Voting" open={ev.votingOpen} close={ev.votingClose} zone={ev.timeZone} />
            </ul>
          </section>

          <section aria-labelledby="areas-h">
            <h2 id="areas-h">Organize</h2>
            <ul class="cards areas">
              {AREAS.map(([path, label, what]) => (
                <li class="card">
                  <Link href={`/e/${encodeURIComponent(slug)}/admin${path}`}>{label}</Link>
                  <p class="muted">{what}</p>
                </li>
              ))}
            </ul>
          </section>
        </>
      )}
    </OrgPage>
  );
}
