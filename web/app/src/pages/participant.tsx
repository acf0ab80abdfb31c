// A participant's pages: their team (members, invite by link, leave) and their project.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useMutation, useQuery, type ApiError } from '../api';
import { graphql, type ResultOf } from '../graphql';
import { Link, useUnsavedGuard } from '../router';
import { useSession } from '../session';
import { Badge, Confirm, Countdown, DraftNote, ErrorNote, Field, FormErrors, Loading, Notice, Page, Select, TextArea, When, CopyButton, isOpen, useDraft } from '../ui';
import { useFlash } from './account';
import './participant.css';

const TeamQuery = graphql(`
  query MyTeamPage($slug: String!) {
    event(slug: $slug) {
      id slug name submissionsOpen submissionsClose timeZone maxTeamSize registration myRoles
      myTeam {
        id name inviteCode inviteCodeExpiresAt
        members { id displayName }
        projects { id title status }
      }
    }
  }
`);

const RegisterForEvent = graphql(`
  mutation RegisterForEvent($event: String!) { registerForEvent(event: $event) { id role } }
`);
const CreateTeam = graphql(`
  mutation CreateTeam($event: String!, $name: String!) { createTeam(event: $event, name: $name) { id name } }
`);
const JoinTeam = graphql(`
  mutation JoinTeamByCode($inviteCode: String!) { joinTeam(inviteCode: $inviteCode) { id name } }
`);
const InviteToTeam = graphql(`
  mutation InviteToTeam($team: ID!, $email: String!) {
    inviteToTeam(team: $team, email: $email) { link invitation { id email expiresAt } }
  }
`);
const RotateInviteCode = graphql(`
  mutation RotateInviteCode($team: ID!) { rotateInviteCode(team: $team) { id inviteCode inviteCodeExpiresAt } }
`);
const RenameTeam = graphql(`
  mutation RenameTeam($team: ID!, $name: String!) { renameTeam(team: $team, name: $name) { id name } }
`);
const LeaveTeam = graphql(`
  mutation LeaveTeam($team: ID!) { leaveTeam(team: $team) { id } }
`);

const ProjectQuery = graphql(`
  query MyProjectPage($slug: String!) {
    event(slug: $slug) {
      id slug name submissionsOpen submissionsClose timeZone myRoles
      tracks { id name }
      myTeam {
        id name
        projects {
          id title tagline summary description repoUrl demoUrl tags table status submittedAt updatedAt
          hiddenReason disqualifiedReason feedback
          track { id name }
        }
      }
    }
  }
`);

const CreateProject = graphql(`
  mutation CreateProject($event: String!, $input: ProjectInput!) { createProject(event: $event, input: $input) { id } }
`);
const UpdateProject = graphql(`
  mutation UpdateProject($id: ID!, $input: ProjectInput!) { updateProject(id: $id, input: $input) { id updatedAt } }
`);
const SubmitProject = graphql(`
  mutation SubmitProject($id: ID!) { submitProject(id: $id) { id status submittedAt } }
`);
const WithdrawProject = graphql(`
  mutation WithdrawProject($id: ID!) { withdrawProject(id: $id) { id status } }
`);

type EventInfo = { slug: string; submissionsOpen: string; submissionsClose: string; timeZone: string };

/** Where the submission window stands, with a countdown to its close. */
function Deadline({ ev, what }: { ev: EventInfo; what: string }) {
  const now = Date.now();
  const opens = new Date(ev.submissionsOpen).getTime();
  const closes = new Date(ev.submissionsClose).getTime();
  return (
    <p class="pt-deadline">
      {now < opens ? (
        <>
          Submissions open <When at={ev.submissionsOpen} zone={ev.timeZone} />: <Countdown to={ev.submissionsOpen} closed="open now" />.
        </>
      ) : now < closes ? (
        <>
          {what} close <When at={ev.submissionsClose} zone={ev.timeZone} />: <Countdown to={ev.submissionsClose} /> left.
        </>
      ) : (
        <>
          {what} closed <When at={ev.submissionsClose} zone={ev.timeZone} />.
        </>
      )}
    </p>
  );
}

