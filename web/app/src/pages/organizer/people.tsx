// The organizer's People page: members by role (grant and take away roles), invitations
// by email (send, resend, revoke, invite everyone an import brought in) and the outbox of
// invitation messages, whose links an organizer of an air-gapped event copies by hand.
import { useEffect, useState } from 'preact/hooks';
import { request, useMutation } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { LoadMore, usePaged, type Paged } from '../../paging';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Badge, Confirm, ErrorNote, Field, Loading, Notice, Select, Table, TextArea, When } from '../../ui';
import { StandingSignIn } from './judge-sign-in';
import { OrgPage } from './nav';
import './organizer-admin.css';

export const ROLE_LABEL: Record<string, string> = { PARTICIPANT: 'Participant', JUDGE: 'Judge', ORGANIZER: 'Organizer' };
const ROLE_OPTIONS = [
  { value: 'PARTICIPANT', label: 'Participant' },
  { value: 'JUDGE', label: 'Judge' },
  { value: 'ORGANIZER', label: 'Organizer' },
];
type RoleValue = 'PARTICIPANT' | 'JUDGE' | 'ORGANIZER';

/** Splits what was typed into addresses: one a line, or separated by commas or semicolons. */
export function splitEmails(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of text.split(/[\n,;]+/)) {
    const e = raw.trim();
    if (e && !seen.has(e.toLowerCase())) {
      seen.add(e.toLowerCase());
      out.push(e);
    }
  }
  return out;
}

const LINK = /https?:\/\/\S+\/(invite|reset|confirm)\/\S+/;

/** The link a message carries (what the recipient opens), or null. */
export function linkIn(body: string): string | null {
  return body.match(LINK)?.[0] ?? null;
}

function statusTone(s: string): 'good' | 'warn' | 'bad' | 'plain' {
  if (s === 'redeemed' || s === 'sent') return 'good';
  if (s === 'pending') return 'warn';
  if (s === 'revoked' || s === 'expired' || s === 'failed' || s === 'cancelled') return 'bad';
  return 'plain';
}

// ---- documents -----------------------------------------------------------------------

const Tracks = graphql(`
  query PeopleTracks($slug: String!) {
    event(slug: $slug) { id name tracks { id name } }
  }
`);

const Members = graphql(`
  query Members($slug: String!, $role: Role, $first: Int, $after: String) {
    event(slug: $slug) {
      id
      members(role: $role, first: $first, after: $after) {
        totalCount
        pageInfo { endCursor hasNextPage }
        nodes { id email role externalId user { id displayName } tracks { id name } standingSignIn { issuedAt lastUsedAt } }
      }
    }
  }
`);

const Invitations = graphql(`
  query Invitations($slug: String!, $first: Int, $after: String) {
    event(slug: $slug) {
      id
      invitations(first: $first, after: $after) {
        totalCount
        pageInfo { endCursor hasNextPage }
        nodes { id email role status createdAt expiresAt redeemedAt team { id name } }
      }
    }
  }
`);

const Outbox = graphql(`
  query Outbox($slug: String!, $first: Int, $after: String) {
    event(slug: $slug) {
      id
      outbox(first: $first, after: $after) {
        totalCount
        pageInfo { endCursor hasNextPage }
        nodes { id to subject status createdAt sentAt attempts lastError body serverSendsMail }
      }
    }
  }
`);

const GrantRole = graphql(`
  mutation GrantRole($event: String!, $email: String!, $role: Role!, $externalId: String, $tracks: [ID!]) {
    grantRole(event: $event, email: $email, role: $role, externalId: $externalId, tracks: $tracks) { id role }
  }
`);

const RevokeRole = graphql(`
  mutation RevokeRole($event: String!, $email: String!, $role: Role!) {
    revokeRole(event: $event, email: $email, role: $role)
  }
`);

const InviteToEvent = graphql(`
  mutation InviteToEvent($event: String!, $emails: [String!]!, $role: Role!) {
    inviteToEvent(event: $event, emails: $emails, role: $role) { id email }
  }
`);

const InviteImported = graphql(`
  mutation InviteImported($event: String!) {
    inviteImported(event: $event)
  }
`);

const ResendInvitation = graphql(`
  mutation ResendInvitation($id: ID!) {
    resendInvitation(id: $id) { id status expiresAt }
  }
`);

const RevokeInvitation = graphql(`
  mutation RevokeInvitation($id: ID!) {
    revokeInvitation(id: $id) { id status }
  }
`);

