// The organizer's records: moderating projects (hide, disqualify, duplicates, track
// changes), the CSV exports and the event's audit log.
import { useMemo, useState } from 'preact/hooks';
import { useMutation, useQuery } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { LoadMore, usePaged } from '../../paging';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Badge, download, ErrorNote, Field, Hash, Loading, Notice, Select, Table, When } from '../../ui';
import { OrgPage } from './nav';
import './organizer-admin.css';

// ---- /e/:slug/admin/moderation -------------------------------------------------------

const TeamProjects = graphql(`
  query ModerationProjects($slug: String!, $first: Int, $after: String) {
    event(slug: $slug) {
      id
      teams(first: $first, after: $after) {
        totalCount
        pageInfo { endCursor hasNextPage }
        nodes {
          id name
          projects {
            id title status hiddenReason disqualifiedReason submittedAt repoUrl
            track { id name }
            duplicateOf { id title }
          }
        }
      }
    }
  }
`);

const ModerationExtras = graphql(`
  query ModerationExtras($slug: String!) {
    event(slug: $slug) {
      id
      tracks { id name }
      duplicateSuggestions { reason similarity project { id title } of { id title } }
    }
  }
`);

const Hide = graphql(`
  mutation HideProject($id: ID!, $reason: String!) { hideProject(id: $id, reason: $reason) { id hiddenReason } }
`);
const Unhide = graphql(`
  mutation UnhideProject($id: ID!) { unhideProject(id: $id) { id hiddenReason } }
`);
const Disqualify = graphql(`
  mutation DisqualifyProject($id: ID!, $reason: String!) { disqualifyProject(id: $id, reason: $reason) { id disqualifiedReason } }
`);
const Requalify = graphql(`
  mutation RequalifyProject($id: ID!) { requalifyProject(id: $id) { id disqualifiedReason } }
`);
const MarkDuplicate = graphql(`
  mutation MarkDuplicate($id: ID!, $of: ID!) { markDuplicate(id: $id, of: $of) { id duplicateOf { id } } }
`);
const ClearDuplicate = graphql(`
  mutation ClearDuplicate($id: ID!) { clearDuplicate(id: $id) { id duplicateOf { id } } }
`);
const ChangeTrack = graphql(`
  mutation ChangeProjectTrack($id: ID!, $track: ID!, $reason: String!) {
    changeProjectTrack(id: $id, track: $track, reason: $reason) { id track { id name } }
  }
`);

type TeamNode = NonNullable<ResultOf<typeof TeamProjects>['event']>['teams']['nodes'][number];
type Proj = TeamNode['projects'][number] & { team: { id: string; name: string } };
type Track = { id: string; name: string };

const FILTERS = [
  { value: '', label: 'Every project' },
  { value: 'SUBMITTED', label: 'Submitted' },
  { value: 'DRAFT', label: 'Drafts' },
  { value: 'WITHDRAWN', label: 'Withdrawn' },
  { value: 'hidden', label: 'Hidden' },
  { value: 'disqualified', label: 'Disqualified' },
  { value: 'duplicate', label: 'Marked duplicate' },
];

function matches(p: Proj, f: string) {
  if (!f) return true;
  if (f === 'hidden') return !!p.hiddenReason;
  if (f === 'disqualified') return !!p.disqualifiedReason;
  if (f === 'duplicate') return !!p.duplicateOf;
  return p.status === f;
}

