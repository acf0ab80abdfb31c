// /e/:slug : one event, its windows and the next deadline, what it holds, and how to take part.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '../../api';
import { graphql } from '../../graphql';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Badge, Countdown, ErrorNote, isOpen, Notice, Page, When } from '../../ui';
import { eventPath, NoEvent, Pending } from './shared';
import './event.css';

/** Open / upcoming / closed for a window. */
function WindowBadge({ open, close }: { open: string | null | undefined; close: string | null | undefined }) {
  if (!open || !close) return <Badge>none</Badge>;
  const now = Date.now();
  if (isOpen(open, close, now)) return <Badge tone="good">open</Badge>;
  if (new Date(open).getTime() > now) return <Badge>upcoming</Badge>;
  return <Badge tone="warn">closed</Badge>;
}

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
