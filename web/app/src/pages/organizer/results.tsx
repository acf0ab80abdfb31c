// The ranking side of organizing: the live, unsigned leaderboard (recomputed by the
// server after every change and pushed over `leaderboardUpdated`), and the signed
// calibration runs: run one, read it (forest plot, judge severity, flags), publish it.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, request, useMutation, useQuery, useSubscription } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { hasComparisons, num, type RankedRow } from '../../ranking';
import { Link } from '../../router';
import { Badge, Confirm, ErrorNote, Field, Hash, Loading, Notice, Table, When } from '../../ui';
import { CalibrationView, projectHref, type JudgeRow } from './calibration-view';
import { EventMissing, retryKey, useLoad } from './overview';
import { OrgPage } from './nav';
import './organizer-live.css';

// ---- the live leaderboard ------------------------------------------------------------------

const LeaderboardQuery = graphql(`
  query OrgLeaderboard($slug: String!) {
    event(slug: $slug) {
      id
      reviewsPerProject
      leaderboard {
        components computedAt connected diagnostics lambda
        projects { projectExternalId project { id title } rank rankLow rankHigh quality stdError rawMean rawRank reviews comparisons excluded }
        judges { flag offset noise scale reviews comparisons reliability judge { id email user { id displayName } } }
      }
    }
  }
`);

const LeaderboardFeed = graphql(`
  subscription OrgLeaderboardFeed($event: String!) {
    leaderboardUpdated(event: $event) {
      components computedAt connected diagnostics lambda
      projects { projectExternalId project { id title } rank rankLow rankHigh quality stdError rawMean rawRank reviews comparisons excluded }
      judges { flag offset noise scale reviews comparisons reliability judge { id email user { id displayName } } }
    }
  }
`);

type Board = NonNullable<NonNullable<ResultOf<typeof LeaderboardQuery>['event']>['leaderboard']>;

function boardRows(slug: string, b: Pick<Board, 'projects' | 'judges'>): { projects: RankedRow[]; judges: JudgeRow[] } {
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
      comparisons: p.comparisons ?? null,
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
      comparisons: j.comparisons,
      reliability: j.reliability ?? null,
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
            The live calibrated ranking on the reviews submitted and the comparisons made so far. It is a preview: it is not signed and nobody but the organizers sees it. To
            publish results, <Link href={`/e/${encodeURIComponent(slug)}/admin/calibration`}>run a calibration</Link>.
          </p>
          <ErrorNote error={feedError} />
          {!board && (
            <p class="notice-plain">
              The leaderboard cannot be computed yet: it needs submitted reviews or comparisons of submitted projects. It appears here by itself as soon as judges
              submit reviews or compare projects.
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
                  {hasComparisons(rows.projects) &&
                    ' Scores and comparisons meet only in projects that have both: a track judged by scores and a track judged by comparisons are ranked together only when some projects get both (a track judged both ways).'}
                </p>
              )}
              {ranked === 0 && (
                <p class="warning">
                  No project is ranked yet: a ranking needs submitted reviews ({ev.reviewsPerProject} per project is the target) from judges who share
                  projects, or judges' comparisons.
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
        projects { projectExternalId project { id title } rank rankLow rankHigh quality stdError rawMean rawRank reviews comparisons excluded }
        judges { flag offset noise scale reviews comparisons reliability judge { id email user { id displayName } } }
      }
    }
  }
`);

type RunDetail = { projects: RankedRow[]; judges: JudgeRow[]; diagnostics: unknown };
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
  // One retry key per question asked: a repeated "yes" publishes once.
  const [key, setKey] = useState<string>();
  const m = useMutation(PublishResults);
  useEffect(() => {
    setKey(undefined);
    m.reset();
  }, [run.id]);
  if (finalDone) return <p class="muted">Final results are published: nothing more can be published in this event.</p>;
  return (
    <div class="publish">
      <div class="check">
        <input id="publish-final" type="checkbox" checked={final} onChange={(e) => setFinal(e.currentTarget.checked)} disabled={!!key} />
        <label for="publish-final">Final results</label>
      </div>
      <p class="muted hint">Provisional results can be replaced by a later version; after final results, nothing more is published.</p>
      <Confirm
        key={run.id}
        primary
        action="Publish this run…"
        groupLabel={`Publish this run as version ${nextVersion}, ${final ? 'final' : 'provisional'}?`}
        question={
          <>
            <strong>
              Publish this run as version {nextVersion}, {final ? 'final' : 'provisional'}?
            </strong>{' '}
            The ranking becomes public at once, signed, and cannot be withdrawn{final ? '; no later version can follow' : ''}.
          </>
        }
        error={m.error}
        yes={m.loading ? 'Publishing…' : `Confirm: publish ${final ? 'final' : 'provisional'} results`}
        yesTone={final ? 'danger' : 'plain'}
        busy={m.loading}
        onAsk={() => {
          m.reset();
          setKey(retryKey());
        }}
        onNo={() => setKey(undefined)}
        onYes={async () => {
          const r = await m.run({ event: slug, run: run.id, final, key: key ?? retryKey() });
          if (!r) return false;
          setKey(undefined);
          onPublished(r.publishResults.version, r.publishResults.final);
        }}
      />
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
            A calibration run takes each judge's severity out of the scores submitted so far, weighs each judge's comparisons by how reliable they look, and ranks
            the projects from both, with 90 % rank intervals and how sure the top places are.
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
                          <Hash value={r.inputsHash} length={12} />
                        </td>
                        <td>
                          <Hash value={r.resultHash} length={12} />
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
