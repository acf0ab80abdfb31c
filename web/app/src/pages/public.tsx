// Public pages: events, an event, its gallery, a project, published results, verifying them.
// Everything here is readable without an account (the anonymous complexity budget is the
// one to stay under: a ranking costs about 13 units per project, 100 projects assumed).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { TadaDocumentNode } from 'gql.tada';
import { ApiError, request, useMutation, useQuery, useSubscription } from '../api';
import { graphql, type ResultOf } from '../graphql';
import { excludedReason, ForestPlot, ordinal, type ForestRow } from '../plots';
import { Link } from '../router';
import { useSession } from '../session';
import { Badge, Countdown, ErrorNote, Field, isOpen, Loading, Notice, Page, Select, safeUrl, Table, TextArea, When } from '../ui';
import './public.css';

const eventPath = (slug: string) => `/e/${encodeURIComponent(slug)}`;
const projectPath = (slug: string, id: string) => `${eventPath(slug)}/projects/${encodeURIComponent(id)}`;


function NoEvent({ slug }: { slug: string }) {
  return (
    <Page title="No such event">
      <p>
        There is no event called “{slug}”. It may have been renamed. <Link href="/">See all events</Link>.
      </p>
    </Page>
  );
}

/** A query's loading, refusal, or unknown event, or null when there is something to show. */
function Pending({ title, q, missing }: { title: string; q: { loading: boolean; error?: ApiError; data?: unknown }; missing?: ComponentChildren }) {
  if (q.error && !q.data)
    return (
      <Page title={title}>
        <ErrorNote error={q.error} />
      </Page>
    );
  if (!q.data)
    return (
      <Page title={title}>
        <Loading />
      </Page>
    );
  return <>{missing}</>;
}

type PageInfo = { hasNextPage: boolean; endCursor: string | null };
type Conn<N> = { totalCount: number; pageInfo: PageInfo; nodes: N[] };

/** The first page through `useQuery` (so it refetches like any query), later pages on
 *  demand, appended; a change of variables starts over. */
function usePaged<R, V extends { after?: string | null }, N>(doc: TadaDocumentNode<R, V>, vars: V, pick: (r: R) => Conn<N> | null | undefined) {
  const q = useQuery(doc, vars);
  const key = JSON.stringify(vars);
  const [more, setMore] = useState<{ key: string; nodes: N[]; pageInfo: PageInfo }>();
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<ApiError>();
  const first = q.data ? pick(q.data) : undefined;
  const extra = more && more.key === key ? more : undefined;
  const nodes = [...(first?.nodes ?? []), ...(extra?.nodes ?? [])];
  const pageInfo = extra?.pageInfo ?? first?.pageInfo;
  const loadMore = async () => {
    if (!pageInfo?.hasNextPage) return;
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      const d = await request(doc, { ...vars, after: pageInfo.endCursor });
      const c = pick(d);
      if (c) setMore({ key, nodes: [...(extra?.nodes ?? []), ...c.nodes], pageInfo: c.pageInfo });
    } catch (e) {
      setMoreError(e instanceof ApiError ? e : new ApiError(String(e), 'INTERNAL'));
    } finally {
      setLoadingMore(false);
    }
  };
  return { q, nodes, total: first?.totalCount ?? 0, hasNext: !!pageInfo?.hasNextPage, loadMore, loadingMore, moreError };
}

function LoadMore({ shown, total, hasNext, loading, error, onMore, what }: { shown: number; total: number; hasNext: boolean; loading: boolean; error?: ApiError; onMore: () => void; what: string }) {
  return (
    <div class="load-more">
      <span class="muted" role="status">
        {shown} of {total} {what} loaded
      </span>
      {hasNext && (
        <button type="button" class="secondary" disabled={loading} onClick={onMore}>
          {loading ? 'Loading…' : 'Load more'}
        </button>
      )}
      <ErrorNote error={error} />
    </div>
  );
}

/** Open / upcoming / closed for a window. */
function WindowBadge({ open, close }: { open: string | null | undefined; close: string | null | undefined }) {
  if (!open || !close) return <Badge>none</Badge>;
  const now = Date.now();
  if (isOpen(open, close, now)) return <Badge tone="good">open</Badge>;
  if (new Date(open).getTime() > now) return <Badge>upcoming</Badge>;
  return <Badge tone="warn">closed</Badge>;
}

// ---- events --------------------------------------------------------------------------

const EventsQuery = graphql(`
  query PublicEvents($first: Int, $after: String) {
    events(first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        id slug name timeZone submissionsOpen submissionsClose judgingOpen judgingClose
        projects(first: 1) { totalCount }
        results { final }
      }
    }
  }
`);