type Member = NonNullable<ResultOf<typeof Members>['event']>['members']['nodes'][number];
type Invitation = NonNullable<ResultOf<typeof Invitations>['event']>['invitations']['nodes'][number];
type Message = NonNullable<ResultOf<typeof Outbox>['event']>['outbox']['nodes'][number];
type Track = { id: string; name: string };

// ---- the page ------------------------------------------------------------------------

export function PeoplePage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const skip = !viewer;
  const tracks = useTracks(slug, skip);
  const [filter, setFilter] = useState('');
  const members = usePaged(Members, { slug, role: (filter || null) as RoleValue | null }, (r) => r.event?.members, { skip });
  const invitations = usePaged(Invitations, { slug }, (r) => r.event?.invitations, { skip });
  const outbox = usePaged(Outbox, { slug }, (r) => r.event?.outbox, { skip });
  const afterInvite = async () => {
    await Promise.all([invitations.reload(), outbox.reload()]);
  };
  return (
    <OrgPage slug={slug} title="People">
      <section aria-labelledby="invite-h">
        <h2 id="invite-h">Invite people</h2>
        <InviteForm slug={slug} onSent={afterInvite} />
      </section>

      <section aria-labelledby="invitations-h">
        <h2 id="invitations-h">Invitations</h2>
        <InviteImportedButton slug={slug} onSent={afterInvite} />
        <InvitationsTable list={invitations} onChange={afterInvite} />
      </section>

      <section aria-labelledby="members-h">
        <h2 id="members-h">Members</h2>
        <p class="muted">Everyone holding a role in this event. A person holding two roles is listed once for each.</p>
        <div class="org-toolbar">
          <Select
            label="Show"
            value={filter}
            onValue={setFilter}
            options={[{ value: '', label: 'Everyone' }, { value: 'PARTICIPANT', label: 'Participants' }, { value: 'JUDGE', label: 'Judges' }, { value: 'ORGANIZER', label: 'Organizers' }]}
          />
        </div>
        <MembersTable slug={slug} list={members} />
        <GrantForm slug={slug} tracks={tracks} onGranted={() => members.reload()} />
      </section>

      <section aria-labelledby="outbox-h">
        <h2 id="outbox-h">Outbox</h2>
        <p class="muted">
          The invitation messages of this event, oldest first. Without a mail server, copy each person&rsquo;s link and pass it on yourself. Password resets never appear here.
        </p>
        <OutboxList slug={slug} list={outbox} />
      </section>
    </OrgPage>
  );
}

function useTracks(slug: string, skip: boolean): Track[] {
  const [tracks, setTracks] = useState<Track[]>([]);
  useEffect(() => {
    if (skip) return;
    request(Tracks, { slug })
      .then((r) => setTracks(r.event?.tracks ?? []))
      .catch(() => setTracks([]));
  }, [slug, skip]);
  return tracks;
}

function InviteForm({ slug, onSent }: { slug: string; onSent: () => Promise<void> }) {
  const [emails, setEmails] = useState('');
  const [role, setRole] = useState<RoleValue>('PARTICIPANT');
  const [done, setDone] = useState('');
  const m = useMutation(InviteToEvent);
  const list = splitEmails(emails);
  return (
    <form
      class="narrow"
      onSubmit={async (e) => {
        e.preventDefault();
        setDone('');
        const r = await m.run({ event: slug, emails: list, role });
        if (r) {
          const n = r.inviteToEvent.length;
          setDone(`${n} invitation${n === 1 ? '' : 's'} sent as ${ROLE_LABEL[role]}.`);
          setEmails('');
          await onSent();
        }
      }}
    >
      <TextArea label="Emails" hint="One address a line, or separated by commas." required rows={4} value={emails} onValue={setEmails} />
      <Select label="Role" value={role} onValue={(v) => setRole(v as RoleValue)} options={ROLE_OPTIONS} />
      <ErrorNote error={m.error} />
      <Notice>{done}</Notice>
      <button type="submit" disabled={m.loading || list.length === 0}>
        Send invitations
      </button>
    </form>
  );
}

function InviteImportedButton({ slug, onSent }: { slug: string; onSent: () => Promise<void> }) {
  const m = useMutation(InviteImported);
  const [done, setDone] = useState('');
  return (
    <div class="org-block">
      <p class="muted">People an imported fixture brought in have no password yet: invite them all at once (those with a pending link are skipped).</p>
      <button
        type="button"
        class="secondary"
        disabled={m.loading}
        onClick={async () => {
          setDone('');
          const r = await m.run({ event: slug });
          if (r) {
            setDone(r.inviteImported === 0 ? 'Nobody needed an invitation.' : `${r.inviteImported} invitation${r.inviteImported === 1 ? '' : 's'} sent.`);
            await onSent();
          }
        }}
      >
        Invite everyone imported
      </button>
      <ErrorNote error={m.error} />
      <Notice>{done}</Notice>
    </div>
  );
}

