// /e/:slug/vote: the community vote. A voter spreads vote credits over the projects (n
// votes on one project cost n² credits) and casts the whole allocation at once. In an
// ACCOUNT vote the voter is the signed-in account; in an email vote they ask for a link,
// and following it (/e/:slug/vote?link=TOKEN) gives a key this browser keeps. Once the
// organizers publish the tally, the page shows it.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useMutation, useQuery } from '../api';
import { graphql } from '../graphql';
import { Link, navigate, useLocation } from '../router';
import { useSession } from '../session';
import { Badge, ErrorNote, Field, Loading, Notice, Page, Table, When } from '../ui';

const VoteQuery = graphql(`
  query CommunityVote($slug: String!, $key: String) {
    event(slug: $slug) {
      id slug name timeZone
      voting { mode credits opens closes isOpen tallyPublishedAt }
      myBallot(voterKey: $key) {
        credits spent remaining address
        votes { project { id } votes }
        projects { id title tagline team { name } }
      }
    }
  }
`);

const TallyQuery = graphql(`
  query CommunityTally($slug: String!) {
    event(slug: $slug) {
      id
      voteTally { rank votes voters project { id title } }
    }
  }
`);

const CastVotes = graphql(`
  mutation CastVotes($event: String!, $votes: [VoteInput!]!, $key: String) {
    castVotes(event: $event, votes: $votes, voterKey: $key) { credits spent remaining votes { project { id } votes } }
  }
`);

const RegisterVoter = graphql(`
  mutation RegisterVoter($event: String!, $email: String!) {
    registerVoter(event: $event, email: $email)
  }
`);

const ConfirmVoter = graphql(`
  mutation ConfirmVoter($token: String!) {
    confirmVoter(token: $token) { key event { slug } }
  }
`);

const keyName = (slug: string) => `verdict.voterKey.${slug}`;

function storedKey(slug: string): string | null {
  try {
    return localStorage.getItem(keyName(slug));
  } catch {
    return null;
  }
}