function Panel({ title, children, id }: { title: string; id: string; children?: ComponentChildren }) {
  return (
    <section class="pt-panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** The states every participant page shares: loading, signed out, no such event. */
function Gate({
  title,
  slug,
  loading,
  error,
  missing,
  children,
}: {
  title: string;
  slug: string;
  loading: boolean;
  error: ApiError | undefined;
  missing: boolean;
  children: () => ComponentChildren;
}) {
  const session = useSession();
  const here = location.pathname;
  if (session.loading)
    return (
      <Page title={title}>
        <Loading />
      </Page>
    );
  if (!session.viewer)
    return (
      <Page title={title}>
        <p>
          <Link href={`/login?next=${encodeURIComponent(here)}`}>Log in</Link> to see your team and project in this event.
        </p>
      </Page>
    );
  if (error)
    return (
      <Page title={title}>
        <ErrorNote error={error} />
      </Page>
    );
  if (loading)
    return (
      <Page title={title}>
        <Loading />
      </Page>
    );
  if (missing)
    return (
      <Page title={title}>
        <p>
          There is no event “{slug}”. <Link href="/">See all events</Link>.
        </p>
      </Page>
    );
  return <>{children()}</>;
}

// ---- the team page ----------------------------------------------------------------

type TeamEvent = NonNullable<ResultOf<typeof TeamQuery>['event']>;
type MyTeam = NonNullable<TeamEvent['myTeam']>;

export function TeamPage({ slug }: { slug: string }) {
  const session = useSession();
  const q = useQuery(TeamQuery, { slug }, { skip: session.loading || !session.viewer });
  const flash = useFlash();
  const ev = q.data?.event;
  return (
    <Gate title="My team" slug={slug} loading={!q.data} error={q.data ? undefined : q.error} missing={!!q.data && !ev}>
      {() => {
        const e = ev!;
        return (
          <Page title="My team">
            <p class="muted">{e.name}</p>
            <Notice>{flash}</Notice>
            <ErrorNote error={q.error} />
            <Deadline ev={e} what="Team changes" />
            {!e.myRoles.includes('PARTICIPANT') ? (
              <NotParticipant ev={e} refetch={q.refetch} />
            ) : e.myTeam ? (
              <TeamView ev={e} team={e.myTeam} refetch={q.refetch} />
            ) : (
              <NoTeam ev={e} refetch={q.refetch} />
            )}
          </Page>
        );
      }}
    </Gate>
  );
}

function NotParticipant({ ev, refetch }: { ev: TeamEvent; refetch: () => Promise<void> }) {
  const session = useSession();
  const m = useMutation(RegisterForEvent);
  return (
    <div class="narrow">
      <p>You are not a participant of this event.</p>
      {ev.registration === 'OPEN' ? (
        <>
          <p>Anyone may register for it.</p>
          <ErrorNote error={m.error} />
          <button
            type="button"
            disabled={m.loading}
            onClick={async () => {
              if (await m.run({ event: ev.slug })) {
                await session.refresh();
                await refetch();
              }
            }}
          >
            Register as a participant
          </button>
        </>
      ) : (
        <p class="muted">
          {ev.registration === 'INVITE_ONLY'
            ? 'Participants join by invitation: ask an organizer or a team for a link.'
            : 'Registration for this event is closed.'}
        </p>
      )}
    </div>
  );
}

function NoTeam({ ev, refetch }: { ev: TeamEvent; refetch: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [code, setCode] = useState('');
  const create = useMutation(CreateTeam);
  const join = useMutation(JoinTeam);
  return (
    <>
      <p>You are not on a team yet: start one, or join a team with its code.</p>
      <div class="pt-two">
        <Panel title="Create a team" id="pt-create-team">
          <form
            onSubmit={async (e) => {
              e.preventDefault();
              if (await create.run({ event: ev.slug, name })) await refetch();
            }}
          >
            <Field label="Team name" required maxLength={200} value={name} onValue={setName} />
            <ErrorNote error={create.error} />
            <button type="submit" disabled={create.loading}>
              Create team
            </button>
          </form>
        </Panel>
        <Panel title="Join with a code" id="pt-join-team">
          <form
            onSubmit={async (e) => {
              e.preventDefault();
              // A whole join link works too.
              const c = code.trim().replace(/^.*\/join\//, '');
              if (await join.run({ inviteCode: c })) await refetch();
            }}
          >
            <Field label="Invite code" hint="From a teammate: the code, or their whole join link." required value={code} onValue={setCode} />
            <ErrorNote error={join.error} />
            <button type="submit" disabled={join.loading}>
              Join team
            </button>
          </form>
        </Panel>
      </div>
    </>
  );
}

function TeamView({ ev, team, refetch }: { ev: TeamEvent; team: MyTeam; refetch: () => Promise<void> }) {
  const base = `/e/${encodeURIComponent(ev.slug)}`;
  return (
    <>
      <h2 class="pt-team-name">{team.name}</h2>
      <div class="pt-two">
        <Panel title={`Members (${team.members.length} of at most ${ev.maxTeamSize})`} id="pt-members">
          <ul class="pt-members">
            {team.members.map((u) => (
              <li key={u.id}>{u.displayName}</li>
            ))}
          </ul>
        </Panel>
        <Panel title="Projects" id="pt-projects">
          {team.projects.length === 0 ? (
            <p>
              No project yet. <Link href={`${base}/my-project`}>Start your project</Link>.
            </p>
          ) : (
            <ul class="pt-members">
              {team.projects.map((p) => (
                <li key={p.id}>
                  <Link href={`${base}/my-project`}>{p.title}</Link> <StatusBadge status={p.status} />
                </li>
              ))}
            </ul>
          )}
        </Panel>
      </div>
      <JoinLink team={team} refetch={refetch} />
      <InviteByEmail team={team} />
      <Rename team={team} refetch={refetch} />
      <Leave team={team} refetch={refetch} />
    </>
  );
}

function JoinLink({ team, refetch }: { team: MyTeam; refetch: () => Promise<void> }) {
  const rotate = useMutation(RotateInviteCode);
  const [rotated, setRotated] = useState(false);
  const link = team.inviteCode ? `${location.origin}/join/${team.inviteCode}` : null;
  const expired = !!team.inviteCodeExpiresAt && new Date(team.inviteCodeExpiresAt).getTime() <= Date.now();
  return (
    <Panel title="Team join link" id="pt-join-link">
      {link ? (
        <>
          <p>Anyone registered for this event who opens this link can join the team while there is room.</p>
          <p class="secret pt-link" data-testid="join-link">
            {link}
          </p>
          <p class="muted">
            {expired ? 'It stopped working ' : 'It works until '}
            <When at={team.inviteCodeExpiresAt} />.
          </p>
          <div class="actions">
            <CopyButton text={link} label="Copy join link" />
          </div>
        </>
      ) : (
        <p>The team has no join link yet.</p>
      )}
      <ErrorNote error={rotate.error} />
      <Notice>{rotated && 'A new join link is ready; the old one no longer works.'}</Notice>
      <p>
        <button
          type="button"
          class="secondary"
          disabled={rotate.loading}
          onClick={async () => {
            setRotated(false);
            if (await rotate.run({ team: team.id })) {
              setRotated(true);
              await refetch();
            }
          }}
        >
          {link ? 'Make a new join link' : 'Make a join link'}
        </button>
      </p>
    </Panel>
  );
}

function InviteByEmail({ team }: { team: MyTeam }) {
  const [email, setEmail] = useState('');
  const [made, setMade] = useState<{ email: string; link: string; expiresAt: string } | null>(null);
  const m = useMutation(InviteToTeam);
  return (
    <Panel title="Invite a teammate by link" id="pt-invite">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          setMade(null);
          const d = await m.run({ team: team.id, email });
          if (d) {
            setMade({ email: d.inviteToTeam.invitation.email, link: d.inviteToTeam.link, expiresAt: d.inviteToTeam.invitation.expiresAt });
            setEmail('');
          }
        }}
      >
        <p class="muted">A personal link for one person: it registers them for the event and puts them on this team. We also mail it when Verdict can send mail.</p>
        <Field label="Teammate's email" type="email" autoComplete="off" required value={email} onValue={setEmail} />
        <ErrorNote error={m.error} />
        <button type="submit" disabled={m.loading}>
          Make invitation link
        </button>
      </form>
      {made && (
        <div class="pt-made" role="region" aria-label="The invitation link">
          <p>
            Send this link to <strong>{made.email}</strong>. It works once, until <When at={made.expiresAt} />.
          </p>
          <p class="secret pt-link">{made.link}</p>
          <CopyButton text={made.link} label="Copy invitation link" />
        </div>
      )}
    </Panel>
  );
}

function Rename({ team, refetch }: { team: MyTeam; refetch: () => Promise<void> }) {
  const [name, setName] = useState(team.name);
  const [saved, setSaved] = useState(false);
  const m = useMutation(RenameTeam);
  return (
    <Panel title="Rename the team" id="pt-rename">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          if (await m.run({ team: team.id, name })) {
            setSaved(true);
            await refetch();
          }
        }}
      >
        <Field label="New team name" required maxLength={200} value={name} onValue={(v) => (setName(v), setSaved(false))} />
        <ErrorNote error={m.error} />
        <Notice>{saved && 'The team is renamed.'}</Notice>
        <button type="submit" disabled={m.loading}>
          Rename
        </button>
      </form>
    </Panel>
  );
}