export function EventsPage() {
  const { viewer } = useSession();
  const p = usePaged(EventsQuery, { first: 20, after: null }, (d) => d.events);
  const admin = viewer?.user.isSiteAdmin;
  return (
    <Page
      title="Events"
      actions={
        admin && (
          <Link href="/new-event" class="button">
            New event
          </Link>
        )
      }
    >
      {p.q.error && <ErrorNote error={p.q.error} />}
      {!p.q.data && !p.q.error && <Loading what="Loading events" />}
      {p.q.data && p.nodes.length === 0 && <p>No event yet.{admin ? ' Create the first one.' : ''}</p>}
      {p.nodes.length > 0 && (
        <ul class="cards">
          {p.nodes.map((e) => {
            const open = isOpen(e.submissionsOpen, e.submissionsClose);
            return (
              <li class="card event-card">
                <h2>
                  <Link href={eventPath(e.slug)}>{e.name}</Link>
                </h2>
                <dl>
                  <dt>Submissions</dt>
                  <dd>
                    <When at={e.submissionsOpen} zone={e.timeZone} /> to <When at={e.submissionsClose} zone={e.timeZone} />
                  </dd>
                  {e.judgingOpen && (
                    <>
                      <dt>Judging</dt>
                      <dd>
                        <When at={e.judgingOpen} zone={e.timeZone} /> to <When at={e.judgingClose} zone={e.timeZone} />
                      </dd>
                    </>
                  )}
                  <dt>Projects</dt>
                  <dd>
                    <Link href={`${eventPath(e.slug)}/projects`}>
                      {e.projects.totalCount} submitted
                    </Link>
                  </dd>
                </dl>
                {open && (
                  <p>
                    Submissions close in <Countdown to={e.submissionsClose} />
                  </p>
                )}
                {e.results && (
                  <p>
                    <Link href={`${eventPath(e.slug)}/results`}>{e.results.final ? 'Final results' : 'Provisional results'}</Link>{' '}
                    <Badge tone={e.results.final ? 'good' : 'warn'}>{e.results.final ? 'final' : 'provisional'}</Badge>
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {p.q.data && p.total > p.nodes.length && (
        <LoadMore shown={p.nodes.length} total={p.total} hasNext={p.hasNext} loading={p.loadingMore} error={p.moreError} onMore={p.loadMore} what="events" />
      )}
    </Page>
  );
}

// ---- one event -----------------------------------------------------------------------

const EventQuery = graphql(`
  query PublicEvent($slug: String!) {
    event(slug: $slug) {
      id slug name registration timeZone
      submissionsOpen submissionsClose judgingOpen judgingClose votingOpen votingClose
      reviewsPerProject maxTeamSize
      tracks { id name }
      projects(first: 1) { totalCount }
      results { final version publishedAt }
      voting { isOpen tallyPublishedAt }
    }
  }
`);

const Register = graphql(`
  mutation RegisterForEvent($event: String!) {
    registerForEvent(event: $event) { id role }
  }
`);

const REGISTRATION: Record<string, string> = {
  OPEN: 'Open: anyone with an account may register as a participant.',
  INVITE_ONLY: 'By invitation: the organizers invite participants, judges and organizers.',
  CLOSED: 'Closed: no one can register now.',
};

export function EventPage({ slug }: { slug: string }) {
  const q = useQuery(EventQuery, { slug });
  const { viewer, rolesIn, refresh } = useSession();
  const reg = useMutation(Register);
  const [registered, setRegistered] = useState(false);
  const e = q.data?.event;
  if (!e) return <Pending title="Event" q={q} missing={<NoEvent slug={slug} />} />;

  const roles = rolesIn(slug);
  const base = eventPath(e.slug);
  const now = Date.now();
  const moments: [string, string | null | undefined][] = [
    ['Submissions open', e.submissionsOpen],
    ['Submissions close', e.submissionsClose],
    ['Judging opens', e.judgingOpen],
    ['Judging closes', e.judgingClose],
    ['Voting opens', e.votingOpen],
    ['Voting closes', e.votingClose],
  ];
  const next = moments
    .filter((m): m is [string, string] => !!m[1] && new Date(m[1]).getTime() > now)
    .sort((a, b) => new Date(a[1]).getTime() - new Date(b[1]).getTime())[0];

  return (
    <Page title={e.name}>
      <ErrorNote error={q.error} />
      {next ? (
        <p class="next-deadline">
          {next[0]} in <Countdown to={next[1]} /> (<When at={next[1]} zone={e.timeZone} />)
        </p>
      ) : (
        <p class="next-deadline muted">Every window of this event has closed.</p>
      )}
      <h2>When</h2>
      <dl class="windows">
        <dt>Submissions</dt>
        <dd>
          <When at={e.submissionsOpen} zone={e.timeZone} /> to <When at={e.submissionsClose} zone={e.timeZone} /> <WindowBadge open={e.submissionsOpen} close={e.submissionsClose} />
        </dd>
        <dt>Judging</dt>
        <dd>
          {e.judgingOpen ? (
            <>
              <When at={e.judgingOpen} zone={e.timeZone} /> to <When at={e.judgingClose} zone={e.timeZone} /> <WindowBadge open={e.judgingOpen} close={e.judgingClose} />
            </>
          ) : (
            <span class="muted">no judging window</span>
          )}
        </dd>
        <dt>Voting</dt>
        <dd>
          {e.votingOpen ? (
            <>
              <When at={e.votingOpen} zone={e.timeZone} /> to <When at={e.votingClose} zone={e.timeZone} /> <WindowBadge open={e.votingOpen} close={e.votingClose} />
              {e.voting && (
                <>
                  {' '}
                  <Link href={`${base}/vote`}>{e.voting.tallyPublishedAt ? 'See the community vote' : e.voting.isOpen ? 'Vote for your favourites' : 'About the community vote'}</Link>
                </>
              )}
            </>
          ) : (
            <span class="muted">no community voting</span>
          )}
        </dd>
      </dl>

      <h2>Projects and results</h2>
      <ul class="role-list">
        <li>
          <Link href={`${base}/projects`}>{e.projects.totalCount} submitted projects</Link> in{' '}
          {e.tracks.length === 0 ? 'no track yet' : e.tracks.length === 1 ? 'one track' : `${e.tracks.length} tracks`}
          {e.tracks.length > 0 && `: ${e.tracks.map((t) => t.name).join(', ')}`}.
        </li>
        <li>
          {e.results ? (
            <>
              <Link href={`${base}/results`}>{e.results.final ? 'Final results' : 'Provisional results'}</Link> published <When at={e.results.publishedAt} zone={e.timeZone} /> (version {e.results.version}),{' '}
              <Link href={`${base}/verify`}>verifiable offline</Link>.
            </>
          ) : (
            <>Results are not published yet.</>
          )}
        </li>
        <li>
          Teams of up to {e.maxTeamSize}; each project gets {e.reviewsPerProject} reviews.
        </li>
      </ul>

      <h2>Taking part</h2>
      <p>{REGISTRATION[e.registration] ?? e.registration}</p>
      {roles.length === 0 && e.registration === 'OPEN' && !viewer && (
        <p>
          <Link href={`/login?next=${encodeURIComponent(base)}`}>Log in</Link> or <Link href="/signup">create an account</Link> to register.
        </p>
      )}
      {roles.length === 0 && e.registration === 'OPEN' && viewer && !registered && (
        <div class="actions">
          <button
            type="button"
            disabled={reg.loading}
            onClick={async () => {
              if (await reg.run({ event: e.slug })) {
                setRegistered(true);
                await refresh();
                await q.refetch();
              }
            }}
          >
            Register as a participant
          </button>
        </div>
      )}
      <ErrorNote error={reg.error} />
      {registered && <Notice>You are registered as a participant. Next: create or join a team.</Notice>}
      {(roles.length > 0 || viewer?.user.isSiteAdmin) && (
        <>
          <h3>Your roles here</h3>
          <ul class="role-list">
            {roles.includes('PARTICIPANT') && (
              <li>
                <strong>Participant</strong>: form or join a team on <Link href={`${base}/team`}>My team</Link>, then write and submit your project on{' '}
                <Link href={`${base}/my-project`}>My project</Link> before the deadline.
              </li>
            )}
            {roles.includes('JUDGE') && (
              <li>
                <strong>Judge</strong>: score the projects assigned to you on <Link href={`${base}/judge`}>Judging</Link> while judging is open.
              </li>
            )}
            {(roles.includes('ORGANIZER') || viewer?.user.isSiteAdmin) && (
              <li>
                <strong>Organizer</strong>
                {!roles.includes('ORGANIZER') && ' (as site administrator)'}: people, tracks, rubric, assignments, calibration and publication on{' '}
                <Link href={`${base}/admin`}>Organize</Link>.
              </li>
            )}
          </ul>
        </>
      )}
    </Page>
  );
}

// ---- gallery -------------------------------------------------------------------------

const GalleryQuery = graphql(`
  query PublicGallery($slug: String!, $track: ID, $first: Int, $after: String) {
    event(slug: $slug) {
      id slug name
      tracks { id name }
      projects(track: $track, first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { id title tagline tags table track { id name } team { id name } }
      }
    }
  }
`);

type GalleryProject = NonNullable<ResultOf<typeof GalleryQuery>['event']>['projects']['nodes'][number];

function matches(p: GalleryProject, words: string[]) {
  const hay = [p.title, p.tagline, p.team.name, ...p.tags].join(' ').toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function GalleryPage({ slug }: { slug: string }) {
  const [track, setTrack] = useState('');
  const [search, setSearch] = useState('');
  const p = usePaged(GalleryQuery, { slug, track: track || null, first: 48, after: null }, (d) => d.event?.projects);
  const e = p.q.data?.event;
  if (!e) {
    if (p.q.data) return <NoEvent slug={slug} />;
    return <Pending title="Projects" q={p.q} />;
  }
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = words.length ? p.nodes.filter((n) => matches(n, words)) : p.nodes;
  return (
    <Page title={`Projects · ${e.name}`}>
      <form class="gallery-filters" role="search" onSubmit={(ev) => ev.preventDefault()}>
        <Select
          label="Track"
          value={track}
          onValue={setTrack}
          options={[{ value: '', label: 'All tracks' }, ...e.tracks.map((t) => ({ value: t.id, label: t.name }))]}
        />
        <Field label="Search" type="search" value={search} onValue={setSearch} hint="Title, tagline, tags or team, among the projects loaded." />
      </form>
      <ErrorNote error={p.q.error} />
      {p.q.loading && <Loading what="Loading projects" />}
      <p class="muted" role="status" aria-live="polite">
        {words.length ? `${shown.length} of ${p.nodes.length} loaded projects match “${search.trim()}”.` : `${p.total} submitted project${p.total === 1 ? '' : 's'}${track ? ' in this track' : ''}.`}
      </p>
      {shown.length > 0 && (
        <ul class="cards gallery">
          {shown.map((n) => (
            <li class="card project-card">
              <h2>
                <Link href={projectPath(e.slug, n.id)}>{n.title}</Link>
              </h2>
              {n.tagline && <p>{n.tagline}</p>}
              <p class="muted">
                by {n.team.name} · {n.track.name}
                {n.table && <> · <span class="expo-table">Table {n.table}</span></>}
              </p>
              {n.tags.length > 0 && (
                <ul class="tags" aria-label="Tags">
                  {n.tags.map((t) => (
                    <li>
                      <Badge>{t}</Badge>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {p.total > 0 && (
        <LoadMore shown={p.nodes.length} total={p.total} hasNext={p.hasNext} loading={p.loadingMore} error={p.moreError} onMore={p.loadMore} what="projects" />
      )}
    </Page>
  );
}

// ---- one project ---------------------------------------------------------------------

const ProjectQuery = graphql(`
  query PublicProject($id: ID!, $members: Boolean!) {
    project(id: $id) {
      id title tagline summary description repoUrl demoUrl tags status submittedAt table
      track { id name }
      team { id name members @include(if: $members) { id displayName } }
      event { id slug name }
    }
  }
`);

const STATUS: Record<string, ['good' | 'warn' | 'plain', string]> = {
  SUBMITTED: ['good', 'submitted'],
  DRAFT: ['plain', 'draft'],
  WITHDRAWN: ['warn', 'withdrawn'],
};

export function ProjectPage({ slug, id }: { slug: string; id: string }) {
  const { viewer, rolesIn, loading } = useSession();
  // Team members' names are for the event's members (and site admins) only.
  const members = !!viewer && (viewer.user.isSiteAdmin || rolesIn(slug).length > 0);
  const q = useQuery(ProjectQuery, { id, members }, { skip: loading });
  const p = q.data?.project;
  if (!p || p.event.slug !== slug)
    return (
      <Pending
        title="Project"
        q={q}
        missing={
          <Page title="No such project">
            <p>
              This event has no project here that you may see. <Link href={`${eventPath(slug)}/projects`}>See its projects</Link>.
            </p>
          </Page>
        }
      />
    );
  const repo = safeUrl(p.repoUrl);
  const demo = safeUrl(p.demoUrl);
  const [tone, status] = STATUS[p.status] ?? ['plain', p.status.toLowerCase()];
  return (
    <Page title={p.title}>
      {p.tagline && <p class="tagline">{p.tagline}</p>}
      <dl class="project-meta">
        <dt>Team</dt>
        <dd>
          {p.team.name}
          {p.team.members && p.team.members.length > 0 ? (
            <span> ({p.team.members.map((m) => m.displayName).join(', ')})</span>
          ) : (
            !members && <span class="muted"> (members’ names are shown to the event’s participants, judges and organizers)</span>
          )}
        </dd>
        <dt>Track</dt>
        <dd>{p.track.name}</dd>
        {p.table && (
          <>
            <dt>Expo table</dt>
            <dd>{p.table}</dd>
          </>
        )}
        <dt>Status</dt>
        <dd>
          <Badge tone={tone}>{status}</Badge> {p.submittedAt && <When at={p.submittedAt} />}
        </dd>
        {p.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>
              <ul class="tags">
                {p.tags.map((t) => (
                  <li>
                    <Badge>{t}</Badge>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        {(repo || demo) && (
          <>
            <dt>Links</dt>
            <dd>
              {repo && (
                <a href={repo} rel="noopener noreferrer" target="_blank">
                  Source code
                </a>
              )}
              {repo && demo && ' · '}
              {demo && (
                <a href={demo} rel="noopener noreferrer" target="_blank">
                  Demo
                </a>
              )}
            </dd>
          </>
        )}
      </dl>
      {p.summary && (
        <>
          <h2>Summary</h2>
          <p class="description">{p.summary}</p>
        </>
      )}
      <h2>Description</h2>
      {p.description ? <div class="description">{p.description}</div> : <p class="muted">No description yet.</p>}
      {p.status === 'SUBMITTED' && <Thread slug={slug} projectId={p.id} />}
      <p>
        <Link href={`${eventPath(slug)}/projects`}>← All projects of {p.event.name}</Link>
      </p>
    </Page>
  );
}

// ---- a project's comments --------------------------------------------------------------

const CommentsQuery = graphql(`
  query ProjectComments($id: ID!, $first: Int, $after: String) {
    project(id: $id) {
      id
      comments(first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { id body hidden hiddenReason createdAt author { displayName } }
      }
    }
  }
`);

const PostComment = graphql(`
  mutation PostComment($project: ID!, $body: String!) { postComment(project: $project, body: $body) { id } }
`);

const HideComment = graphql(`
  mutation HideComment($id: ID!, $reason: String!) { hideComment(id: $id, reason: $reason) { id hidden hiddenReason } }
`);

type CommentNode = NonNullable<ResultOf<typeof CommentsQuery>['project']>['comments']['nodes'][number];

const BODY_MAX = 2000;

/** The project's thread: comments as plain text (never markup), a form for signed-in
 *  people, and a Hide button for the event's organizers. */
function Thread({ slug, projectId }: { slug: string; projectId: string }) {
  const { viewer, rolesIn } = useSession();
  const organizer = !!viewer && (viewer.user.isSiteAdmin || rolesIn(slug).includes('ORGANIZER'));
  const t = usePaged(CommentsQuery, { id: projectId, first: 20, after: null }, (d) => d.project?.comments);
  const post = useMutation(PostComment);
  const [body, setBody] = useState('');
  const [posted, setPosted] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setPosted(false);
    const d = await post.run({ project: projectId, body });
    if (d) {
      setBody('');
      setPosted(true);
      await t.q.refetch();
    }
  };
  return (
    <section class="comments" aria-labelledby="comments-h">
      <h2 id="comments-h">Comments</h2>
      <ErrorNote error={t.q.error} />
      {!t.q.data && !t.q.error && <Loading what="Loading comments" />}
      {t.q.data && t.nodes.length === 0 && <p class="muted">No comments yet.</p>}
      {t.nodes.length > 0 && (
        <ol class="comment-list">
          {t.nodes.map((c) => (
            <CommentItem key={c.id} c={c} organizer={organizer} onHidden={() => t.q.refetch()} />
          ))}
        </ol>
      )}
      {t.total > t.nodes.length && (
        <LoadMore shown={t.nodes.length} total={t.total} hasNext={t.hasNext} loading={t.loadingMore} error={t.moreError} onMore={t.loadMore} what="comments" />
      )}
      {viewer ? (
        <form class="comment-form" onSubmit={submit}>
          <TextArea
            label="Your comment"
            hint={`Plain text, up to ${BODY_MAX.toLocaleString('en')} characters, shown with your display name (${viewer.user.displayName}).`}
            value={body}
            onValue={(v) => {
              setBody(v);
              setPosted(false);
            }}
            maxLength={BODY_MAX}
            rows={3}
            required
          />
          <button type="submit" disabled={post.loading || !body.trim()}>
            {post.loading ? 'Posting…' : 'Post comment'}
          </button>
          <ErrorNote error={post.error} />
          {posted && <Notice>Your comment was posted.</Notice>}
        </form>
      ) : (
        <p class="muted">
          <Link href="/login">Log in</Link> to comment.
        </p>
      )}
    </section>
  );
}

function CommentItem({ c, organizer, onHidden }: { c: CommentNode; organizer: boolean; onHidden: () => void }) {
  const hide = useMutation(HideComment);
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await hide.run({ id: c.id, reason })) {
      setOpen(false);
      onHidden();
    }
  };
  return (
    <li class={`comment${c.hidden ? ' comment-hidden' : ''}`} data-testid="comment">
      <p class="comment-meta">
        <strong class="comment-author">{c.author.displayName}</strong> · <When at={c.createdAt} />
        {c.hidden && (
          <>
            {' '}
            <Badge tone="warn">hidden</Badge>
          </>
        )}
      </p>
      {c.hidden && (
        <p class="muted" data-testid="comment-hidden-note">
          {c.hiddenReason ? `Hidden by the organizers: ${c.hiddenReason}` : 'This comment was hidden by the organizers.'}
        </p>
      )}
      {/* Text only: the body is never interpreted as HTML or Markdown. */}
      {c.body != null && <p class="comment-body">{c.body}</p>}
      {organizer && !c.hidden && !open && (
        <button type="button" class="secondary" onClick={() => setOpen(true)}>
          Hide
        </button>
      )}
      {open && (
        <form class="comment-hide" onSubmit={submit}>
          <Field label="Reason for hiding" hint="One line, shown to the organizers and the comment's author." value={reason} onValue={setReason} maxLength={500} required />
          <button type="submit" class="danger" disabled={hide.loading || !reason.trim()}>
            {hide.loading ? 'Hiding…' : 'Hide comment'}
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <ErrorNote error={hide.error} />
        </form>
      )}
    </li>
  );
}

// ---- results -------------------------------------------------------------------------

// The ranking comes a page at a time (a large event ranks thousands of projects): the
// first page with the rest of the results, then more on request.
const RANKING_PAGE = 100;

const ResultsQuery = graphql(`
  query PublicResults($slug: String!) {
    event(slug: $slug) {
      id slug name timeZone
      results {
        final version publishedAt connected runId
        certainty {
          draws
          places { rank probability atLeast entry { projectExternalId } }
          pairs { probability better { projectExternalId } worse { projectExternalId } }
        }
        rankingPage(first: 100) {
          totalCount
          pageInfo { hasNextPage endCursor }
          edges { node { rank rankLow rankHigh rawRank rawMean quality excluded reviews projectExternalId project { id title table } } }
        }
      }
    }
  }
`);

/** The prizes' winners: a query of its own (the ranking's page is near the anonymous cost limit). */
const PodiumQuery = graphql(`
  query PublicPodium($slug: String!) {
    event(slug: $slug) {
      id
      podium {
        prize { id name position track { name } }
        source projectExternalId probability
        project { id title }
      }
    }
  }
`);

const RankingMore = graphql(`
  query PublicRankingMore($slug: String!, $after: String!) {
    event(slug: $slug) {
      id
      results {
        version
        rankingPage(first: 100, after: $after) {
          pageInfo { hasNextPage endCursor }
          edges { node { rank rankLow rankHigh rawRank rawMean quality excluded reviews projectExternalId project { id title table } } }
        }
      }
    }
  }
`);

const ResultsLive = graphql(`
  subscription PublicResultsLive($slug: String!) {
    resultsPublished(event: $slug) { id version final }
  }
`);

type Ranked = NonNullable<NonNullable<ResultOf<typeof ResultsQuery>['event']>['results']>['rankingPage']['edges'][number]['node'];

/** The pages read after the first one, for one published version. */
type MorePages = { version: number; rows: Ranked[]; after: string | null; hasNext: boolean };

const titleOf = (r: Ranked) => r.project?.title ?? `${r.projectExternalId} (no longer public)`;
const interval = (r: Ranked) => (r.rankLow == null ? '—' : r.rankLow === r.rankHigh ? `${r.rankLow}` : `${r.rankLow}–${r.rankHigh}`);

export function ResultsPage({ slug }: { slug: string }) {
  const q = useQuery(ResultsQuery, { slug });
  const prizes = useQuery(PodiumQuery, { slug });
  const [fresh, setFresh] = useState<number>();
  const [more, setMore] = useState<MorePages>();
  const [moreError, setMoreError] = useState<ApiError>();
  const [loadingMore, setLoadingMore] = useState(false);
  useSubscription(
    ResultsLive,
    { slug },
    (d) => {
      setFresh(d.resultsPublished.version);
      void q.refetch();
      void prizes.refetch();
    },
    {
      onReconnect: () => {
        void q.refetch();
        void prizes.refetch();
      },
    },
  );
  const e = q.data?.event;
  if (!e) return <Pending title="Results" q={q} missing={<NoEvent slug={slug} />} />;
  const r = e.results;
  const title = `Results · ${e.name}`;
  if (!r)
    return (
      <Page title={title}>
        <ErrorNote error={q.error} />
        <p>The results are not published yet. This page updates by itself when the organizers publish them.</p>
      </Page>
    );
  const page = r.rankingPage;
  const extra = more?.version === r.version ? more : undefined;
  const ranking = [...page.edges.map((x) => x.node), ...(extra?.rows ?? [])];
  const hasNext = extra ? extra.hasNext : page.pageInfo.hasNextPage;
  const cursor = extra ? extra.after : page.pageInfo.endCursor;
  const loadMore = async () => {
    if (!cursor) return;
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      const d = await request(RankingMore, { slug, after: cursor });
      const next = d.event?.results;
      if (!next || next.version !== r.version) {
        // A newer version was published meanwhile: start again from its first page.
        void q.refetch();
        return;
      }
      setMore({
        version: r.version,
        rows: [...(extra?.rows ?? []), ...next.rankingPage.edges.map((x) => x.node)],
        after: next.rankingPage.pageInfo.endCursor,
        hasNext: next.rankingPage.pageInfo.hasNextPage,
      });
    } catch (err) {
      setMoreError(err instanceof ApiError ? err : new ApiError(String(err), 'NETWORK'));
    } finally {
      setLoadingMore(false);
    }
  };
  const ranked = ranking.filter((x) => x.rank != null);
  const podium = ranked.filter((x) => x.rank! <= 3);
  const odds = r.certainty;
  const placeOdds = (x: Ranked) => odds?.places.find((p) => p.entry.projectExternalId === x.projectExternalId);
  const percent = (p: number) => `${Math.round(100 * p)}%`;
  const winners = prizes.data?.event?.podium ?? [];
  // How sure the order of neighbouring podium places is.
  const neighbours = podium.slice(1).flatMap((worse, i) => {
    const better = podium[i];
    const pair = odds?.pairs.find((p) => p.better.projectExternalId === better.projectExternalId && p.worse.projectExternalId === worse.projectExternalId);
    return pair ? [{ better, worse, p: pair.probability }] : [];
  });
  const shown = ranking.length < page.totalCount ? ` (the first ${ranking.length} of ${page.totalCount})` : '';
  const rows: ForestRow[] = ranking.map((x) => ({
    label: titleOf(x),
    href: x.project ? projectPath(e.slug, x.project.id) : undefined,
    rank: x.rank,
    rankLow: x.rankLow,
    rankHigh: x.rankHigh,
    quality: x.quality,
    rawMean: x.rawMean,
    rawRank: x.rawRank,
    excluded: x.excluded,
  }));
  return (
    <Page title={title}>
      <ErrorNote error={q.error} />
      {fresh != null && <Notice>Version {fresh} was just published; the page shows it.</Notice>}
      <p class="results-meta">
        <Badge tone={r.final ? 'good' : 'warn'}>{r.final ? 'final' : 'provisional'}</Badge>
        <span>Version {r.version}</span>
        <span>
          published <When at={r.publishedAt} zone={e.timeZone} />
        </span>
        <Link href={`${eventPath(e.slug)}/verify`}>Verify these results</Link>
      </p>
      {!r.final && <p class="muted">Provisional: the organizers may publish a newer version.</p>}
      {!r.connected && (
        <p class="muted">
          Not every project could be compared with every other (the judges formed separate groups): only the largest group is ranked.
        </p>
      )}
      <h2>Podium</h2>
      {podium.length === 0 ? (
        <p class="muted">No project is ranked.</p>
      ) : (
        <ol class="podium">
          {podium.map((x) => (
            <li class={`place-${x.rank}`}>
              <span class="place">{ordinal(x.rank!)}</span>
              <span class="title">{x.project ? <Link href={projectPath(e.slug, x.project.id)}>{titleOf(x)}</Link> : titleOf(x)}</span>
              <span class="muted">
                {x.rankLow === x.rankHigh ? `certainly ${ordinal(x.rank!)} (90% interval)` : `90% interval: ${ordinal(x.rankLow!)} to ${ordinal(x.rankHigh!)} place`}
              </span>
              {placeOdds(x) && (
                <span class="odds" data-testid="place-odds">
                  {ordinal(x.rank!)} in {percent(placeOdds(x)!.probability)} of {odds!.draws} plausible rankings
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
      {neighbours.length > 0 && (
        <ul class="podium-order" data-testid="podium-order">
          {neighbours.map(({ better, worse, p }) => (
            <li>
              {titleOf(better)} ahead of {titleOf(worse)}: {percent(p)} sure
              {p < 0.6 ? ' — close to a coin toss' : p >= 0.9 ? ' — clear' : ''}
            </li>
          ))}
        </ul>
      )}
      {winners.length > 0 && (
        <>
          <h2>Prizes</h2>
          <ul class="prizes" data-testid="prizes">
            {winners.map((w) => (
              <li>
                <span class="prize-name">{w.prize.name}</span>
                {w.prize.track && <span class="muted"> · {w.prize.track.name}</span>}
                {': '}
                {w.project ? <Link href={projectPath(e.slug, w.project.id)}>{w.project.title}</Link> : `${w.projectExternalId} (no longer public)`}
                <span class="muted">
                  {w.source === 'ASSIGNED' ? ' — awarded by the organizers' : ` — ${ordinal(w.prize.position)} in the ranking`}
                  {w.probability != null && `, ${percent(w.probability)} sure of that place`}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      <h2>The whole ranking</h2>
      <p>
        Judges differ in severity and each project is seen by only a few of them, so the scores are calibrated before ranking. Each line shows where a project could
        plausibly place: where lines overlap, the order is close to a coin toss.
      </p>
      <ForestPlot rows={rows} caption={`Calibrated ranks of ${ranked.length} projects${shown} with 90% rank intervals; the table below gives the same numbers.`} />
      <div class="ranking-table">
        <Table caption="The ranking">
          <thead>
            <tr>
              <th scope="col" class="num">
                Place
              </th>
              <th scope="col">Project</th>
              <th scope="col">90% interval</th>
              <th scope="col" class="num minor">
                Raw rank
              </th>
              <th scope="col" class="num">
                Quality
              </th>
              <th scope="col" class="num minor">
                Raw mean
              </th>
              <th scope="col" class="num">
                Reviews
              </th>
            </tr>
          </thead>
          <tbody>
            {ranking.map((x) => (
              <tr>
                <td class="num">{x.rank ?? '—'}</td>
                <th scope="row">
                  {x.project ? <Link href={projectPath(e.slug, x.project.id)}>{titleOf(x)}</Link> : titleOf(x)}
                  {x.project?.table && <span class="muted"> · table {x.project.table}</span>}
                  {x.excluded && <span class="muted"> · not ranked: {excludedReason(x.excluded)}</span>}
                  {/* On a phone the minor columns fold into this second line. */}
                  <span class="minor-line muted">
                    Raw rank {x.rawRank ?? '—'} · raw mean {x.rawMean?.toFixed(3) ?? '—'}
                  </span>
                </th>
                <td>{interval(x)}</td>
                <td class="num minor">{x.rawRank ?? '—'}</td>
                <td class="num">{x.quality?.toFixed(3) ?? '—'}</td>
                <td class="num minor">{x.rawMean?.toFixed(3) ?? '—'}</td>
                <td class="num">{x.reviews}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      </div>
      <ErrorNote error={moreError} />
      {hasNext && (
        <p>
          <button type="button" class="secondary" onClick={loadMore} disabled={loadingMore}>
            {loadingMore ? 'Loading…' : `Show the next ${Math.min(RANKING_PAGE, page.totalCount - ranking.length)} of ${page.totalCount - ranking.length} more`}
          </button>
        </p>
      )}
    </Page>
  );
}

// ---- verify --------------------------------------------------------------------------

const VerifyQuery = graphql(`
  query PublicVerify($slug: String!) {
    signingKey { algorithm fingerprint publicKeyPem }
    event(slug: $slug) {
      id slug name timeZone
      results { final version publishedAt publishedAtSigned runId keyFingerprint resultHash inputsHash signature publicationSignature }
    }
  }
`);

function Hash({ children }: { children: string }) {
  return <code class="hash">{children}</code>;
}

export function VerifyPage({ slug }: { slug: string }) {
  const q = useQuery(VerifyQuery, { slug });
  const e = q.data?.event;
  if (!q.data || !e) return <Pending title="Verify the results" q={q} missing={<NoEvent slug={slug} />} />;
  const key = q.data.signingKey;
  const r = e.results;
  const same = r && r.keyFingerprint.toLowerCase() === key.fingerprint.toLowerCase();
  const origin = location.origin;
  const commands = [
    `# on the server (or with a copy of its database): write the signed bundle`,
    `verdict results export --event ${e.slug} bundle/`,
    ``,
    `# anywhere, offline: re-run the calibration and check every hash and signature,`,
    `# trusting only the key this deployment publishes`,
    `FP=$(curl -sI ${origin}/.well-known/verdict-signing-key | awk -F': ' 'tolower($1)=="x-signing-key-fingerprint"{print $2}' | tr -d '\\r')`,
    `verdict results verify bundle/ --key "$FP"`,
  ].join('\n');
  return (
    <Page title={`Verify the results · ${e.name}`}>
      <ErrorNote error={q.error} />
      <p>
        Every calibration run pins its inputs, hashes inputs and result, and is signed with this deployment’s Ed25519 key. Anyone holding the exported bundle can re-run
        the calibration and check it without the server: a single changed byte fails.
      </p>
      <h2>This deployment’s signing key</h2>
      <dl class="verify-list">
        <dt>Algorithm</dt>
        <dd>{key.algorithm}</dd>
        <dt>Fingerprint</dt>
        <dd>
          <Hash>{key.fingerprint}</Hash>
          <span class="visually-hidden"> (SHA-256 of the public key)</span>
        </dd>
        <dt>Public key</dt>
        <dd>
          <pre class="hash" data-testid="public-key">
            {key.publicKeyPem}
          </pre>
          <a href="/.well-known/verdict-signing-key">/.well-known/verdict-signing-key</a> serves the same key, with its fingerprint in the{' '}
          <code>x-signing-key-fingerprint</code> header.
        </dd>
      </dl>
      <h2>The published results</h2>
      {!r ? (
        <p>The results are not published yet: there is nothing to verify.</p>
      ) : (
        <>
          <p class="results-meta">
            <Badge tone={r.final ? 'good' : 'warn'}>{r.final ? 'final' : 'provisional'}</Badge>
            <span>Version {r.version}</span>
            <span>
              published <When at={r.publishedAt} zone={e.timeZone} />
            </span>
          </p>
          <dl class="verify-list">
            <dt>Signed by key</dt>
            <dd>
              <Hash>{r.keyFingerprint}</Hash>{' '}
              {same ? <Badge tone="good">matches this deployment’s key</Badge> : <Badge tone="bad">does NOT match this deployment’s key</Badge>}
            </dd>
            <dt>Result hash</dt>
            <dd>
              <Hash>{r.resultHash}</Hash>
            </dd>
            <dt>Inputs hash</dt>
            <dd>
              <Hash>{r.inputsHash}</Hash>
            </dd>
            <dt>Run signature</dt>
            <dd>
              <Hash>{r.signature}</Hash>
            </dd>
            <dt>Publication signature</dt>
            <dd>
              <Hash>{r.publicationSignature}</Hash>
            </dd>
            <dt>Signed publication time</dt>
            <dd>
              <Hash>{r.publishedAtSigned}</Hash>
            </dd>
            <dt>Run</dt>
            <dd>
              <Hash>{r.runId}</Hash>
            </dd>
          </dl>
          {!same && (
            <p class="error" role="alert">
              The results were signed with another key than the one this server publishes now (the key may have been replaced). Verify the bundle against the key you
              trust.
            </p>
          )}
        </>
      )}
      <h2>Check it yourself, offline</h2>
      <ol>
        <li>Get the bundle: the organizers (or whoever runs the server) export it and share the folder.</li>
        <li>Pin the key: take the fingerprint above from this page or from the well-known address, not from the bundle.</li>
        <li>
          Run the verifier: it re-runs the estimator from the pinned inputs, compares the result with the signed one (ranks exactly, numbers to a millionth) and checks
          the signatures; it prints PASS, or names what failed.
        </li>
      </ol>
      <pre>
        <code>{commands}</code>
      </pre>
      {r && (
        <p class="muted">
          The bundle’s result hash must be <Hash>{r.resultHash}</Hash>.
        </p>
      )}
    </Page>
  );
}
