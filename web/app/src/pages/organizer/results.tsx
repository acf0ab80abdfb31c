// The ranking side of organizing: the live, unsigned leaderboard (recomputed by the
// server after every change and pushed over `leaderboardUpdated`), and the signed
// calibration runs: run one, read it (forest plot, judge severity, flags), publish it.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, request, useMutation, useQuery, useSubscription } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { ForestPlot, SeverityPlot, type ForestRow, type SeverityRow } from '../../plots';
import { Link } from '../../router';
import { Badge, ErrorNote, Field, Loading, Notice, Table, When } from '../../ui';
import { EventMissing, Hash, num, retryKey, useLoad } from './overview';
import { OrgPage } from './nav';

// ---- one way to show a calibrated ranking and its judges ----------------------------------

type ProjectRow = {
  key: string;
  title: string;
  href?: string;
  rank: number | null;
  rankLow: number | null;
  rankHigh: number | null;
  quality: number | null;
  stdError: number | null;
  rawMean: number | null;
  rawRank: number | null;
  reviews: number;
  excluded: string | null;
};

type JudgeRow = { key: string; name: string; email?: string | null; flag: string; offset: number; noise: number; scale: number | null; reviews: number };

const EXCLUDED: Record<string, string> = {
  duplicate: 'marked a duplicate',
  not_submitted: 'not submitted',
  no_usable_reviews: 'no usable reviews yet',
  not_comparable: 'its judges share no project with the largest group',
};

const FLAGS: Record<string, string> = {
  ok: 'ok',
  constant: 'gives every project the same score',
  single_review: 'only one review: severity not estimable',
  discordant: 'disagrees with the panel',
  no_reviews: 'no submitted reviews',
  not_comparable: 'shares no project with the largest group',
};

function flagTone(flag: string): 'good' | 'warn' | 'bad' {
  return flag === 'ok' ? 'good' : flag === 'discordant' ? 'bad' : 'warn';
}

function interval(p: ProjectRow) {
  if (p.rankLow == null || p.rankHigh == null) return '–';
  return p.rankLow === p.rankHigh ? String(p.rankLow) : `${p.rankLow}–${p.rankHigh}`;
}