function Leave({ team, refetch }: { team: MyTeam; refetch: () => Promise<void> }) {
  const m = useMutation(LeaveTeam);
  return (
    <Panel title="Leave the team" id="pt-leave">
      <Confirm
        class="pt-confirm"
        action="Leave team"
        groupLabel="Confirm leaving the team"
        question={
          <>
            Leave <strong>{team.name}</strong>? You can join a team again while submissions are open.
            {team.members.length === 1 && ' You are its last member.'}
          </>
        }
        yes={`Yes, leave ${team.name}`}
        no="Stay"
        busy={m.loading}
        onAsk={m.reset}
        onYes={async () => {
          if (!(await m.run({ team: team.id }))) return false;
          await refetch();
        }}
      />
      <ErrorNote error={m.error} />
    </Panel>
  );
}

// ---- the project page ---------------------------------------------------------------

type ProjectEvent = NonNullable<ResultOf<typeof ProjectQuery>['event']>;
type MyProject = NonNullable<ProjectEvent['myTeam']>['projects'][number];

function StatusBadge({ status }: { status: string }) {
  const tone = status === 'SUBMITTED' ? 'good' : status === 'WITHDRAWN' ? 'bad' : 'warn';
  const label = status === 'SUBMITTED' ? 'Submitted' : status === 'WITHDRAWN' ? 'Withdrawn' : 'Draft';
  return (
    <Badge tone={tone}>
      <span class="visually-hidden">Status: </span>
      {label}
    </Badge>
  );
}

