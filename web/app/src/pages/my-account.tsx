// /account: the signed-in person's own page: profile, email address, password, their
// events and roles (with each event's signed participation record), and API tokens.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '../api';
import { graphql, type ResultOf } from '../graphql';
import { Link } from '../router';
import { useSession } from '../session';
import { Badge, Confirm, CopyButton, download, ErrorNote, Field, Loading, Notice, Page, Select, Table, When } from '../ui';
import { roleLinks, useFlash } from './account';
import './my-account.css';

const AccountQuery = graphql(`
  query Account {
    viewer {
      user { id displayName email emailConfirmed isSiteAdmin }
      memberships { id role event { id slug name } }
      apiTokens { id label prefix scope createdAt lastUsedAt expiresAt revokedAt }
    }
  }
`);

const UpdateProfile = graphql(`
  mutation UpdateProfile($displayName: String!) { updateProfile(displayName: $displayName) { id displayName } }
`);
const ResendConfirmation = graphql(`
  mutation ResendConfirmation { resendConfirmation }
`);
const ChangePassword = graphql(`
  mutation ChangePassword($currentPassword: String!, $newPassword: String!) {
    changePassword(currentPassword: $currentPassword, newPassword: $newPassword)
  }
`);
const ChangeEmail = graphql(`
  mutation ChangeEmail($newEmail: String!, $currentPassword: String!) {
    changeEmail(newEmail: $newEmail, currentPassword: $currentPassword)
  }
`);
const CreateApiToken = graphql(`
  mutation CreateApiToken($label: String!, $scope: ApiTokenScope, $expiresAt: DateTime) {
    createApiToken(label: $label, scope: $scope, expiresAt: $expiresAt) { token apiToken { id label } }
  }
`);
const ParticipationRecord = graphql(`
  mutation ParticipationRecord($event: String!) { participationRecord(event: $event) }
`);
const RevokeApiToken = graphql(`
  mutation RevokeApiToken($id: ID!) { revokeApiToken(id: $id) { id revokedAt } }
`);

type AccountData = NonNullable<ResultOf<typeof AccountQuery>['viewer']>;
type ApiTokenRow = AccountData['apiTokens'][number];

const ROLE_NAMES: Record<string, string> = { PARTICIPANT: 'Participant', JUDGE: 'Judge', ORGANIZER: 'Organizer' };