function InvitationsTable({ list, onChange }: { list: Paged<Invitation>; onChange: () => Promise<void> }) {
  const resend = useMutation(ResendInvitation);
  const revoke = useMutation(RevokeInvitation);
  const [done, setDone] = useState('');
  if (list.error) return <ErrorNote error={list.error} />;
  if (list.loading && list.items.length === 0) return <Loading what="Loading invitations" />;
  if (list.items.length === 0) return <p class="muted">No invitations yet.</p>;
  return (
    <>
      <ErrorNote error={resend.error ?? revoke.error} />
      <Notice>{done}</Notice>
      <div class="org-wide">
        <Table caption="Invitations, oldest first">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Expires</th>
              <th scope="col">Team</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((i) => {
              const open = i.status === 'pending' || i.status === 'expired';
              return (
                <tr key={i.id} data-invitation={i.id}>
                  <td class="org-wrap">{i.email}</td>
                  <td>{ROLE_LABEL[i.role] ?? i.role}</td>
                  <td>
                    <Badge tone={statusTone(i.status)}>{i.status}</Badge>
                  </td>
                  <td>{i.redeemedAt ? <span class="muted">redeemed <When at={i.redeemedAt} /></span> : <When at={i.expiresAt} />}</td>
                  <td>{i.team ? i.team.name : <span class="muted">—</span>}</td>
                  <td>
                    {open ? (
                      <div class="actions">
                        <button
                          type="button"
                          class="secondary"
                          disabled={resend.loading}
                          onClick={async () => {
                            setDone('');
                            revoke.reset();
                            const r = await resend.run({ id: i.id });
                            if (r) {
                              setDone(`A new link was sent to ${i.email}; the old one no longer works.`);
                              await onChange();
                            }
                          }}
                        >
                          Resend
                        </button>
                        <Confirm
                          action="Revoke"
                          yes="Confirm revoke"
                          busy={revoke.loading}
                          onAsk={resend.reset}
                          onYes={async () => {
                            setDone('');
                            if (await revoke.run({ id: i.id })) {
                              setDone(`The invitation of ${i.email} is revoked; its link no longer works.`);
                              await onChange();
                            }
                          }}
                        />
                      </div>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </Table>
      </div>
      <LoadMore list={list} what="invitations" />
    </>
  );
}

function MembersTable({ slug, list }: { slug: string; list: Paged<Member> }) {
  const revoke = useMutation(RevokeRole);
  const [done, setDone] = useState('');
  if (list.error) return <ErrorNote error={list.error} />;
  if (list.loading && list.items.length === 0) return <Loading what="Loading members" />;
  return (
    <>
      <ErrorNote error={revoke.error} />
      <Notice>{done}</Notice>
      {list.items.length === 0 ? (
        <p class="muted">Nobody here yet.</p>
      ) : (
        <div class="org-wide">
          <Table caption="Members">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Tracks</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((m) => (
                <tr key={m.id}>
                  <td>
                    {m.user.displayName}
                    {m.externalId && <span class="muted"> · {m.externalId}</span>}
                  </td>
                  <td class="org-wrap">{m.email}</td>
                  <td>{ROLE_LABEL[m.role] ?? m.role}</td>
                  <td>{m.role === 'JUDGE' ? (m.tracks.length ? m.tracks.map((t) => t.name).join(', ') : <span class="muted">every track</span>) : <span class="muted">—</span>}</td>
                  <td>
                    {m.role === 'JUDGE' && <StandingSignIn slug={slug} judge={m.id} name={m.user.displayName} standing={m.standingSignIn} onChange={list.reload} />}
                    <Confirm
                      action="Remove"
                      yes="Confirm removal"
                      busy={revoke.loading}
                      onAsk={revoke.reset}
                      onYes={async () => {
                        setDone('');
                        if (await revoke.run({ event: slug, email: m.email, role: m.role })) {
                          setDone(`${m.user.displayName} is no longer ${ROLE_LABEL[m.role]?.toLowerCase() ?? m.role} here.`);
                          await list.reload();
                        }
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      )}
      <LoadMore list={list} what="members" />
    </>
  );
}

function GrantForm({ slug, tracks, onGranted }: { slug: string; tracks: Track[]; onGranted: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<RoleValue>('JUDGE');
  const [externalId, setExternalId] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [done, setDone] = useState('');
  const m = useMutation(GrantRole);
  return (
    <form
      class="narrow org-block"
      onSubmit={async (e) => {
        e.preventDefault();
        setDone('');
        const r = await m.run({
          event: slug,
          email: email.trim(),
          role,
          externalId: externalId.trim() || null,
          tracks: role === 'JUDGE' && chosen.length ? chosen : null,
        });
        if (r) {
          setDone(`${email.trim()} is now ${ROLE_LABEL[role].toLowerCase()} here.`);
          setEmail('');
          setExternalId('');
          setChosen([]);
          await onGranted();
        }
      }}
    >
      <h3>Give an existing account a role</h3>
      <p class="muted">For people who already have a confirmed account; invite everyone else above.</p>
      <Field label="Account email" type="email" autoComplete="off" required value={email} onValue={setEmail} />
      <Select label="Make them" value={role} onValue={(v) => setRole(v as RoleValue)} options={ROLE_OPTIONS} />
      <Field label="External id (optional)" hint="e.g. jdg_01: letters, digits, _, - or ." value={externalId} onValue={setExternalId} />
      {role === 'JUDGE' && tracks.length > 0 && (
        <fieldset class="org-checks">
          <legend>Tracks they judge (none ticked: every track)</legend>
          {tracks.map((t) => (
            <label key={t.id}>
              <input
                type="checkbox"
                checked={chosen.includes(t.id)}
                onChange={(e) => setChosen((c) => (e.currentTarget.checked ? [...c, t.id] : c.filter((x) => x !== t.id)))}
              />{' '}
              {t.name}
            </label>
          ))}
        </fieldset>
      )}
      <ErrorNote error={m.error} />
      <Notice>{done}</Notice>
      <button type="submit" disabled={m.loading}>
        Grant
      </button>
    </form>
  );
}

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function OutboxList({ slug, list }: { slug: string; list: Paged<Message> }) {
  const [copied, setCopied] = useState('');
  if (list.error) return <ErrorNote error={list.error} />;
  if (list.loading && list.items.length === 0) return <Loading what="Loading the outbox" />;
  if (list.items.length === 0) return <p class="muted">No messages yet.</p>;
  const unsent = list.items.some((m) => !m.serverSendsMail);
  return (
    <>
      {unsent && (
        <p class="notice" data-testid="no-mail-server">
          This server sends no mail (it was started without an SMTP server), so these messages stay pending and nobody receives them. Hand out the links yourself: copy them here,
          or take them all from the <Link href={`/e/${encodeURIComponent(slug)}/admin/links`}>Invitation links</Link> page as a CSV or printed QR codes.
        </p>
      )}
      <Notice>{copied}</Notice>
      <ol class="org-outbox">
        {list.items.map((msg) => {
          const link = linkIn(msg.body);
          return (
            <li key={msg.id} class="card" data-message={msg.id}>
              <h3 class="org-wrap">
                {msg.subject} <span class="muted">to {msg.to}</span>
              </h3>
              <dl class="org-facts">
                <div>
                  <dt>Status</dt>
                  <dd>
                    <Badge tone={statusTone(msg.status)}>{msg.status}</Badge>
                  </dd>
                </div>
                <div>
                  <dt>Written</dt>
                  <dd>
                    <When at={msg.createdAt} />
                  </dd>
                </div>
                {msg.sentAt && (
                  <div>
                    <dt>Sent</dt>
                    <dd>
                      <When at={msg.sentAt} />
                    </dd>
                  </div>
                )}
                <div>
                  <dt>Attempts</dt>
                  <dd>{msg.attempts}</dd>
                </div>
                <div>
                  <dt>Last error</dt>
                  <dd>{msg.lastError ?? <span class="muted">none</span>}</dd>
                </div>
              </dl>
              {link ? (
                <div class="org-link">
                  <code class="org-wrap">{link}</code>
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Copy link for ${msg.to}`}
                    onClick={async () => setCopied((await copy(link)) ? `Link for ${msg.to} copied.` : 'Could not reach the clipboard: select the link and copy it.')}
                  >
                    Copy link
                  </button>
                </div>
              ) : (
                <p class="muted">No link found in this message.</p>
              )}
              <pre class="org-body">{msg.body}</pre>
            </li>
          );
        })}
      </ol>
      <LoadMore list={list} what="messages" />
    </>
  );
}