type Form = {
  title: string;
  track: string;
  tagline: string;
  summary: string;
  description: string;
  repoUrl: string;
  demoUrl: string;
  tags: string;
  table: string;
};

function formOf(p: MyProject): Form {
  return {
    title: p.title,
    track: p.track.id,
    tagline: p.tagline,
    summary: p.summary,
    description: p.description,
    repoUrl: p.repoUrl ?? '',
    demoUrl: p.demoUrl ?? '',
    tags: p.tags.join(', '),
    table: p.table ?? '',
  };
}

function inputOf(f: Form) {
  return {
    title: f.title,
    track: f.track,
    tagline: f.tagline,
    summary: f.summary,
    description: f.description,
    repoUrl: f.repoUrl.trim(),
    demoUrl: f.demoUrl.trim(),
    tags: f.tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    table: f.table.trim(),
  };
}

/** The project's fields, each `name`d as the server names it (so a refusal shows beside
 *  it); `closed`: read-only, as the server would refuse any change. */
function ProjectFields({ f, set, tracks, closed = false }: { f: Form; set: (f: Form) => void; tracks: { id: string; name: string }[]; closed?: boolean }) {
  const on = (k: keyof Form) => (v: string) => set({ ...f, [k]: v });
  const ro = { readOnly: closed };
  return (
    <>
      <Field label="Title" name="title" required maxLength={200} value={f.title} onValue={on('title')} {...ro} />
      <Select label="Track" name="track" value={f.track} onValue={on('track')} options={tracks.map((t) => ({ value: t.id, label: t.name }))} disabled={closed} />
      <Field label="Tagline" name="tagline" hint="One line, at most 200 characters." maxLength={200} value={f.tagline} onValue={on('tagline')} {...ro} />
      <TextArea label="Summary" name="summary" hint="At most 2,000 characters." maxLength={2000} value={f.summary} onValue={on('summary')} {...ro} />
      <TextArea label="Description" name="description" hint="At most 20,000 characters." maxLength={20000} rows={10} value={f.description} onValue={on('description')} {...ro} />
      <div class="row">
        <Field label="Repository URL" name="repoUrl" type="url" inputMode="url" placeholder="https://" value={f.repoUrl} onValue={on('repoUrl')} {...ro} />
        <Field label="Demo URL" name="demoUrl" type="url" inputMode="url" placeholder="https://" value={f.demoUrl} onValue={on('demoUrl')} {...ro} />
      </div>
      <Field label="Tags" name="tags" hint="Separated by commas: at most 10, each at most 32 characters." value={f.tags} onValue={on('tags')} {...ro} />
      <Field label="Expo table" name="table" hint="Where your project stands at the expo, if the organizers gave you a table (at most 16 characters)." maxLength={16} value={f.table} onValue={on('table')} {...ro} />
    </>
  );
}

