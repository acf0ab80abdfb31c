// Who reviews what: the assignment planner (preview, then apply the same plan), the
// current assignments with unassigning, a manual assignment, and the recusals.
import { useState } from 'preact/hooks';
import { request, useMutation } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { allPages } from '../../paging';
import { CoveragePlot } from '../../plots';
import { Link } from '../../router';
import { Badge, ErrorNote, Field, Loading, Notice, Select, Table } from '../../ui';
import { coverageCounts, EventMissing, eventProjects, useLoad } from './overview';
import { OrgPage } from './nav';
import './organizer-live.css';

// ---- reading ---------------------------------------------------------------------------

const Judges = graphql(`
  query OrgJudges($slug: String!, $after: String) {
    event(slug: $slug) {
      id
      reviewsPerProject
      members(role: JUDGE, first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id externalId email user { id displayName } }
      }
    }
  }
`);

type Judge = NonNullable<ResultOf<typeof Judges>['event']>['members']['nodes'][number];

const Assignments = graphql(`
  query OrgAssignments($slug: String!, $after: String) {
    event(slug: $slug) {
      id
      assignments(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          status
          source
          review { id submitted }
          judge { id externalId email user { id displayName } }
          project { id title externalId }
        }
      }
    }
  }
`);

type Assignment = NonNullable<ResultOf<typeof Assignments>['event']>['assignments']['nodes'][number];

export function judgeName(j: { email?: string | null; user: { displayName: string } }) {
  return j.email ? `${j.user.displayName} (${j.email})` : j.user.displayName;
}

/** The event's judges, the first page telling whether the event exists at all. */
async function judgesOf(slug: string): Promise<{ judges: Judge[]; target: number } | null> {
  let target = 0;
  let missing = false;
  const judges = await allPages(async (after) => {
    const d = await request(Judges, { slug, after });
    if (!d.event) {
      missing = true;
      return null;
    }
    target = d.event.reviewsPerProject;
    return d.event.members;
  });
  return missing ? null : { judges, target };
}

async function assignmentsOf(slug: string): Promise<Assignment[]> {
  return allPages(async (after) => (await request(Assignments, { slug, after })).event?.assignments);
}

// ---- the planner -------------------------------------------------------------------------

const AutoAssign = graphql(`
  mutation OrgAutoAssign($event: String!, $k: Int, $maxLoad: Int, $seed: Int, $apply: Boolean) {
    autoAssign(event: $event, k: $k, maxLoad: $maxLoad, seed: $seed, apply: $apply) {
      applied
      components
      connected
      totalShortfall
      coverage { project assigned target shortfall reason }
      loads { judge load }
      edges { judge project }
    }
  }
`);

type Plan = ResultOf<typeof AutoAssign>['autoAssign'];
type PlanParams = { k: number | null; maxLoad: number | null; seed: number | null };

/** A whole number from a field, null when empty; NaN when it is not one. */
function intOrNull(s: string): number | null {
  const t = s.trim();
  if (!t) return null;
  return /^-?\d+$/.test(t) ? Number(t) : NaN;
}

function describeParams(p: PlanParams, target: number) {
  const parts = [`${p.k ?? target} reviews per project`];
  parts.push(p.maxLoad != null ? `at most ${p.maxLoad} per judge` : 'no load limit');
  if (p.seed != null) parts.push(`seed ${p.seed}`);
  return parts.join(', ');
}