function Diagnostics({ value }: { value: unknown }) {
  const nothing = (v: unknown) => v == null || v === 0 || (Array.isArray(v) && v.length === 0);
  const empty = nothing(value) || (typeof value === 'object' && Object.values(value as Record<string, unknown>).every(nothing));
  return (
    <details class="diagnostics">
      <summary>Diagnostics{empty ? ' (nothing unusual)' : ''}</summary>
      <p class="muted">Outlying reviews and judge pairs with identical scores. They are shown for a closer look; the model does not use them.</p>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/** The engine's plain-words summary of a run (engine verdict-calibrate/3 on). */
function summaryOf(diagnostics: unknown): string[] {
  const lines = (diagnostics as { summary?: unknown } | null)?.summary;
  return Array.isArray(lines) ? lines.filter((l): l is string => typeof l === 'string') : [];
}

function CalibrationView({ projects, judges, diagnostics, what }: { projects: ProjectRow[]; judges: JudgeRow[]; diagnostics: unknown; what: string }) {
  // The engine names projects by their calibration ids (external ids): show titles.
  const byLength = [...projects].sort((a, b) => b.key.length - a.key.length);
  const summary = summaryOf(diagnostics).map((line) => byLength.reduce((l, p) => l.split(p.key).join(p.title), line));
  const forest: ForestRow[] = projects.map((p) => ({
    label: p.title,
    href: p.href,
    rank: p.rank,
    rankLow: p.rankLow,
    rankHigh: p.rankHigh,
    quality: p.quality,
    rawMean: p.rawMean,
    rawRank: p.rawRank,
    excluded: p.excluded,
  }));
  const severity: SeverityRow[] = judges.map((j) => ({ label: j.name, offset: j.offset, noise: j.noise, reviews: j.reviews, flag: j.flag }));
  const ranked = projects.filter((p) => p.rank != null).length;
  const flagged = judges.filter((j) => j.flag !== 'ok').length;
  return (
    <>
      {summary.length > 0 && (
        <section class="run-summary" aria-label="What this ranking says">
          <h3>What this ranking says</h3>
          <ul data-testid="run-summary">
            {summary.map((line) => (
              <li>{line}</li>
            ))}
          </ul>
        </section>
      )}
      <h3>Projects</h3>
      <p class="muted">
        {ranked} of {projects.length} projects ranked. Quality has each judge's severity taken out; the interval is where the rank lies with 90 %
        confidence.
      </p>
      <div class="live-split">
        <div class="plot-cell">
          <ForestPlot rows={forest} caption={`${what}: calibrated quality and 90 % rank intervals; raw means beside.`} />
        </div>
        <div>
          <Table caption={`${what}: projects by rank`}>
            <thead>
              <tr>
                <th scope="col" class="num">
                  Rank
                </th>
                <th scope="col">Project</th>
                <th scope="col" class="num">
                  90 % interval
                </th>
                <th scope="col" class="num">
                  Quality
                </th>
                <th scope="col" class="num minor">
                  Raw mean
                </th>
                <th scope="col" class="num minor">
                  Raw rank
                </th>
                <th scope="col" class="num">
                  Reviews
                </th>
              </tr>
            </thead>
            <tbody>
              {projects.map((p) => (
                <tr>
                  <td class="num">{p.rank ?? '–'}</td>
                  <td>
                    {p.href ? <Link href={p.href}>{p.title}</Link> : p.title}
                    {p.excluded && (
                      <>
                        {' '}
                        <Badge tone="warn">{EXCLUDED[p.excluded] ?? p.excluded}</Badge>
                      </>
                    )}
                    <span class="minor-line muted">
                      Raw mean {num(p.rawMean)} · raw rank {p.rawRank ?? '–'}
                    </span>
                  </td>
                  <td class="num">{interval(p)}</td>
                  <td class="num">
                    <span class="nowrap">
                      {num(p.quality)}
                      {p.stdError != null && <span class="muted"> ± {num(p.stdError)}</span>}
                    </span>
                  </td>
                  <td class="num minor">{num(p.rawMean)}</td>
                  <td class="num minor">{p.rawRank ?? '–'}</td>
                  <td class="num">{p.reviews}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      </div>
      <h3>Judges</h3>
      <p class="muted">
        Offset: how far above (+) or below (−) the panel a judge scores. {flagged === 0 ? 'No judge is flagged.' : `${flagged} flagged.`}
      </p>
      <div class="live-split">
        <div class="plot-cell">
          <SeverityPlot rows={severity} caption={`${what}: each judge's severity (offset) and noise.`} />
        </div>
        <div>
          <Table caption={`${what}: judges`}>
            <thead>
              <tr>
                <th scope="col">Judge</th>
                <th scope="col" class="num">
                  Offset
                </th>
                <th scope="col" class="num">
                  Scale
                </th>
                <th scope="col" class="num">
                  Noise
                </th>
                <th scope="col" class="num">
                  Reviews
                </th>
                <th scope="col">Flag</th>
              </tr>
            </thead>
            <tbody>
              {judges.map((j) => (
                <tr>
                  <td>
                    {j.name}
                    {j.email && <span class="muted judge-email">{j.email}</span>}
                  </td>
                  <td class="num">{num(j.offset)}</td>
                  <td class="num">{num(j.scale)}</td>
                  <td class="num">{num(j.noise)}</td>
                  <td class="num">{j.reviews}</td>
                  <td>
                    <Badge tone={flagTone(j.flag)}>{j.flag}</Badge>
                    {j.flag !== 'ok' && FLAGS[j.flag] && <span class="muted flag-why"> {FLAGS[j.flag]}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      </div>
      <Diagnostics value={diagnostics} />
    </>
  );
}

function projectHref(slug: string, id: string | undefined) {
  return id ? `/e/${encodeURIComponent(slug)}/projects/${encodeURIComponent(id)}` : undefined;
}

// ---- the live leaderboard ------------------------------------------------------------------

const LeaderboardQuery = graphql(`
  query OrgLeaderboard($slug: String!) {
    event(slug: $slug) {
      id
      reviewsPerProject
      leaderboard {
        components computedAt connected diagnostics lambda
        projects { projectExternalId project { id title } rank rankLow rankHigh quality stdError rawMean rawRank reviews excluded }
        judges { flag offset noise scale reviews judge { id email user { id displayName } } }
      }
    }
  }
`);

const LeaderboardFeed = graphql(`
  subscription OrgLeaderboardFeed($event: String!) {
    leaderboardUpdated(event: $event) {
      components computedAt connected diagnostics lambda
      projects { projectExternalId project { id title } rank rankLow rankHigh quality stdError rawMean rawRank reviews excluded }
      judges { flag offset noise scale reviews judge { id email user { id displayName } } }
    }
  }
`);

type Board = NonNullable<NonNullable<ResultOf<typeof LeaderboardQuery>['event']>['leaderboard']>;

function boardRows(slug: string, b: Pick<Board, 'projects' | 'judges'>): { projects: ProjectRow[]; judges: JudgeRow[] } {
  return {
    projects: b.projects.map((p) => ({
      key: p.projectExternalId,
      title: p.project?.title ?? p.projectExternalId,
      href: projectHref(slug, p.project?.id),
      rank: p.rank ?? null,
      rankLow: p.rankLow ?? null,
      rankHigh: p.rankHigh ?? null,
      quality: p.quality ?? null,
      stdError: p.stdError ?? null,
      rawMean: p.rawMean ?? null,
      rawRank: p.rawRank ?? null,
      reviews: p.reviews,
      excluded: p.excluded ?? null,
    })),
    judges: b.judges.map((j) => ({
      key: j.judge.id,
      name: j.judge.user.displayName,
      email: j.judge.email,
      flag: j.flag,
      offset: j.offset,
      noise: j.noise,
      scale: j.scale,
      reviews: j.reviews,
    })),
  };
}

export function LeaderboardPage({ slug }: { slug: string }) {
  const q = useQuery(LeaderboardQuery, { slug });
  const [live, setLive] = useState<Board>();
  const [feedError, setFeedError] = useState<ApiError>();
  const forbidden = q.error?.code === 'FORBIDDEN' || q.error?.code === 'UNAUTHENTICATED';
  useSubscription(
    LeaderboardFeed,
    { event: slug },
    (d) => {
      setLive(d.leaderboardUpdated as Board);
      setFeedError(undefined);
    },
    { skip: forbidden, onReconnect: () => void q.refetch(), onError: setFeedError },
  );
  useEffect(() => setLive(undefined), [q.data]);
  const ev = q.data?.event;
  const board = live ?? ev?.leaderboard ?? null;
  const rows = board && boardRows(slug, board);
  const ranked = rows ? rows.projects.filter((p) => p.rank != null).length : 0;
  return (
    <OrgPage slug={slug} title="Leaderboard">
      <ErrorNote error={q.error} />
      {q.loading && !q.data && <Loading what="Computing the leaderboard" />}
      {q.data && !ev && <EventMissing slug={slug} />}
      {ev && (
        <>
          <p class="muted">
            The live calibrated ranking on the reviews submitted so far. It is a preview: it is not signed and nobody but the organizers sees it. To
            publish results, <Link href={`/e/${encodeURIComponent(slug)}/admin/calibration`}>run a calibration</Link>.
          </p>
          <ErrorNote error={feedError} />
          {!board && (
            <p class="notice-plain">
              The leaderboard cannot be computed yet: it needs submitted reviews of submitted projects. It appears here by itself once judges submit.
            </p>
          )}
          {board && rows && (
            <>
              <p class="board-meta" aria-live="polite">
                Computed <When at={board.computedAt} />
                {feedError ? '' : ', updates live'}.{' '}
                {board.connected ? (
                  <Badge tone="good">connected</Badge>
                ) : (
                  <Badge tone="warn">{board.components} components</Badge>
                )}
                {board.lambda != null && <span class="muted"> · ridge penalty λ = {num(board.lambda, 3)}</span>}
              </p>
              {!board.connected && (
                <p class="warning">
                  The judges and projects fall into {board.components} groups that share no project, so only the largest is ranked.{' '}
                  <Link href={`/e/${encodeURIComponent(slug)}/admin/assignments`}>Assign judges across the groups</Link> to compare everyone.
                </p>
              )}
              {ranked === 0 && (
                <p class="warning">
                  No project is ranked yet: a ranking needs submitted reviews ({ev.reviewsPerProject} per project is the target) from judges who share
                  projects.
                </p>
              )}
              <CalibrationView projects={rows.projects} judges={rows.judges} diagnostics={board.diagnostics} what="Leaderboard" />
            </>
          )}
        </>
      )}
    </OrgPage>
  );
}

// ---- calibration runs and publishing ----------------------------------------------------------

const Runs = graphql(`
  query OrgRuns($slug: String!) {
    event(slug: $slug) {
      id
      calibrationRuns { id createdAt seed bootstrap connected engineVersion inputsHash resultHash keyFingerprint lambda signature }
      publications { id version final publishedAt runId }
    }
  }
`);

type RunSummary = NonNullable<ResultOf<typeof Runs>['event']>['calibrationRuns'][number];

// A calibration runs in the background: starting it answers at once, and the job's
// subscription reports its stages until it stored the run (or failed).
const StartCalibration = graphql(`
  mutation OrgStartCalibration($event: String!, $seed: Int, $bootstrap: Int, $key: String) {
    startCalibration(event: $event, seed: $seed, bootstrap: $bootstrap, idempotencyKey: $key) {
      id
      state
    }
  }
`);

const FollowJob = graphql(`
  subscription OrgCalibrationJob($event: String!, $job: ID!) {
    calibrationJob(event: $event, job: $job) {
      id
      state
      stage
      stepsDone
      steps
      error
      run { id }
    }
  }
`);

type JobMessage = ResultOf<typeof FollowJob>['calibrationJob'];

const STAGES: Record<NonNullable<JobMessage['stage']>, string> = {
  READING: 'Reading the reviews',
  WEIGHTING: "Weighing each judge's noise",
  CROSS_VALIDATING: 'Cross-validating',
  FITTING: 'Fitting',
  BOOTSTRAPPING: 'Bootstrapping the rank intervals',
  STORING: 'Signing and storing the run',
};

/** The job started here: its id, and its latest message once one came. */
type StartedJob = { id: string; message?: JobMessage };

function JobProgress({ message: m }: { message?: JobMessage }) {
  const label = m?.stage ? STAGES[m.stage] : 'Starting';
  return (
    <div class="job-progress" role="status" aria-live="polite">
      <p>
        Computing in the background: {label}
        {m?.steps ? ` (${(m.stepsDone ?? 0).toLocaleString()} of ${m.steps.toLocaleString()})` : ''}…
      </p>
      {m?.steps ? <progress max={m.steps} value={m.stepsDone ?? 0} /> : <progress />}
      <p class="muted hint">You can leave this page: the run is stored when it is done, and appears under Runs.</p>
    </div>
  );
}

const PublishResults = graphql(`
  mutation OrgPublish($event: String!, $run: ID!, $final: Boolean, $key: String) {
    publishResults(event: $event, run: $run, final: $final, idempotencyKey: $key) { id version final }
  }
`);

// A run's detail in one request (`Event.calibrationRun(id:)`). Runs are immutable, so
// what was read is kept for the session.
const RunDetailQuery = graphql(`
  query OrgRunDetail($slug: String!, $id: ID!) {
    event(slug: $slug) {
      id
      calibrationRun(id: $id) {
        id
        diagnostics
        projects { projectExternalId project { id title } rank rankLow rankHigh quality stdError rawMean rawRank reviews excluded }
        judges { flag offset noise scale reviews judge { id email user { id displayName } } }
      }
    }
  }
`);

type RunDetail = { projects: ProjectRow[]; judges: JudgeRow[]; diagnostics: unknown };
const runCache = new Map<string, RunDetail>();

async function readRun(slug: string, runId: string): Promise<RunDetail> {
  const cached = runCache.get(runId);
  if (cached) return cached;
  const d = await request(RunDetailQuery, { slug, id: runId });
  const run = d.event?.calibrationRun;
  if (!run) throw new ApiError('This calibration run is not in the event.', 'NOT_FOUND');
  const detail = fullRunDetail(slug, run);
  runCache.set(runId, detail);
  return detail;
}

type FullRun = NonNullable<NonNullable<ResultOf<typeof RunDetailQuery>['event']>['calibrationRun']>;

function fullRunDetail(slug: string, r: FullRun): RunDetail {
  const rows = boardRows(slug, r);
  return { ...rows, diagnostics: r.diagnostics };
}

function RunDetailView({ slug, run }: { slug: string; run: RunSummary }) {
  const d = useLoad(() => readRun(slug, run.id), `${slug}/${run.id}`);
  return (
    <>
      <ErrorNote error={d.error} />
      {d.loading && !d.data && <Loading what="Reading the run" />}
      {d.data && <CalibrationView projects={d.data.projects} judges={d.data.judges} diagnostics={d.data.diagnostics} what="This run" />}
    </>
  );
}

function Publish({
  slug,
  run,
  nextVersion,
  finalDone,
  onPublished,
}: {
  slug: string;
  run: RunSummary;
  nextVersion: number;
  finalDone: boolean;
  onPublished: (version: number, final: boolean) => void;
}) {
  const [final, setFinal] = useState(false);
  const [confirming, setConfirming] = useState<string>();
  const m = useMutation(PublishResults);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirming) confirmRef.current?.focus();
  }, [confirming]);
  useEffect(() => {
    setConfirming(undefined);
    m.reset();
  }, [run.id]);
  if (finalDone) return <p class="muted">Final results are published: nothing more can be published in this event.</p>;
  return (
    <div class="publish">
      <div class="check">
        <input id="publish-final" type="checkbox" checked={final} onChange={(e) => setFinal(e.currentTarget.checked)} disabled={!!confirming} />
        <label for="publish-final">Final results</label>
      </div>
      <p class="muted hint">Provisional results can be replaced by a later version; after final results, nothing more is published.</p>
      {!confirming ? (
        <button
          type="button"
          onClick={() => {
            m.reset();
            setConfirming(retryKey());
          }}
        >
          Publish this run…
        </button>
      ) : (
        <div class="confirm" role="group" aria-labelledby="confirm-h">
          <p id="confirm-h">
            <strong>
              Publish this run as version {nextVersion}, {final ? 'final' : 'provisional'}?
            </strong>{' '}
            The ranking becomes public at once, signed, and cannot be withdrawn{final ? '; no later version can follow' : ''}.
          </p>
          <ErrorNote error={m.error} />
          <div class="actions">
            <button
              ref={confirmRef}
              type="button"
              class={final ? 'danger' : undefined}
              disabled={m.loading}
              onClick={async () => {
                const r = await m.run({ event: slug, run: run.id, final, key: confirming });
                if (r) {
                  setConfirming(undefined);
                  onPublished(r.publishResults.version, r.publishResults.final);
                }
              }}
            >
              {m.loading ? 'Publishing…' : `Confirm: publish ${final ? 'final' : 'provisional'} results`}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(undefined)} disabled={m.loading}>
              Cancel
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

export function CalibrationPage({ slug }: { slug: string }) {
  const q = useQuery(Runs, { slug });
  const [selected, setSelected] = useState<string | null>(() => new URLSearchParams(location.search).get('run'));
  const [seed, setSeed] = useState('');
  const [bootstrap, setBootstrap] = useState('');
  const [formError, setFormError] = useState('');
  const [notice, setNotice] = useState<ComponentChildren>();
  const start = useMutation(StartCalibration);
  const [job, setJob] = useState<StartedJob>();
  const [jobError, setJobError] = useState<ApiError>();
  const detailRef = useRef<HTMLHeadingElement>(null);

  const ev = q.data?.event;
  const runs = ev?.calibrationRuns ?? [];
  const pubs = ev?.publications ?? [];
  const current = runs.find((r) => r.id === selected) ?? runs[0];
  const finalDone = pubs.some((p) => p.final);
  const nextVersion = pubs.reduce((n, p) => Math.max(n, p.version), 0) + 1;
  const resultsHref = `/e/${encodeURIComponent(slug)}/results`;

  const pick = (id: string, focus = true) => {
    setSelected(id);
    const u = new URL(location.href);
    u.searchParams.set('run', id);
    history.replaceState(null, '', u.pathname + u.search);
    if (focus) setTimeout(() => detailRef.current?.focus(), 0);
  };

  useSubscription(
    FollowJob,
    { event: slug, job: job?.id ?? '' },
    async (d) => {
      const j = d.calibrationJob;
      if (j.state === 'RUNNING') {
        setJob({ id: j.id, message: j });
        return;
      }
      setJob(undefined);
      if (j.state === 'FAILED' || !j.run) {
        setJobError(new ApiError(`The calibration failed: ${j.error ?? 'no reason was given'}`, 'FAILED'));
        return;
      }
      await q.refetch();
      pick(j.run.id);
      setNotice('The run is computed and stored, signed.');
    },
    { skip: !job, onError: (e) => setJobError(e) },
  );

  const int = (s: string) => (s.trim() === '' ? null : /^\d+$/.test(s.trim()) ? Number(s.trim()) : NaN);

  return (
    <OrgPage slug={slug} title="Calibration & publishing">
      <ErrorNote error={q.error} />
      {q.loading && !q.data && <Loading />}
      {q.data && !ev && <EventMissing slug={slug} />}
      {ev && (
        <>
          <p class="muted">
            A calibration run takes each judge's severity out of the scores submitted so far and ranks the projects, with 90 % rank intervals and how sure the top places are.
            Every run is stored signed and never changes; publishing makes one run the public results.
          </p>
          <section aria-labelledby="run-h">
            <h2 id="run-h">Run calibration</h2>
            <form
              onSubmit={async (e) => {
                e.preventDefault();
                setNotice(undefined);
                const s = int(seed);
                const b = int(bootstrap);
                if (Number.isNaN(s) || Number.isNaN(b)) {
                  setFormError('Seed and bootstrap are whole numbers from 0 (or empty for the defaults).');
                  return;
                }
                setFormError('');
                setJobError(undefined);
                const r = await start.run({ event: slug, seed: s, bootstrap: b, key: retryKey() });
                if (r) setJob({ id: r.startCalibration.id });
              }}
            >
              <div class="row">
                <Field label="Seed" type="number" min={0} inputMode="numeric" value={seed} onValue={setSeed} hint="Default 1. Same reviews and seed, same result." />
                <Field label="Bootstrap" type="number" min={0} max={2000} inputMode="numeric" value={bootstrap} onValue={setBootstrap} hint="Draws behind the rank intervals, 0 to 2,000; default 200." />
              </div>
              {formError && (
                <p class="error" role="alert">
                  {formError}
                </p>
              )}
              <ErrorNote error={start.error ?? jobError} />
              <button type="submit" disabled={start.loading || !!job}>
                {start.loading || job ? 'Computing…' : 'Run calibration'}
              </button>
            </form>
            {job && <JobProgress message={job.message} />}
            <Notice>{notice}</Notice>
          </section>

          <section aria-labelledby="runs-h">
            <h2 id="runs-h">Runs</h2>
            {runs.length === 0 ? (
              <p class="muted">No run yet.</p>
            ) : (
              <Table caption={`${runs.length} ${runs.length === 1 ? 'run' : 'runs'}, newest first`}>
                <thead>
                  <tr>
                    <th scope="col">Created</th>
                    <th scope="col" class="num">
                      Seed
                    </th>
                    <th scope="col" class="num">
                      Bootstrap
                    </th>
                    <th scope="col">Graph</th>
                    <th scope="col">Engine</th>
                    <th scope="col">Inputs</th>
                    <th scope="col">Result</th>
                    <th scope="col">Published</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {runs.map((r) => {
                    const published = pubs.filter((p) => p.runId === r.id);
                    const isCurrent = current?.id === r.id;
                    return (
                      <tr class={isCurrent ? 'selected' : undefined} aria-current={isCurrent ? 'true' : undefined}>
                        <td>
                          <When at={r.createdAt} />
                        </td>
                        <td class="num">{r.seed}</td>
                        <td class="num">{r.bootstrap}</td>
                        <td>{r.connected ? <Badge tone="good">connected</Badge> : <Badge tone="warn">not connected</Badge>}</td>
                        <td>
                          <code>{r.engineVersion}</code>
                        </td>
                        <td>
                          <Hash value={r.inputsHash} />
                        </td>
                        <td>
                          <Hash value={r.resultHash} />
                        </td>
                        <td>{published.length ? published.map((p) => `v${p.version}${p.final ? ' final' : ''}`).join(', ') : <span class="muted">–</span>}</td>
                        <td>
                          {isCurrent ? (
                            <span class="muted">shown below</span>
                          ) : (
                            <button type="button" class="link" onClick={() => pick(r.id)}>
                              View<span class="visually-hidden"> the run of {new Date(r.createdAt).toLocaleString()}</span>
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </Table>
            )}
          </section>

          {current && (
            <section aria-labelledby="detail-h" class="run-detail">
              <h2 id="detail-h" tabIndex={-1} ref={detailRef}>
                Run of <When at={current.createdAt} />
              </h2>
              <dl class="run-facts">
                <dt>Seed</dt>
                <dd>{current.seed}</dd>
                <dt>Bootstrap</dt>
                <dd>{current.bootstrap === 0 ? '0 (no intervals)' : current.bootstrap}</dd>
                <dt>Ridge penalty λ</dt>
                <dd>{num(current.lambda, 3)}</dd>
                <dt>Engine</dt>
                <dd>
                  <code>{current.engineVersion}</code>
                </dd>
                <dt>Inputs hash</dt>
                <dd>
                  <Hash value={current.inputsHash} length={16} />
                </dd>
                <dt>Result hash</dt>
                <dd>
                  <Hash value={current.resultHash} length={16} />
                </dd>
                <dt>Signing key</dt>
                <dd>
                  <Hash value={current.keyFingerprint} length={16} />
                </dd>
              </dl>
              {!current.connected && (
                <p class="warning">The judge–project graph of this run is not connected: only its largest component is ranked.</p>
              )}
              <h3>Publish</h3>
              <Publish
                slug={slug}
                run={current}
                nextVersion={nextVersion}
                finalDone={finalDone}
                onPublished={async (version, final) => {
                  setNotice(
                    <>
                      Published version {version} ({final ? 'final' : 'provisional'}). <Link href={resultsHref}>See the public results</Link>.
                    </>,
                  );
                  await q.refetch();
                }}
              />
              <RunDetailView slug={slug} run={current} />
            </section>
          )}

          <section aria-labelledby="pubs-h">
            <h2 id="pubs-h">Publications</h2>
            {pubs.length === 0 ? (
              <p class="muted">Nothing is published yet.</p>
            ) : (
              <>
                <Table caption="Every publication, oldest first">
                  <thead>
                    <tr>
                      <th scope="col" class="num">
                        Version
                      </th>
                      <th scope="col">Kind</th>
                      <th scope="col">Published</th>
                      <th scope="col">Run</th>
                    </tr>
                  </thead>
                  <tbody>
                    {pubs.map((p) => {
                      const r = runs.find((x) => x.id === p.runId);
                      return (
                        <tr>
                          <td class="num">{p.version}</td>
                          <td>{p.final ? <Badge tone="good">final</Badge> : <Badge>provisional</Badge>}</td>
                          <td>
                            <When at={p.publishedAt} />
                          </td>
                          <td>
                            {r ? (
                              <button type="button" class="link" onClick={() => pick(r.id)}>
                                Run of {new Date(r.createdAt).toLocaleString()}
                              </button>
                            ) : (
                              <code>{p.runId}</code>
                            )}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </Table>
                <p>
                  <Link href={resultsHref}>See the public results</Link>
                </p>
              </>
            )}
          </section>
        </>
      )}
    </OrgPage>
  );
}
