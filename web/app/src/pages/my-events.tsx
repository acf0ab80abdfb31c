// /my-events: where everyone lands after logging in. Each of their events, their roles in
// it, and the one next thing to do there (a judge's queue, a team's draft, an organizer's
// next setup step), from Viewer.myEvents in one request.
import type { ComponentChildren } from 'preact';
import { useQuery } from '../api';
import { graphql, type ResultOf } from '../graphql';
import { Link } from '../router';
import { useSession } from '../session';
import { Badge, Countdown, ErrorNote, Loading, Page } from '../ui';
import { STEPS } from './organizer/checklist';

const MyEventsQuery = graphql(`
  query MyEvents {
    viewer {
      user { id isSiteAdmin }
      myEvents {
        event { id slug name submissionsOpen submissionsClose judgingOpen judgingClose }
        roles
        toScore
        drafts
        submitted
        setupStep
      }
    }
  }
`);

type Row = NonNullable<ResultOf<typeof MyEventsQuery>['viewer']>['myEvents'][number];

const ROLE_NAMES: Record<string, string> = { PARTICIPANT: 'Participant', JUDGE: 'Judge', ORGANIZER: 'Organizer' };

const past = (t: string | null | undefined) => !!t && new Date(t).getTime() <= Date.now();

/** The one next thing to do for each role, as a sentence and a link. */
function nextThings(r: Row): [ComponentChildren, string][] {
  const e = r.event;
  const base = `/e/${encodeURIComponent(e.slug)}`;
  const out: [ComponentChildren, string][] = [];
  if (r.roles.includes('ORGANIZER')) {
    const step = r.setupStep;
    out.push(
      step
        ? [`Organizer: next setup step, ${STEPS[step].title.toLowerCase()}. ${STEPS[step].todo}`, `${base}/admin${STEPS[step].path}`]
        : ['Organizer: every setup step is done, the results are published.', `${base}/admin`],
    );
  }
  if (r.roles.includes('JUDGE')) {
    const n = r.toScore ?? 0;
    const projects = `${n} ${n === 1 ? 'project' : 'projects'} to score`;
    if (!e.judgingOpen || !past(e.judgingOpen)) out.push([`Judge: ${projects}; judging has not opened yet.`, `${base}/judge`]);
    else if (e.judgingClose && past(e.judgingClose)) out.push(['Judge: judging has closed.', `${base}/judge`]);
    else if (n === 0) out.push(['Judge: nothing left to score.', `${base}/judge`]);
    else
      out.push([
        <>
          Judge: {projects}
          {e.judgingClose && (
            <>
              , judging closes in <Countdown to={e.judgingClose} rough />
            </>
          )}
          .
        </>,
        `${base}/judge`,
      ]);
  }
  if (r.roles.includes('PARTICIPANT')) {
    const closed = past(e.submissionsClose);
    if (r.drafts == null) out.push([closed ? 'Participant: submissions have closed.' : 'Participant: you are not on a team yet.', `${base}/team`]);
    else if ((r.drafts ?? 0) > 0 && !closed)
      out.push([
        <>
          Participant: your draft is not submitted, <Countdown to={e.submissionsClose} rough /> left.
        </>,
        `${base}/my-project`,
      ]);
    else if ((r.submitted ?? 0) > 0) out.push(['Participant: your project is submitted.', `${base}/my-project`]);
    else out.push([closed ? 'Participant: submissions have closed.' : 'Participant: start your project.', `${base}/my-project`]);
  }
  return out;
}

export function MyEventsPage() {
  const { viewer, loading } = useSession();
  const q = useQuery(MyEventsQuery, {}, { skip: !viewer });
  if (loading)
    return (
      <Page title="My events">
        <Loading />
      </Page>
    );
  if (!viewer)
    return (
      <Page title="My events">
        <p>
          <Link href="/login?next=/my-events">Log in</Link> to see your events.
        </p>
      </Page>
    );
  const rows = q.data?.viewer?.myEvents;
  const admin = q.data?.viewer?.user.isSiteAdmin;
  return (
    <Page
      title="My events"
      actions={
        admin && (
          <Link href="/new-event" class="button">
            New event
          </Link>
        )
      }
    >
      <ErrorNote error={q.error} />
      {!rows && !q.error && <Loading what="Loading your events" />}
      {rows && rows.length === 0 && (
        <p>
          You have no role in any event yet. {admin ? <Link href="/new-event">Create an event</Link> : <Link href="/">See all events</Link>}.
        </p>
      )}
      {rows && rows.length > 0 && (
        <ul class="cards my-events">
          {rows.map((r) => (
            <li class="card" key={r.event.id}>
              <h2>
                <Link href={`/e/${encodeURIComponent(r.event.slug)}`}>{r.event.name}</Link>
              </h2>
              <p aria-label={`Your roles in ${r.event.name}`}>
                {r.roles.map((role) => (
                  <Badge key={role}>{ROLE_NAMES[role] ?? role}</Badge>
                ))}
              </p>
              <ul aria-label={`Next in ${r.event.name}`}>
                {nextThings(r).map(([what, href]) => (
                  <li key={href}>
                    <Link href={href}>{what}</Link>
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
      <p class="muted">
        <Link href="/account">Your account</Link>: profile, password, API tokens.
      </p>
    </Page>
  );
}