export function VotePage({ slug }: { slug: string }) {
  const { query } = useLocation();
  const link = query.get('link');
  const [key, setKey] = useState<string | null>(() => storedKey(slug));
  const confirm = useMutation(ConfirmVoter);
  // Following a voting link: trade its single-use token for this browser's key.
  useEffect(() => {
    if (!link) return;
    void confirm.run({ token: link }).then((r) => {
      if (!r) return;
      try {
        localStorage.setItem(keyName(slug), r.confirmVoter.key);
      } catch {
        /* private mode: the key lives as long as the page */
      }
      setKey(r.confirmVoter.key);
      navigate(`/e/${encodeURIComponent(slug)}/vote`, { replace: true });
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [link, slug]);
  const { viewer, loading: sessionLoading } = useSession();
  const q = useQuery(VoteQuery, { slug, key }, { skip: !!link || sessionLoading });
  const e = q.data?.event;
  const v = e?.voting;
  return (
    <Page title={e ? `Community vote: ${e.name}` : 'Community vote'}>
      <ErrorNote error={confirm.error} />
      {link && confirm.loading && <Loading what="Confirming your address" />}
      <ErrorNote error={q.error} />
      {!e ? (
        q.loading || link ? <Loading /> : q.data && <p>There is no event {slug}.</p>
      ) : !v ? (
        <p>This event has no community vote.</p>
      ) : (
        <>
          <p>
            Spread your {v.credits} vote credits over the projects you like: <strong>n votes on one project cost n² credits</strong>, so backing many projects a
            little counts for more than backing one a lot. You can change your votes until voting closes.
          </p>
          <p>
            Voting {v.isOpen ? <Badge tone="good">open</Badge> : <Badge>closed</Badge>} <When at={v.opens} zone={e.timeZone} /> to{' '}
            <When at={v.closes} zone={e.timeZone} />
          </p>
          {v.tallyPublishedAt ? (
            <Tally slug={slug} />
          ) : !v.isOpen ? (
            <p class="muted">Voting is closed. The organizers publish the tally after it closes.</p>
          ) : e.myBallot ? (
            <BallotForm
              slug={slug}
              voterKey={v.mode === 'ACCOUNT' ? null : key}
              ballot={e.myBallot}
              onForget={
                v.mode === 'ACCOUNT'
                  ? undefined
                  : () => {
                      localStorage.removeItem(keyName(slug));
                      setKey(null);
                    }
              }
            />
          ) : v.mode === 'ACCOUNT' ? (
            viewer ? (
              <p>Your account cannot vote here.</p>
            ) : (
              <p>
                <Link href={`/login?next=${encodeURIComponent(location.pathname)}`}>Log in</Link> to vote.
              </p>
            )
          ) : (
            <AskForLink slug={slug} allowlist={v.mode === 'EMAIL_ALLOWLIST'} />
          )}
        </>
      )}
    </Page>
  );
}

function AskForLink({ slug, allowlist }: { slug: string; allowlist: boolean }) {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState('');
  const register = useMutation(RegisterVoter);
  return (
    <form
      class="narrow"
      aria-labelledby="ask-link-h"
      onSubmit={async (ev) => {
        ev.preventDefault();
        setSent('');
        const r = await register.run({ event: slug, email: email.trim() });
        if (r) setSent(`If ${email.trim()} may vote here, a message is on its way to it: follow its link to vote.`);
      }}
    >
      <h2 id="ask-link-h">Vote with your email address</h2>
      <p class="muted">
        {allowlist ? 'This vote is open to the addresses the organizers listed. ' : ''}We mail you a link that works once; it confirms the address and lets this
        browser vote.
      </p>
      <Field label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
      <ErrorNote error={register.error} />
      <Notice>{sent}</Notice>
      <button type="submit" disabled={register.loading}>
        Send me a voting link
      </button>
    </form>
  );
}

type BallotData = {
  credits: number;
  spent: number;
  address: string | null;
  votes: { project: { id: string }; votes: number }[];
  projects: { id: string; title: string; tagline: string; team: { name: string } | null }[];
};

function BallotForm({ slug, voterKey, ballot, onForget }: { slug: string; voterKey: string | null; ballot: BallotData; onForget?: () => void }) {
  const initial = useMemo(() => Object.fromEntries(ballot.votes.map((x) => [x.project.id, x.votes])) as Record<string, number>, [ballot]);
  const [votes, setVotes] = useState<Record<string, number>>(initial);
  const [saved, setSaved] = useState('');
  const cast = useMutation(CastVotes);
  const cost = Object.values(votes).reduce((s, n) => s + n * n, 0);
  const remaining = ballot.credits - cost;
  const set = (id: string, n: number) => {
    setSaved('');
    setVotes((v) => ({ ...v, [id]: Math.max(0, n) }));
  };
  return (
    <form
      aria-labelledby="ballot-h"
      onSubmit={async (ev) => {
        ev.preventDefault();
        setSaved('');
        const list = Object.entries(votes)
          .filter(([, n]) => n > 0)
          .map(([project, n]) => ({ project, votes: n }));
        const r = await cast.run({ event: slug, votes: list, key: voterKey });
        if (r) setSaved(`Your votes are cast: ${r.castVotes.spent} of ${r.castVotes.credits} credits spent.`);
      }}
    >
      <h2 id="ballot-h">Your ballot</h2>
      {ballot.address && (
        <p class="muted">
          Voting as {ballot.address}.{' '}
          {onForget && (
            <button type="button" class="link" onClick={onForget}>
              Not you?
            </button>
          )}
        </p>
      )}
      <p role="status" aria-live="polite">
        <strong>{remaining}</strong> of {ballot.credits} credits left
      </p>
      <Table caption="Projects, in an order of your own">
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col">Votes</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {ballot.projects.map((p) => {
            const n = votes[p.id] ?? 0;
            const more = (n + 1) * (n + 1) - n * n;
            return (
              <tr key={p.id}>
                <th scope="row">
                  <Link href={`/e/${encodeURIComponent(slug)}/projects/${encodeURIComponent(p.id)}`}>{p.title}</Link>
                  {p.team && <span class="muted"> by {p.team.name}</span>}
                  {p.tagline && <div class="muted">{p.tagline}</div>}
                </th>
                <td>
                  <button type="button" aria-label={`One vote less for ${p.title}`} disabled={n === 0} onClick={() => set(p.id, n - 1)}>
                    −
                  </button>{' '}
                  <output aria-label={`Votes for ${p.title}`}>{n}</output>{' '}
                  <button type="button" aria-label={`One vote more for ${p.title}`} disabled={more > remaining} onClick={() => set(p.id, n + 1)}>
                    +
                  </button>
                </td>
                <td>{n * n}</td>
              </tr>
            );
          })}
        </tbody>
      </Table>
      <ErrorNote error={cast.error} />
      <Notice>{saved}</Notice>
      <button type="submit" disabled={cast.loading || remaining < 0}>
        Cast my votes
      </button>
    </form>
  );
}

function Tally({ slug }: { slug: string }) {
  const q = useQuery(TallyQuery, { slug });
  const rows = q.data?.event?.voteTally ?? [];
  return (
    <>
      <h2>The community's choice</h2>
      <ErrorNote error={q.error} />
      {q.loading && !q.data ? (
        <Loading />
      ) : (
        <Table caption="Community vote tally (separate from the judged results)">
          <thead>
            <tr>
              <th scope="col">Rank</th>
              <th scope="col">Project</th>
              <th scope="col">Votes</th>
              <th scope="col">Voters</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.project?.id ?? r.rank}>
                <td>{r.rank}</td>
                <th scope="row">{r.project?.title ?? <span class="muted">no longer public</span>}</th>
                <td>{r.votes}</td>
                <td>{r.voters}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </>
  );
}