export function ModerationPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const skip = !viewer;
  // Event.projects is the public gallery (no drafts, hidden or duplicates): every project
  // is reached through its team instead, which organizers see whole.
  const teams = usePaged(TeamProjects, { slug }, (r) => r.event?.teams, { skip, pageSize: 10, all: true });
  const extras = useQuery(ModerationExtras, { slug }, { skip });
  const [filter, setFilter] = useState('');
  const projects: Proj[] = useMemo(
    () => teams.items.flatMap((t) => t.projects.map((p) => ({ ...p, team: { id: t.id, name: t.name } }))).sort((a, b) => a.title.localeCompare(b.title)),
    [teams.items],
  );
  const tracks = extras.data?.event?.tracks ?? [];
  const suggestions = extras.data?.event?.duplicateSuggestions ?? [];
  const reload = async () => {
    await Promise.all([teams.reload(), extras.refetch()]);
  };
  const shown = projects.filter((p) => matches(p, filter));
  const count = (f: string) => projects.filter((p) => matches(p, f)).length;

  return (
    <OrgPage slug={slug} title="Moderation">
      <p class="muted">
        Hidden projects and duplicates leave the public gallery and the ranking; disqualified ones leave the ranking. The team sees the reason you give. Every action is recorded in the audit log.
      </p>
      <ErrorNote error={teams.error} />
      <section aria-labelledby="dups-h">
        <h2 id="dups-h">Likely duplicates</h2>
        <ErrorNote error={extras.error} />
        {extras.loading && !extras.data ? (
          <Loading what="Looking for duplicates" />
        ) : suggestions.length === 0 ? (
          <p class="muted">No likely duplicates among the submitted projects.</p>
        ) : (
          <Suggestions suggestions={suggestions} onChanged={reload} />
        )}
      </section>

      <section aria-labelledby="projects-h">
        <h2 id="projects-h">Projects</h2>
        {teams.loading && projects.length === 0 ? (
          <Loading what="Loading projects" />
        ) : (
          <>
            <ul class="stats org-stats" aria-label="Counts">
              {FILTERS.map((f) => (
                <li class="stat" key={f.value}>
                  <strong>{count(f.value)}</strong> {f.label.toLowerCase()}
                </li>
              ))}
            </ul>
            <div class="org-toolbar">
              <Select label="Show" value={filter} onValue={setFilter} options={FILTERS} />
            </div>
            {shown.length === 0 ? (
              <p class="muted">No projects {filter ? 'of this kind' : 'yet'}.</p>
            ) : (
              <ul class="org-outbox">
                {shown.map((p) => (
                  <ProjectCard key={p.id} slug={slug} p={p} all={projects} tracks={tracks} onChanged={reload} />
                ))}
              </ul>
            )}
            <p class="muted">
              {projects.length} projects of {teams.total} teams.
            </p>
          </>
        )}
      </section>
    </OrgPage>
  );
}

type Suggestion = NonNullable<ResultOf<typeof ModerationExtras>['event']>['duplicateSuggestions'][number];

