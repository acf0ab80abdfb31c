// /e/:slug/admin/voting: the event's community vote. Who votes (accounts, confirmed email
// addresses, or only listed addresses), each voter's credits and the window; after the
// window closes, publishing the tally, which nobody sees before.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '../../api';
import { graphql } from '../../graphql';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Badge, ErrorNote, Field, Loading, Notice, Select, TextArea, When } from '../../ui';
import { fromZoneInput, toZoneInput } from './zones';
import { OrgPage } from './nav';
import './organizer-admin.css';

const VotingQuery = graphql(`
  query EventVoting($slug: String!) {
    event(slug: $slug) {
      id timeZone
      voting { mode credits opens closes isOpen tallyPublishedAt voters allowlistSize }
    }
  }
`);

const ConfigureVoting = graphql(`
  mutation ConfigureVoting($event: String!, $mode: VotingMode!, $credits: Int!, $opens: DateTime!, $closes: DateTime!, $allowlist: [String!]) {
    configureVoting(event: $event, mode: $mode, credits: $credits, opens: $opens, closes: $closes, allowlist: $allowlist) { mode voters }
  }
`);

const PublishTally = graphql(`
  mutation PublishVoteTally($event: String!) {
    publishVoteTally(event: $event) { rank }
  }
`);

const MODES = [
  { value: 'ACCOUNT', label: 'Signed-in accounts (with a confirmed address)' },
  { value: 'EMAIL', label: 'Anyone who confirms an email address' },
  { value: 'EMAIL_ALLOWLIST', label: 'Only the addresses I list' },
];

export function VotingPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const q = useQuery(VotingQuery, { slug }, { skip: !viewer });
  const e = q.data?.event;
  return (
    <OrgPage slug={slug} title="Community vote">
      <ErrorNote error={q.error} />
      {q.loading && !q.data ? <Loading /> : e && <VotingForm slug={slug} e={e} onSaved={() => q.refetch()} />}
    </OrgPage>
  );
}

type EventVoting = {
  timeZone: string;
  voting: { mode: string; credits: number; opens: string | null; closes: string | null; isOpen: boolean; tallyPublishedAt: string | null; voters: number; allowlistSize: number } | null;
};

function VotingForm({ slug, e, onSaved }: { slug: string; e: EventVoting; onSaved: () => Promise<void> }) {
  const v = e.voting;
  const zone = e.timeZone;
  const [mode, setMode] = useState(v?.mode ?? 'ACCOUNT');
  const [credits, setCredits] = useState(String(v?.credits ?? 100));
  const [opens, setOpens] = useState(toZoneInput(v?.opens, zone));
  const [closes, setCloses] = useState(toZoneInput(v?.closes, zone));
  const [allowlist, setAllowlist] = useState('');
  const [done, setDone] = useState('');
  const configure = useMutation(ConfigureVoting);
  const publish = useMutation(PublishTally);
  const published = !!v?.tallyPublishedAt;
  return (
    <>
      {v ? (
        <p>
          Voting {v.isOpen ? <Badge tone="good">open</Badge> : <Badge>closed</Badge>} <When at={v.opens} zone={zone} /> to <When at={v.closes} zone={zone} />;{' '}
          {v.voters} {v.voters === 1 ? 'voter' : 'voters'}
          {v.mode === 'EMAIL_ALLOWLIST' && `, ${v.allowlistSize} listed addresses`}. Voters see the{' '}
          <Link href={`/e/${encodeURIComponent(slug)}/vote`}>voting page</Link>.
        </p>
      ) : (
        <p class="muted">This event has no community vote yet.</p>
      )}
      <p class="muted">
        Each voter spreads their credits over the projects; n votes on one project cost n². The tally stays hidden, from you too, until the window has closed
        and you publish it; it never changes the judged results.
      </p>
      {!published && (
        <form
          class="narrow"
          aria-labelledby="voting-h"
          onSubmit={async (ev) => {
            ev.preventDefault();
            setDone('');
            const o = fromZoneInput(opens, zone);
            const c = fromZoneInput(closes, zone);
            if (!o || !c) return;
            const list = allowlist
              .split(/[\s,;]+/)
              .map((x) => x.trim())
              .filter(Boolean);
            const r = await configure.run({
              event: slug,
              mode: mode as 'ACCOUNT' | 'EMAIL' | 'EMAIL_ALLOWLIST',
              credits: Number(credits),
              opens: o,
              closes: c,
              allowlist: mode === 'EMAIL_ALLOWLIST' && list.length > 0 ? list : null,
            });
            if (r) {
              setDone('The vote is saved.');
              setAllowlist('');
              await onSaved();
            }
          }}
        >
          <h2 id="voting-h">{v ? 'Change the vote' : 'Set up a vote'}</h2>
          <Select label="Who votes" value={mode} onValue={setMode} options={MODES} />
          <Field label="Credits per voter" type="number" min={1} max={10000} required value={credits} onValue={setCredits} />
          <Field label="Voting opens" type="datetime-local" hint={`${zone} time`} required value={opens} onValue={setOpens} />
          <Field label="Voting closes" type="datetime-local" hint={`${zone} time`} required value={closes} onValue={setCloses} />
          {mode === 'EMAIL_ALLOWLIST' && (
            <TextArea
              label="Addresses that may vote"
              hint="One per line (or separated by commas). Replaces the list; leave empty to keep it."
              value={allowlist}
              onValue={setAllowlist}
            />
          )}
          <ErrorNote error={configure.error} />
          <Notice>{done}</Notice>
          <button type="submit" disabled={configure.loading}>
            Save the vote
          </button>
        </form>
      )}
      {v && (
        <section aria-labelledby="tally-h">
          <h2 id="tally-h">Tally</h2>
          {published ? (
            <p>
              Published <When at={v.tallyPublishedAt} zone={zone} />: everyone reads it on the <Link href={`/e/${encodeURIComponent(slug)}/vote`}>voting page</Link>.
            </p>
          ) : (
            <>
              <p class="muted">You can publish the tally once voting has closed.</p>
              <ErrorNote error={publish.error} />
              <button
                type="button"
                disabled={publish.loading || v.isOpen}
                onClick={async () => {
                  if (await publish.run({ event: slug })) await onSaved();
                }}
              >
                Publish the tally
              </button>
            </>
          )}
        </section>
      )}
    </>
  );
}
