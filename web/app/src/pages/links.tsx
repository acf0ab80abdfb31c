// Links that say what they are: before an invitation, reset, confirmation, team-join or judge sign-in page
// asks for anything, it reads the link (without using it) and shows what it is for: the
// event, role, team and masked address. A link that no longer works says so at once.
import type { ComponentChildren } from 'preact';
import { useQuery } from '../api';
import { graphql, type ResultOf } from '../graphql';
import { Link } from '../router';
import { ErrorNote, Loading, When } from '../ui';

const LinkQuery = graphql(`
  query Link($kind: LinkKind!, $token: String!) {
    link(kind: $kind, token: $token) { kind state expiresAt email role eventName eventSlug teamName }
  }
`);

export type LinkData = ResultOf<typeof LinkQuery>['link'];
export type LinkKind = LinkData['kind'];

const ROLE_WORDS: Record<string, string> = { PARTICIPANT: 'a participant', JUDGE: 'a judge', ORGANIZER: 'an organizer' };

/** What the link is for, in one sentence. */
function Summary({ link }: { link: LinkData }) {
  const event = link.eventName && <strong>{link.eventName}</strong>;
  const to = link.email && (
    <>
      {' '}
      for <strong>{link.email}</strong>
    </>
  );
  switch (link.kind) {
    case 'INVITATION':
      return (
        <p data-testid="link-summary">
          {link.teamName ? (
            <>
              An invitation to join the team <strong>{link.teamName}</strong> in {event}
            </>
          ) : (
            <>
              An invitation to take part in {event} as {ROLE_WORDS[link.role ?? ''] ?? 'a member'}
            </>
          )}
          {to}.
        </p>
      );
    case 'PASSWORD_RESET':
      return <p data-testid="link-summary">A link to choose a new password for the account{to}.</p>;
    case 'EMAIL_CONFIRMATION':
      return <p data-testid="link-summary">A link that confirms the email address{to}.</p>;
    case 'JUDGE_SIGN_IN':
      return (
        <p data-testid="link-summary">
          Your sign-in link as a judge of {event}
          {to}.
        </p>
      );
    case 'TEAM_JOIN':
      return (
        <p data-testid="link-summary">
          A link to join the team <strong>{link.teamName}</strong> in {event}.
        </p>
      );
  }
}

/** Why the link no longer works, and what to do instead. */
function Gone({ link }: { link: LinkData }) {
  const organizers = link.eventName ? `the organizers of ${link.eventName}` : 'the organizers';
  const text: Record<LinkKind, Partial<Record<LinkData['state'], string>>> = {
    INVITATION: {
      USED: 'This invitation link was already used. Log in to reach the event.',
      EXPIRED: `This invitation has expired. Ask ${organizers} for a new one.`,
      REVOKED: `This invitation was withdrawn by ${organizers}, or replaced by a newer link.`,
    },
    PASSWORD_RESET: {
      USED: 'This reset link was already used. Ask for a new one if you need it.',
      EXPIRED: 'This reset link has expired. Ask for a new one.',
    },
    EMAIL_CONFIRMATION: {
      USED: 'This confirmation link was already used: the address is confirmed.',
      EXPIRED: 'This confirmation link has expired. Ask for a new one on your account page.',
    },
    JUDGE_SIGN_IN: {
      EXPIRED: `Judging has closed, so this link no longer signs you in. Log in with your password to see your reviews.`,
      REVOKED: `This sign-in link was revoked or replaced by ${organizers}, or you no longer judge there. Ask them for the new one.`,
    },
    TEAM_JOIN: {
      EXPIRED: 'This join link has expired, or the event no longer lets teams change. Ask the team for a new link.',
    },
  };
  return (
    <>
      <p role="alert">{text[link.kind][link.state] ?? 'This link no longer works.'}</p>
      <p>
        {link.kind === 'PASSWORD_RESET' ? (
          <Link href="/forgot">Ask for a new reset link</Link>
        ) : (
          <Link href="/login">Log in</Link>
        )}
        {link.eventSlug && (
          <>
            {' '}
            · <Link href={`/e/${encodeURIComponent(link.eventSlug)}`}>{link.eventName}</Link>
          </>
        )}
      </p>
    </>
  );
}

/**
 * Reads the link first: an unknown one says it is not valid, a used, expired or revoked
 * one says so, and only a link that works shows what it is for and then `children`.
 */
export function LinkGate({ kind, token, children }: { kind: LinkKind; token: string; children: (link: LinkData) => ComponentChildren }) {
  const q = useQuery(LinkQuery, { kind, token });
  if (q.error)
    return q.error.code === 'NOT_FOUND' ? (
      <div class="narrow">
        <p role="alert">This link is not valid. Check that you opened the whole link from the message.</p>
        <p>
          <Link href="/login">Log in</Link> · <Link href="/">See all events</Link>
        </p>
      </div>
    ) : (
      <ErrorNote error={q.error} />
    );
  if (!q.data) return <Loading what="Reading the link" />;
  const link = q.data.link;
  if (link.state !== 'VALID')
    return (
      <div class="narrow">
        <Summary link={link} />
        <Gone link={link} />
      </div>
    );
  return (
    <>
      <div class="narrow">
        <Summary link={link} />
        {link.expiresAt && (
          <p class="muted">
            The link works until <When at={link.expiresAt} />.
          </p>
        )}
      </div>
      {children(link)}
    </>
  );
}