function Suggestions({ suggestions, onChanged }: { suggestions: Suggestion[]; onChanged: () => Promise<void> }) {
  const m = useMutation(MarkDuplicate);
  const [done, setDone] = useState('');
  return (
    <>
      <ErrorNote error={m.error} />
      <Notice>{done}</Notice>
      <div class="org-wide">
        <Table caption="Suggested duplicates">
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Looks like (earlier)</th>
              <th scope="col">Why</th>
              <th scope="col" class="num">
                Similarity
              </th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {suggestions.map((s) => (
              <tr key={`${s.project.id}-${s.of.id}`}>
                <td>{s.project.title}</td>
                <td>{s.of.title}</td>
                <td>{s.reason === 'same_repository' ? 'same repository' : s.reason === 'similar_text' ? 'similar title and summary' : s.reason}</td>
                <td class="num">{Math.round(s.similarity * 100)}%</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    disabled={m.loading}
                    aria-label={`Mark ${s.project.title} as duplicate of ${s.of.title}`}
                    onClick={async () => {
                      setDone('');
                      const r = await m.run({ id: s.project.id, of: s.of.id });
                      if (r) {
                        setDone(`${s.project.title} is marked a duplicate of ${s.of.title}.`);
                        await onChanged();
                      }
                    }}
                  >
                    Mark as duplicate
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      </div>
    </>
  );
}

function statusTone(s: string): 'good' | 'warn' | 'plain' {
  return s === 'SUBMITTED' ? 'good' : s === 'DRAFT' ? 'warn' : 'plain';
}

function ProjectCard({ slug, p, all, tracks, onChanged }: { slug: string; p: Proj; all: Proj[]; tracks: Track[]; onChanged: () => Promise<void> }) {
  const hide = useMutation(Hide);
  const unhide = useMutation(Unhide);
  const dq = useMutation(Disqualify);
  const rq = useMutation(Requalify);
  const dup = useMutation(MarkDuplicate);
  const undup = useMutation(ClearDuplicate);
  const move = useMutation(ChangeTrack);
  const [hideReason, setHideReason] = useState('');
  const [dqReason, setDqReason] = useState('');
  const [of, setOf] = useState('');
  const [track, setTrack] = useState('');
  const [moveReason, setMoveReason] = useState('');
  const [done, setDone] = useState('');
  const busy = [hide, unhide, dq, rq, dup, undup, move].some((m) => m.loading);
  const error = hide.error ?? unhide.error ?? dq.error ?? rq.error ?? dup.error ?? undup.error ?? move.error;
  const resetAll = () => {
    [hide, unhide, dq, rq, dup, undup, move].forEach((m) => m.reset());
    setDone('');
  };
  const act = async <T,>(run: () => Promise<T | undefined>, said: string) => {
    resetAll();
    const r = await run();
    if (r) {
      setDone(said);
      await onChanged();
    }
    return r;
  };
  const others = all.filter((o) => o.id !== p.id);
  const headingId = `p-${p.id}`;
  return (
    <li class="card" data-project={p.id}>
      <h3 id={headingId} class="org-wrap">
        {p.status === 'SUBMITTED' && !p.hiddenReason && !p.duplicateOf ? <Link href={`/e/${encodeURIComponent(slug)}/projects/${encodeURIComponent(p.id)}`}>{p.title}</Link> : p.title}
      </h3>
      <p class="muted">
        {p.team.name} · {p.track.name}
        {p.submittedAt && (
          <>
            {' '}
            · submitted <When at={p.submittedAt} />
          </>
        )}
      </p>
      <p class="org-status">
        <Badge tone={statusTone(p.status)}>{p.status.toLowerCase()}</Badge>
        {p.hiddenReason && <Badge tone="bad">hidden</Badge>}
        {p.disqualifiedReason && <Badge tone="bad">disqualified</Badge>}
        {p.duplicateOf && <Badge tone="warn">duplicate</Badge>}
      </p>
      {(p.hiddenReason || p.disqualifiedReason || p.duplicateOf) && (
        <dl class="org-current">
          {p.hiddenReason && (
            <>
              <dt>Hidden because</dt>
              <dd>{p.hiddenReason}</dd>
            </>
          )}
          {p.disqualifiedReason && (
            <>
              <dt>Disqualified because</dt>
              <dd>{p.disqualifiedReason}</dd>
            </>
          )}
          {p.duplicateOf && (
            <>
              <dt>Duplicate of</dt>
              <dd>{p.duplicateOf.title}</dd>
            </>
          )}
        </dl>
      )}
      <ErrorNote error={error} />
      <Notice>{done}</Notice>
      <details class="org-payload">
        <summary>Moderate {p.title}</summary>
        <div class="org-project-actions">
          {p.hiddenReason ? (
            <div>
              <button type="button" class="secondary" disabled={busy} onClick={() => act(() => unhide.run({ id: p.id }), 'Shown again.')}>
                Unhide
              </button>
            </div>
          ) : (
            <form
              class="org-inline"
              onSubmit={async (e) => {
                e.preventDefault();
                if (await act(() => hide.run({ id: p.id, reason: hideReason.trim() }), 'Hidden from the gallery and the ranking.')) setHideReason('');
              }}
            >
              <Field label="Reason for hiding" required maxLength={500} value={hideReason} onValue={setHideReason} />
              <button type="submit" class="danger" disabled={busy}>
                Hide
              </button>
            </form>
          )}
          {p.disqualifiedReason ? (
            <div>
              <button type="button" class="secondary" disabled={busy} onClick={() => act(() => rq.run({ id: p.id }), 'Requalified.')}>
                Requalify
              </button>
            </div>
          ) : (
            <form
              class="org-inline"
              onSubmit={async (e) => {
                e.preventDefault();
                if (await act(() => dq.run({ id: p.id, reason: dqReason.trim() }), 'Disqualified: out of the ranking.')) setDqReason('');
              }}
            >
              <Field label="Reason for disqualifying" required maxLength={500} value={dqReason} onValue={setDqReason} />
              <button type="submit" class="danger" disabled={busy}>
                Disqualify
              </button>
            </form>
          )}
          {p.duplicateOf ? (
            <div>
              <button type="button" class="secondary" disabled={busy} onClick={() => act(() => undup.run({ id: p.id }), 'No longer a duplicate.')}>
                Clear duplicate
              </button>
            </div>
          ) : (
            others.length > 0 && (
              <form
                class="org-inline"
                onSubmit={async (e) => {
                  e.preventDefault();
                  if (of) await act(() => dup.run({ id: p.id, of }), 'Marked a duplicate.');
                }}
              >
                <Select
                  label="Duplicate of"
                  value={of}
                  onValue={setOf}
                  required
                  options={[{ value: '', label: 'Choose the original…' }, ...others.map((o) => ({ value: o.id, label: `${o.title} (${o.team.name})` }))]}
                />
                <button type="submit" class="secondary" disabled={busy || !of}>
                  Mark duplicate
                </button>
              </form>
            )
          )}
          {tracks.length > 1 && (
            <form
              class="org-inline"
              onSubmit={async (e) => {
                e.preventDefault();
                if (track && (await act(() => move.run({ id: p.id, track, reason: moveReason.trim() }), 'Moved to another track.'))) {
                  setMoveReason('');
                  setTrack('');
                }
              }}
            >
              <Select
                label="Move to track"
                value={track}
                onValue={setTrack}
                required
                options={[{ value: '', label: 'Choose a track…' }, ...tracks.filter((t) => t.id !== p.track.id).map((t) => ({ value: t.id, label: t.name }))]}
              />
              <Field label="Reason for moving" required maxLength={500} value={moveReason} onValue={setMoveReason} />
              <button type="submit" class="secondary" disabled={busy || !track}>
                Move
              </button>
            </form>
          )}
        </div>
      </details>
    </li>
  );
}

// ---- /e/:slug/admin/exports ----------------------------------------------------------

const ExportCsv = graphql(`
  mutation ExportCsv($event: String!, $kind: ExportKind!) {
    exportCsv(event: $event, kind: $kind)
  }
`);

type Kind = 'REGISTRATIONS' | 'TEAMS' | 'PROJECTS' | 'JUDGES' | 'ASSIGNMENTS' | 'SCORES' | 'RESULTS' | 'AUDIT';

const KINDS: [Kind, string][] = [
  ['REGISTRATIONS', 'Everyone holding a role, with their email.'],
  ['TEAMS', 'The teams and their members.'],
  ['PROJECTS', 'Every project with its status, track and moderation.'],
  ['JUDGES', 'The judges and the tracks they cover.'],
  ['ASSIGNMENTS', 'Who reviews what.'],
  ['SCORES', 'Every score of every review.'],
  ['RESULTS', 'The published ranking.'],
  ['AUDIT', 'The event’s audit log.'],
];

export function ExportsPage({ slug }: { slug: string }) {
  const m = useMutation(ExportCsv);
  const [busy, setBusy] = useState<Kind | null>(null);
  const [done, setDone] = useState('');
  return (
    <OrgPage slug={slug} title="Exports">
      <p>
        Each file is made from the event as it is now. <strong>Every export is recorded in the audit log</strong>, with who made it.
      </p>
      <ErrorNote error={m.error} />
      <Notice>{done}</Notice>
      <ul class="cards">
        {KINDS.map(([kind, what]) => {
          const file = `${kind.toLowerCase()}.csv`;
          return (
            <li class="card" key={kind}>
              <p>{what}</p>
              <button
                type="button"
                class="secondary"
                disabled={busy !== null}
                onClick={async () => {
                  setDone('');
                  setBusy(kind);
                  const r = await m.run({ event: slug, kind });
                  setBusy(null);
                  if (r) {
                    download(`${slug}-${file}`, r.exportCsv);
                    setDone(`${slug}-${file} downloaded.`);
                  }
                }}
              >
                {busy === kind ? `Preparing ${file}…` : `Download ${file}`}
              </button>
            </li>
          );
        })}
      </ul>
    </OrgPage>
  );
}

// ---- /e/:slug/admin/audit ------------------------------------------------------------

const AuditLog = graphql(`
  query AuditLog($slug: String!, $first: Int, $after: String) {
    event(slug: $slug) {
      id
      auditLog(first: $first, after: $after) {
        totalCount
        pageInfo { endCursor hasNextPage }
        nodes { seq occurredAt actor action objectType objectId payload rowHash prevHash }
      }
    }
  }
`);

const AuditPeople = graphql(`
  query AuditPeople($slug: String!, $first: Int, $after: String) {
    event(slug: $slug) {
      id
      members(first: $first, after: $after) {
        totalCount
        pageInfo { endCursor hasNextPage }
        nodes { id user { id displayName } }
      }
    }
  }
`);

export function AuditPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const skip = !viewer;
  const log = usePaged(AuditLog, { slug }, (r) => r.event?.auditLog, { skip, pageSize: 100 });
  // Names for the actors' ids, from the event's members (anyone else shows as an id).
  const people = usePaged(AuditPeople, { slug }, (r) => r.event?.members, { skip, pageSize: 100, all: true });
  const names = useMemo(() => new Map(people.items.map((m) => [m.user.id, m.user.displayName])), [people.items]);
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [type, setType] = useState('');
  const types = useMemo(() => [...new Set(log.items.map((e) => e.objectType))].sort(), [log.items]);
  const who = (id: string) => (id === '' ? 'system' : names.get(id) ?? id);
  const shown = log.items.filter(
    (e) =>
      (!action || e.action.toLowerCase().includes(action.trim().toLowerCase())) &&
      (!actor || `${e.actor} ${who(e.actor)}`.toLowerCase().includes(actor.trim().toLowerCase())) &&
      (!type || e.objectType === type),
  );
  return (
    <OrgPage slug={slug} title="Audit log">
      <p class="muted">
        Everything done in this event, oldest first, as links of a hash chain: each row&rsquo;s hash covers the one before it, which may belong to another event. The filters apply to the rows loaded so far.
      </p>
      <ErrorNote error={log.error} />
      <div class="org-toolbar" role="search" aria-label="Filter the audit log">
        <Field label="Action contains" value={action} onValue={setAction} placeholder="e.g. project.hidden" />
        <Field label="Actor contains" value={actor} onValue={setActor} />
        <Select label="Object type" value={type} onValue={setType} options={[{ value: '', label: 'Any' }, ...types.map((t) => ({ value: t, label: t }))]} />
      </div>
      {log.loading && log.items.length === 0 ? (
        <Loading what="Loading the audit log" />
      ) : log.items.length === 0 ? (
        <p class="muted">Nothing recorded yet.</p>
      ) : (
        <>
          <p class="muted" role="status">
            {shown.length} of {log.items.length} loaded rows match.
          </p>
          <div class="org-wide org-audit">
            <Table caption="Audit log">
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Seq
                  </th>
                  <th scope="col">Time</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Action</th>
                  <th scope="col">Object</th>
                  <th scope="col">Payload</th>
                  <th scope="col">Hash</th>
                  <th scope="col">Previous</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((e) => (
                  <tr key={e.seq}>
                    <td class="num">{e.seq}</td>
                    <td>
                      <When at={e.occurredAt} />
                    </td>
                    <td class="org-wrap">
                      <span title={e.actor || 'system'}>{who(e.actor)}</span>
                    </td>
                    <td>
                      <code>{e.action}</code>
                    </td>
                    <td class="org-wrap">
                      {e.objectType}
                      <br />
                      <code class="muted">{e.objectId}</code>
                    </td>
                    <td>
                      <details class="org-payload">
                        <summary>
                          Payload<span class="visually-hidden"> of row {e.seq}</span>
                        </summary>
                        <pre>{JSON.stringify(e.payload, null, 2)}</pre>
                      </details>
                    </td>
                    <td>
                      <Hash length={10} value={e.rowHash} />
                    </td>
                    <td>
                      <Hash length={10} value={e.prevHash} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
          </div>
        </>
      )}
      <LoadMore list={log} what="rows" />
    </OrgPage>
  );
}