function PlanView({
  plan,
  params,
  target,
  projectTitle,
  judgeLabel,
  done,
}: {
  plan: Plan;
  params: PlanParams;
  target: number;
  projectTitle: (ext: string) => string;
  judgeLabel: (key: string) => string;
  done: (ext: string) => number;
}) {
  return (
    <div class="plan">
      <div class="stats">
        <div class="stat">
          <strong>{plan.edges.length}</strong> new assignments
        </div>
        <div class="stat">
          <strong>{plan.totalShortfall}</strong> reviews short
        </div>
        <div class="stat">
          <strong>{plan.components}</strong> {plan.components === 1 ? 'component' : 'components'}
        </div>
      </div>
      <p>
        Plan for {describeParams(params, target)}.{' '}
        {plan.connected ? (
          <Badge tone="good">connected</Badge>
        ) : (
          <Badge tone="warn">not connected</Badge>
        )}{' '}
        {plan.connected
          ? 'Every judge can be compared with every other through shared projects.'
          : `The judges and projects fall into ${plan.components} groups that share no project; calibration ranks only the largest.`}
      </p>
      <CoveragePlot
        rows={plan.coverage.map((c) => ({ label: projectTitle(c.project), done: done(c.project), assigned: c.assigned, target: c.target }))}
        caption="Reviews per project once the plan is applied, against the target."
      />
      <h3>Coverage</h3>
      <Table caption="Coverage of each project under the plan">
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col" class="num">
              Target
            </th>
            <th scope="col" class="num">
              Assigned
            </th>
            <th scope="col" class="num">
              Shortfall
            </th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {plan.coverage.map((c) => (
            <tr>
              <td>{projectTitle(c.project)}</td>
              <td class="num">{c.target}</td>
              <td class="num">{c.assigned}</td>
              <td class="num">{c.shortfall > 0 ? <Badge tone="warn">{c.shortfall}</Badge> : 0}</td>
              <td>{c.reason ?? <span class="muted">–</span>}</td>
            </tr>
          ))}
        </tbody>
      </Table>
      <div class="live-split">
        <div>
          <h3>Judge loads</h3>
          <Table caption="Assignments per judge once applied">
            <thead>
              <tr>
                <th scope="col">Judge</th>
                <th scope="col" class="num">
                  Load
                </th>
              </tr>
            </thead>
            <tbody>
              {plan.loads.map((l) => (
                <tr>
                  <td>{judgeLabel(l.judge)}</td>
                  <td class="num">{l.load}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
        <div>
          <h3>Planned pairs</h3>
          {plan.edges.length === 0 ? (
            <p class="muted">Nothing new to assign: the existing assignments already meet the plan.</p>
          ) : (
            <Table caption="New judge and project pairs">
              <thead>
                <tr>
                  <th scope="col">Judge</th>
                  <th scope="col">Project</th>
                </tr>
              </thead>
              <tbody>
                {plan.edges.map((e) => (
                  <tr>
                    <td>{judgeLabel(e.judge)}</td>
                    <td>{projectTitle(e.project)}</td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </div>
      </div>
    </div>
  );
}

const AssignJudge = graphql(`
  mutation OrgAssignJudge($event: String!, $judge: ID!, $project: ID!) {
    assignJudge(event: $event, judge: $judge, project: $project) { id }
  }
`);

const UnassignJudge = graphql(`
  mutation OrgUnassignJudge($assignment: ID!) {
    unassignJudge(assignment: $assignment)
  }
`);

function statusTone(s: string): 'good' | 'warn' | 'plain' {
  return s === 'done' ? 'good' : s === 'pending' ? 'plain' : 'warn';
}

export function AssignmentsPage({ slug }: { slug: string }) {
  const base = useLoad(async () => {
    const [j, p] = await Promise.all([judgesOf(slug), eventProjects(slug)]);
    return j && { ...j, projects: p.projects };
  }, slug);
  const current = useLoad(() => assignmentsOf(slug), slug);
  const counts = useLoad(() => coverageCounts(slug), slug);

  const [k, setK] = useState<string>();
  const [maxLoad, setMaxLoad] = useState('');
  const [seed, setSeed] = useState('');
  const [plan, setPlan] = useState<{ plan: Plan; params: PlanParams; applied: boolean }>();
  const [formError, setFormError] = useState('');
  const [notice, setNotice] = useState('');
  const preview = useMutation(AutoAssign);
  const apply = useMutation(AutoAssign);

  const [judge, setJudge] = useState('');
  const [project, setProject] = useState('');
  const assign = useMutation(AssignJudge);
  const unassign = useMutation(UnassignJudge);
  const [unassigning, setUnassigning] = useState<string>();

  const data = base.data;
  const target = data?.target ?? 0;
  const kValue = k ?? (data ? String(data.target) : '');
  const judges = data?.judges ?? [];
  const projects = data?.projects ?? [];
  const submitted = projects.filter((p) => p.status === 'SUBMITTED');
  const byExt = new Map(projects.map((p) => [p.externalId ?? p.id, p]));
  const byKey = new Map(judges.map((j) => [j.externalId ?? j.id, j]));
  const projectTitle = (ext: string) => byExt.get(ext)?.title ?? ext;
  const judgeLabel = (key: string) => {
    const j = byKey.get(key);
    return j ? judgeName(j) : key;
  };
  const doneOf = (ext: string) => {
    const p = byExt.get(ext);
    return (p && counts.data?.get(p.id)?.done) ?? 0;
  };

  const reloadAll = () => Promise.all([current.reload(), counts.reload()]);

  const params = (): PlanParams | null => {
    const p = { k: intOrNull(kValue), maxLoad: intOrNull(maxLoad), seed: intOrNull(seed) };
    if ([p.k, p.maxLoad, p.seed].some((v) => Number.isNaN(v))) {
      setFormError('Reviews per project, max load and seed are whole numbers (or empty for the defaults).');
      return null;
    }
    setFormError('');
    return p;
  };

  const runPreview = async () => {
    setNotice('');
    apply.reset();
    const p = params();
    if (!p) return;
    const r = await preview.run({ event: slug, ...p, apply: false });
    if (r) setPlan({ plan: r.autoAssign, params: p, applied: false });
  };

  const runApply = async () => {
    if (!plan) return;
    const r = await apply.run({ event: slug, ...plan.params, apply: true });
    if (r) {
      setPlan({ plan: r.autoAssign, params: plan.params, applied: true });
      setNotice(
        r.autoAssign.applied === 0
          ? 'Nothing new was assigned: the existing assignments already meet the plan.'
          : `Applied: ${r.autoAssign.applied} new ${r.autoAssign.applied === 1 ? 'assignment' : 'assignments'}. Judges see them in their queue now.`,
      );
      await reloadAll();
    }
  };

  return (
    <OrgPage slug={slug} title="Assignments">
      <ErrorNote error={base.error} />
      {base.loading && !base.data && <Loading />}
      {base.data === null && <EventMissing slug={slug} />}
      {data && (
        <>
          <section aria-labelledby="auto-h">
            <h2 id="auto-h">Auto-assign</h2>
            <p class="muted">
              Brings every submitted project to the target number of reviews, balancing the judges' loads and honouring tracks, own teams and{' '}
              <Link href={`/e/${encodeURIComponent(slug)}/admin/recusals`}>recusals</Link>. Existing assignments are kept. Preview first; nothing is
              written until you apply.
            </p>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void runPreview();
              }}
            >
              <div class="row">
                <Field label="Reviews per project (k)" type="number" min={1} max={50} inputMode="numeric" value={kValue} onValue={(v) => setK(v)} />
                <Field label="Max load per judge" type="number" min={1} inputMode="numeric" value={maxLoad} onValue={setMaxLoad} hint="Empty: no limit." />
                <Field label="Seed" type="number" min={0} inputMode="numeric" value={seed} onValue={setSeed} hint="Breaks ties; the same seed gives the same plan." />
              </div>
              {formError && (
                <p class="error" role="alert">
                  {formError}
                </p>
              )}
              <ErrorNote error={preview.error} />
              <div class="actions">
                <button type="submit" disabled={preview.loading}>
                  {preview.loading ? 'Planning…' : 'Preview'}
                </button>
              </div>
            </form>
            {plan && (
              <section class="plan-box" aria-labelledby="plan-h">
                <h3 id="plan-h">{plan.applied ? 'Applied plan' : 'Planned assignments (not applied yet)'}</h3>
                <PlanView plan={plan.plan} params={plan.params} target={target} projectTitle={projectTitle} judgeLabel={judgeLabel} done={doneOf} />
                <ErrorNote error={apply.error} />
                {!plan.applied && (
                  <div class="actions">
                    <button type="button" onClick={() => void runApply()} disabled={apply.loading}>
                      {apply.loading ? 'Applying…' : 'Apply'}
                    </button>
                    <button type="button" class="secondary" onClick={() => setPlan(undefined)}>
                      Discard
                    </button>
                  </div>
                )}
              </section>
            )}
            <Notice>{notice}</Notice>
          </section>

          <section aria-labelledby="manual-h">
            <h2 id="manual-h">Assign by hand</h2>
            {judges.length === 0 || submitted.length === 0 ? (
              <p class="muted">
                {judges.length === 0 ? (
                  <>
                    No judge yet: <Link href={`/e/${encodeURIComponent(slug)}/admin/people`}>invite judges</Link>.
                  </>
                ) : (
                  'No project is submitted yet.'
                )}
              </p>
            ) : (
              <form
                onSubmit={async (e) => {
                  e.preventDefault();
                  setNotice('');
                  const j = judge || judges[0].id;
                  const p = project || submitted[0].id;
                  if (await assign.run({ event: slug, judge: j, project: p })) {
                    const jj = judges.find((x) => x.id === j);
                    const pp = submitted.find((x) => x.id === p);
                    setNotice(`${jj ? jj.user.displayName : 'The judge'} now reviews ${pp ? pp.title : 'the project'}.`);
                    await reloadAll();
                  }
                }}
              >
                <div class="row">
                  <Select label="Judge" value={judge || judges[0].id} onValue={setJudge} options={judges.map((j) => ({ value: j.id, label: judgeName(j) }))} />
                  <Select label="Project" value={project || submitted[0].id} onValue={setProject} options={submitted.map((p) => ({ value: p.id, label: p.title }))} />
                </div>
                <ErrorNote error={assign.error} />
                <button type="submit" disabled={assign.loading}>
                  Assign
                </button>
              </form>
            )}
          </section>

          <section aria-labelledby="current-h">
            <h2 id="current-h">Current assignments</h2>
            <ErrorNote error={current.error} />
            <ErrorNote error={unassign.error} />
            {current.loading && !current.data && <Loading what="Reading the assignments" />}
            {current.data && current.data.length === 0 && <p class="muted">No assignments yet.</p>}
            {current.data && current.data.length > 0 && (
              <Table caption={`${current.data.length} ${current.data.length === 1 ? 'assignment' : 'assignments'}`}>
                <thead>
                  <tr>
                    <th scope="col">Project</th>
                    <th scope="col">Judge</th>
                    <th scope="col">Status</th>
                    <th scope="col">Source</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {current.data.map((a) => (
                    <tr>
                      <td>{a.project.title}</td>
                      <td>{judgeName(a.judge)}</td>
                      <td>
                        <Badge tone={statusTone(a.status)}>{a.status}</Badge>
                        {a.review && !a.review.submitted && <span class="muted"> (draft)</span>}
                      </td>
                      <td>{a.source}</td>
                      <td>
                        {!a.review && a.status !== 'done' && (
                          <button
                            type="button"
                            class="secondary small"
                            disabled={unassigning === a.id}
                            aria-label={`Unassign ${a.judge.user.displayName} from ${a.project.title}`}
                            onClick={async () => {
                              setNotice('');
                              setUnassigning(a.id);
                              const ok = await unassign.run({ assignment: a.id });
                              setUnassigning(undefined);
                              if (ok) {
                                setNotice(`${a.judge.user.displayName} no longer reviews ${a.project.title}.`);
                                await reloadAll();
                              }
                            }}
                          >
                            Unassign
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
          </section>
        </>
      )}
    </OrgPage>
  );
}

// ---- recusals --------------------------------------------------------------------------

const Recusals = graphql(`
  query OrgRecusals($slug: String!) {
    event(slug: $slug) {
      id
      recusals { id reason judge { id email user { id displayName } } team { id name } }
    }
  }
`);

const Teams = graphql(`
  query OrgTeams($slug: String!, $after: String) {
    event(slug: $slug) {
      id
      teams(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id name }
      }
    }
  }
`);

const RecuseJudge = graphql(`
  mutation OrgRecuseJudge($event: String!, $judge: ID!, $team: ID!, $reason: String) {
    recuseJudge(event: $event, judge: $judge, team: $team, reason: $reason) { id }
  }
`);

export function RecusalsPage({ slug }: { slug: string }) {
  const list = useLoad(async () => (await request(Recusals, { slug })).event, slug);
  const choices = useLoad(async () => {
    const [j, teams] = await Promise.all([judgesOf(slug), allPages(async (after) => (await request(Teams, { slug, after })).event?.teams)]);
    return { judges: j?.judges ?? [], teams };
  }, slug);
  const [judge, setJudge] = useState('');
  const [team, setTeam] = useState('');
  const [reason, setReason] = useState('');
  const [notice, setNotice] = useState('');
  const recuse = useMutation(RecuseJudge);
  const judges = choices.data?.judges ?? [];
  const teams = choices.data?.teams ?? [];

  return (
    <OrgPage slug={slug} title="Recusals">
      <ErrorNote error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data === null && <EventMissing slug={slug} />}
      {list.data && (
        <>
          <p class="muted">
            A recusal keeps a judge away from every project of a team, now and later: their existing assignments to it are set aside (status{' '}
            <em>recused</em>) and the planner never assigns them there.
          </p>
          <section aria-labelledby="declare-h">
            <h2 id="declare-h">Declare a conflict</h2>
            <ErrorNote error={choices.error} />
            {choices.data && (judges.length === 0 || teams.length === 0) ? (
              <p class="muted">{judges.length === 0 ? 'No judge yet.' : 'No team yet.'}</p>
            ) : (
              choices.data && (
                <form
                  class="narrow"
                  onSubmit={async (e) => {
                    e.preventDefault();
                    setNotice('');
                    const j = judge || judges[0].id;
                    const t = team || teams[0].id;
                    if (await recuse.run({ event: slug, judge: j, team: t, reason: reason.trim() || null })) {
                      const jj = judges.find((x) => x.id === j);
                      const tt = teams.find((x) => x.id === t);
                      setNotice(`${jj?.user.displayName ?? 'The judge'} is recused from ${tt?.name ?? 'the team'}.`);
                      setReason('');
                      await list.reload();
                    }
                  }}
                >
                  <Select label="Judge" value={judge || judges[0].id} onValue={setJudge} options={judges.map((j) => ({ value: j.id, label: judgeName(j) }))} />
                  <Select label="Team" value={team || teams[0].id} onValue={setTeam} options={teams.map((t) => ({ value: t.id, label: t.name }))} />
                  <Field label="Reason" value={reason} onValue={setReason} maxLength={500} hint="For the record (optional), e.g. “former colleague”." />
                  <ErrorNote error={recuse.error} />
                  <button type="submit" disabled={recuse.loading}>
                    Recuse
                  </button>
                </form>
              )
            )}
            <Notice>{notice}</Notice>
          </section>
          <section aria-labelledby="recusals-h">
            <h2 id="recusals-h">Declared conflicts</h2>
            {list.data.recusals.length === 0 ? (
              <p class="muted">None declared.</p>
            ) : (
              <Table caption={`${list.data.recusals.length} declared`}>
                <thead>
                  <tr>
                    <th scope="col">Judge</th>
                    <th scope="col">Team</th>
                    <th scope="col">Reason</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.recusals.map((r) => (
                    <tr>
                      <td>{judgeName(r.judge)}</td>
                      <td>{r.team.name}</td>
                      <td>{r.reason || <span class="muted">–</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
          </section>
        </>
      )}
    </OrgPage>
  );
}