/** Whether the submission window takes writes now, and if not, the sentence that says why
 *  (shown before anyone types; the server refuses the same with WINDOW_CLOSED). */
function windowClosed(ev: EventInfo): ComponentChildren | null {
  if (isOpen(ev.submissionsOpen, ev.submissionsClose)) return null;
  return Date.now() < new Date(ev.submissionsOpen).getTime() ? (
    <>
      Submissions open <When at={ev.submissionsOpen} zone={ev.timeZone} />: until then the project cannot be changed.
    </>
  ) : (
    <>
      Submissions closed <When at={ev.submissionsClose} zone={ev.timeZone} />: the project can no longer be changed,
      submitted or withdrawn.
    </>
  );
}

function ClosedNote({ why }: { why: ComponentChildren | null }) {
  if (!why) return null;
  return (
    <p class="closed-note" data-testid="window-closed">
      {why}
    </p>
  );
}

export function MyProjectPage({ slug }: { slug: string }) {
  const session = useSession();
  const q = useQuery(ProjectQuery, { slug }, { skip: session.loading || !session.viewer });
  const [adding, setAdding] = useState(false);
  const ev = q.data?.event;
  return (
    <Gate title="My project" slug={slug} loading={!q.data} error={q.data ? undefined : q.error} missing={!!q.data && !ev}>
      {() => {
        const e = ev!;
        const base = `/e/${encodeURIComponent(e.slug)}`;
        const projects = e.myTeam?.projects ?? [];
        return (
          <Page title="My project">
            <p class="muted">
              {e.name}
              {e.myTeam && <> · {e.myTeam.name}</>}
            </p>
            <ErrorNote error={q.error} />
            <Deadline ev={e} what="Submissions" />
            {!e.myTeam ? (
              <p>
                A project belongs to a team. <Link href={`${base}/team`}>Create or join a team</Link> first.
              </p>
            ) : (
              <>
                {projects.map((p) => (
                  <ProjectEditor key={p.id} ev={e} p={p} refetch={q.refetch} />
                ))}
                {projects.length === 0 || adding ? (
                  <NewProject ev={e} refetch={async () => (setAdding(false), await q.refetch())} first={projects.length === 0} />
                ) : (
                  <p>
                    <button type="button" class="secondary" onClick={() => setAdding(true)}>
                      Start another project
                    </button>
                  </p>
                )}
              </>
            )}
          </Page>
        );
      }}
    </Gate>
  );
}

function NewProject({ ev, refetch, first }: { ev: ProjectEvent; refetch: () => Promise<void>; first: boolean }) {
  const empty: Form = { title: '', track: ev.tracks[0]?.id ?? '', tagline: '', summary: '', description: '', repoUrl: '', demoUrl: '', tags: '', table: '' };
  const [f, set] = useState<Form>(empty);
  const m = useMutation(CreateProject);
  const draft = useDraft(`project.new.${ev.slug}`, f, empty, set);
  const closed = windowClosed(ev);
  useUnsavedGuard(JSON.stringify(f) !== JSON.stringify(empty) && !closed);
  return (
    <Panel title={first ? 'Start your project' : 'Start another project'} id="pt-new-project">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await m.run({ event: ev.slug, input: inputOf(f) })) {
            draft.clear();
            set(empty);
            await refetch();
          }
        }}
      >
        <ClosedNote why={closed} />
        <DraftNote draft={draft} />
        <p class="muted">It is saved as a draft: judges see it only once you submit it, before the deadline.</p>
        <FormErrors error={m.error}>
          <ProjectFields f={f} set={set} tracks={ev.tracks} closed={!!closed} />
          <ErrorNote error={m.error} />
        </FormErrors>
        <button type="submit" disabled={m.loading || !!closed}>
          Create draft
        </button>
      </form>
    </Panel>
  );
}