function Section({ title, children }: { title: string; children?: ComponentChildren }) {
  const id = `acct-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section class="acct-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export function AccountPage() {
  const session = useSession();
  const signedIn = !!session.viewer;
  const q = useQuery(AccountQuery, {}, { skip: session.loading || !signedIn });
  const welcome = useFlash();
  if (session.loading) return <Page title="Your account"><Loading /></Page>;
  if (!signedIn)
    return (
      <Page title="Your account">
        <p>
          <Link href="/login?next=/account">Log in</Link> to see your account, or <Link href="/signup">create one</Link>.
        </p>
      </Page>
    );
  const v = q.data?.viewer;
  return (
    <Page title="Your account">
      <Notice>{welcome}</Notice>
      <ErrorNote error={q.error} />
      {!v ? (
        q.loading ? <Loading /> : null
      ) : (
        <>
          <ProfileSection user={v.user} />
          <MyEvents memberships={v.memberships} />
          <EmailSection user={v.user} refetch={q.refetch} />
          <PasswordSection />
          <TokensSection tokens={v.apiTokens} refetch={q.refetch} />
        </>
      )}
    </Page>
  );
}

function ProfileSection({ user }: { user: AccountData['user'] }) {
  const { refresh } = useSession();
  const [name, setName] = useState(user.displayName);
  const [saved, setSaved] = useState(false);
  const m = useMutation(UpdateProfile);
  return (
    <Section title="Profile">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          const d = await m.run({ displayName: name });
          if (d) {
            setName(d.updateProfile.displayName);
            setSaved(true);
            await refresh();
          }
        }}
      >
        <Field label="Display name" hint="The name other people see." autoComplete="name" required value={name} onValue={(v) => (setName(v), setSaved(false))} />
        <ErrorNote error={m.error} />
        <Notice>{saved && 'Your name is saved.'}</Notice>
        <button type="submit" disabled={m.loading}>
          Save name
        </button>
      </form>
      {user.isSiteAdmin && (
        <p>
          You are a site administrator: you can <Link href="/new-event">create an event</Link>.
        </p>
      )}
    </Section>
  );
}

function MyEvents({ memberships }: { memberships: AccountData['memberships'] }) {
  const byEvent = new Map<string, { slug: string; name: string; roles: string[] }>();
  for (const m of memberships) {
    const e = byEvent.get(m.event.id) ?? { slug: m.event.slug, name: m.event.name, roles: [] };
    if (!e.roles.includes(m.role)) e.roles.push(m.role);
    byEvent.set(m.event.id, e);
  }
  const events = [...byEvent.values()].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <Section title="My events">
      {events.length === 0 ? (
        <p class="muted">
          You have no role in any event yet. An organizer's invitation gives you one; or <Link href="/">see all events</Link>.
        </p>
      ) : (
        <ul class="acct-events">
          {events.map((e) => (
            <li key={e.slug}>
              <Link href={`/e/${encodeURIComponent(e.slug)}`} class="acct-event-name">
                {e.name}
              </Link>
              <ul class="acct-roles" aria-label={`Your roles in ${e.name}`}>
                {e.roles.map((r) => (
                  <li key={r}>
                    <Badge>{ROLE_NAMES[r] ?? r}</Badge>
                    {roleLinks(e.slug, r).map(([href, label]) => (
                      <Link key={href} href={href}>
                        {label}
                      </Link>
                    ))}
                  </li>
                ))}
              </ul>
              <RecordButton slug={e.slug} />
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

/** Downloads the caller's signed participation record of one event, byte for byte as the
 * server issued it (any change makes it fail verification). */
function RecordButton({ slug }: { slug: string }) {
  const m = useMutation(ParticipationRecord);
  return (
    <div class="acct-record">
      <button
        type="button"
        class="secondary"
        disabled={m.loading}
        onClick={async () => {
          const d = await m.run({ event: slug });
          if (d) download(`${slug}-participation-record.json`, d.participationRecord, 'application/json');
        }}
      >
        Download my participation record
      </button>
      <ErrorNote error={m.error} />
    </div>
  );
}

function EmailSection({ user, refetch }: { user: AccountData['user']; refetch: () => Promise<void> }) {
  const resend = useMutation(ResendConfirmation);
  const [resent, setResent] = useState(false);
  const change = useMutation(ChangeEmail);
  const [newEmail, setNewEmail] = useState('');
  const [password, setPassword] = useState('');
  const [asked, setAsked] = useState<string | null>(null);
  return (
    <Section title="Email">
      <p class="acct-email">
        <span>{user.email}</span>{' '}
        {user.emailConfirmed ? <Badge tone="good">confirmed</Badge> : <Badge tone="warn">not confirmed</Badge>}
      </p>
      {!user.emailConfirmed && (
        <div class="narrow">
          <p class="muted">Open the link we mailed to this address to confirm it. Until then no organizer can give you a role by your email.</p>
          <ErrorNote error={resend.error} />
          <Notice>{resent && `A new confirmation link is on its way to ${user.email}.`}</Notice>
          <button
            type="button"
            class="secondary"
            disabled={resend.loading}
            onClick={async () => {
              setResent(false);
              if (await resend.run({})) setResent(true);
              void refetch();
            }}
          >
            Mail me a new confirmation link
          </button>
        </div>
      )}
      <h3>Change your email address</h3>
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          setAsked(null);
          if (await change.run({ newEmail, currentPassword: password })) {
            setAsked(newEmail.trim());
            setNewEmail('');
            setPassword('');
          }
        }}
      >
        <p class="muted">We mail a link to the new address; it becomes your address when you open that link.</p>
        <Field label="New email" type="email" autoComplete="email" required value={newEmail} onValue={setNewEmail} />
        <Field label="Your password" hint="To check it is you." type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
        <ErrorNote error={change.error} />
        <Notice>{asked && `We mailed a confirmation link to ${asked}. Your address changes when you open it.`}</Notice>
        <button type="submit" disabled={change.loading}>
          Change email
        </button>
      </form>
    </Section>
  );
}

function PasswordSection() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [ended, setEnded] = useState<number | null>(null);
  const m = useMutation(ChangePassword);
  return (
    <Section title="Password">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          setEnded(null);
          const d = await m.run({ currentPassword: current, newPassword: next });
          if (d) {
            setEnded(d.changePassword);
            setCurrent('');
            setNext('');
          }
        }}
      >
        <Field label="Current password" type="password" autoComplete="current-password" required value={current} onValue={setCurrent} />
        <Field label="New password" hint="10 to 256 characters." type="password" autoComplete="new-password" required value={next} onValue={setNext} />
        <ErrorNote error={m.error} />
        <Notice>
          {ended !== null &&
            `Your password is changed. ${ended === 0 ? 'No other session was signed in.' : ended === 1 ? '1 other session was signed out.' : `${ended} other sessions were signed out.`} This one and your API tokens keep working.`}
        </Notice>
        <button type="submit" disabled={m.loading}>
          Change password
        </button>
      </form>
    </Section>
  );
}

function tokenState(t: ApiTokenRow): { label: string; tone: 'good' | 'warn' | 'bad' } {
  if (t.revokedAt) return { label: 'revoked', tone: 'bad' };
  if (t.expiresAt && new Date(t.expiresAt).getTime() <= Date.now()) return { label: 'expired', tone: 'warn' };
  return { label: 'active', tone: 'good' };
}

function TokensSection({ tokens, refetch }: { tokens: ApiTokenRow[]; refetch: () => Promise<void> }) {
  const [label, setLabel] = useState('');
  const [scope, setScope] = useState<'READ' | 'WRITE'>('READ');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<{ label: string; token: string } | null>(null);
  const create = useMutation(CreateApiToken);
  const revoke = useMutation(RevokeApiToken);
  const [revoked, setRevoked] = useState<string | null>(null);
  const sorted = [...tokens].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <Section title="API tokens">
      <p class="muted">
        Personal tokens let scripts use the <a href="/graphql">GraphQL API</a> as you: send one as <code>Authorization: Bearer …</code>. A read
        token answers queries only; a write token may do everything you may.
      </p>
      {created && (
        <div class="acct-new-token" role="region" aria-label="Your new token">
          <p>
            <strong>Copy your new token “{created.label}” now.</strong> It is shown only this once: Verdict keeps no copy it could show you again.
          </p>
          <p class="secret" data-testid="new-token">
            {created.token}
          </p>
          <div class="actions">
            <CopyButton text={created.token} label="Copy token" />
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              Done, hide it
            </button>
          </div>
        </div>
      )}
      <Notice>{revoked && `The token “${revoked}” is revoked: it no longer works.`}</Notice>
      <ErrorNote error={revoke.error} />
      {sorted.length === 0 ? (
        <p class="muted">You have no API tokens.</p>
      ) : (
        <Table caption="Your API tokens">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Starts with</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((t) => {
              const st = tokenState(t);
              return (
                <tr key={t.id}>
                  <td>{t.label}</td>
                  <td>
                    <code>{t.prefix}…</code>
                  </td>
                  <td>{t.scope === 'READ' ? 'read' : 'write'}</td>
                  <td>
                    <When at={t.createdAt} />
                  </td>
                  <td>{t.lastUsedAt ? <When at={t.lastUsedAt} /> : <span class="muted">never</span>}</td>
                  <td>{t.expiresAt ? <When at={t.expiresAt} /> : <span class="muted">never</span>}</td>
                  <td class="acct-token-state">
                    <Badge tone={st.tone}>{st.label}</Badge>
                    {t.revokedAt && (
                      <span class="muted">
                        {' '}
                        <When at={t.revokedAt} />
                      </span>
                    )}
                    {!t.revokedAt && (
                      <Confirm
                        class="acct-confirm"
                        action="Revoke"
                        actionLabel={`Revoke ${t.label}`}
                        yes="Yes, revoke"
                        yesLabel={`Yes, revoke ${t.label}`}
                        busy={revoke.loading}
                        onAsk={revoke.reset}
                        onYes={async () => {
                          setRevoked(null);
                          if (await revoke.run({ id: t.id })) setRevoked(t.label);
                          await refetch();
                        }}
                      />
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </Table>
      )}
      <h3>Create a token</h3>
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          setCreated(null);
          // The chosen day's end in the viewer's zone.
          const expiresAt = expires ? new Date(`${expires}T23:59:59`).toISOString() : null;
          const d = await create.run({ label, scope, expiresAt });
          if (d) {
            setCreated({ label: d.createApiToken.apiToken.label, token: d.createApiToken.token });
            setLabel('');
            setExpires('');
            await refetch();
          }
        }}
      >
        <Field label="Token label" hint="A name to recognise it by, e.g. “results dashboard”." required maxLength={100} value={label} onValue={setLabel} />
        <Select
          label="Scope"
          value={scope}
          onValue={(v) => setScope(v as 'READ' | 'WRITE')}
          options={[
            { value: 'READ', label: 'Read: queries and subscriptions only' },
            { value: 'WRITE', label: 'Write: everything you may do' },
          ]}
        />
        <Field label="Expires on (optional)" hint="It stops working at the end of this day; never when left empty." type="date" value={expires} onValue={setExpires} />
        <ErrorNote error={create.error} />
        <button type="submit" disabled={create.loading}>
          Create token
        </button>
      </form>
    </Section>
  );
}