function ProjectEditor({ ev, p, refetch }: { ev: ProjectEvent; p: MyProject; refetch: () => Promise<void> }) {
  const [f, set] = useState<Form>(() => formOf(p));
  const [said, setSaid] = useState<string | null>(null);
  const draft = useDraft(`project.${p.id}`, f, formOf(p), set);
  const closed = windowClosed(ev);
  const update = useMutation(UpdateProject);
  const submit = useMutation(SubmitProject);
  const withdraw = useMutation(WithdrawProject);
  const busy = update.loading || submit.loading || withdraw.loading;
  const dirty = JSON.stringify(inputOf(f)) !== JSON.stringify(inputOf(formOf(p)));
  // Nothing to warn about when the window refuses any change anyway.
  useUnsavedGuard(dirty && !closed);
  const headId = `pt-project-${p.id}`;
  const publicHref = `/e/${encodeURIComponent(ev.slug)}/projects/${encodeURIComponent(p.id)}`;

  // Each action shows its own refusal, as the server said it, in one place.
  const act = async (what: () => Promise<string | null>) => {
    setSaid(null);
    update.reset();
    submit.reset();
    withdraw.reset();
    const ok = await what();
    if (ok) setSaid(ok);
    await refetch();
  };
  const save = async (): Promise<boolean> => {
    const d = await update.run({ id: p.id, input: inputOf(f) });
    // Saved: the local draft goes now, not only once the refetched project matches it.
    if (d) draft.clear();
    return !!d;
  };

  return (
    <section class="pt-panel pt-project" aria-labelledby={headId}>
      <header class="pt-project-head">
        <h2 id={headId}>{p.title}</h2>
        <StatusBadge status={p.status} />
      </header>
      <p class="muted">
        {p.status === 'SUBMITTED' && (
          <>
            Submitted <When at={p.submittedAt} zone={ev.timeZone} />. <Link href={publicHref}>See it in the gallery</Link>.
          </>
        )}
        {p.status === 'DRAFT' && 'A draft: judges see it once you submit it.'}
        {p.status === 'WITHDRAWN' && 'Withdrawn: out of judging until you submit it again.'}{' '}
        Last changed <When at={p.updatedAt} zone={ev.timeZone} />.
      </p>
      {p.hiddenReason && <p class="error">The organizers hid this project: {p.hiddenReason}</p>}
      {p.disqualifiedReason && <p class="error">The organizers disqualified this project: {p.disqualifiedReason}</p>}
      <form
        class="narrow"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => ((await save()) ? 'Your changes are saved.' : null));
        }}
      >
        <ClosedNote why={closed} />
        <DraftNote draft={draft} />
        <FormErrors error={update.error ?? submit.error ?? withdraw.error}>
          <ProjectFields f={f} set={set} tracks={ev.tracks} closed={!!closed} />
          <div class="pt-outcome" aria-live="polite">
            <ErrorNote error={update.error ?? submit.error ?? withdraw.error} />
            <Notice>{said}</Notice>
          </div>
        </FormErrors>
        <div class="actions">
          <button type="submit" disabled={busy || !!closed}>
            Save changes
          </button>
          {p.status !== 'SUBMITTED' ? (
            <button
              type="button"
              class="pt-submit"
              disabled={busy || !!closed}
              onClick={() =>
                act(async () => {
                  // A withdrawn project takes edits only once it is submitted again.
                  const withdrawn = p.status === 'WITHDRAWN';
                  if (dirty && !withdrawn && !(await save())) return null;
                  const d = await submit.run({ id: p.id });
                  if (!d) return null;
                  if (dirty && withdrawn && !(await save())) return null;
                  return 'Your project is submitted. You can still edit it until the deadline.';
                })
              }
            >
              {dirty ? 'Save and submit' : 'Submit project'}
            </button>
          ) : (
            <button
              type="button"
              class="secondary"
              disabled={busy || !!closed}
              onClick={() =>
                act(async () => {
                  const d = await withdraw.run({ id: p.id });
                  return d ? 'Your project is withdrawn. Submit it again before the deadline to enter judging.' : null;
                })
              }
            >
              Withdraw
            </button>
          )}
        </div>
      </form>
      {p.feedback.length > 0 && (
        <>
          <h3>Judges' feedback</h3>
          <ul class="pt-feedback">
            {p.feedback.map((c, i) => (
              <li key={i}>{c}</li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
