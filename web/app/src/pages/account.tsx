// Account pages: sign up, log in, log out, password reset request, the links from mail
// (/invite, /reset, /confirm), team join links, and the account itself (roles, tokens).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { request, useMutation, useQuery } from '../api';
import { graphql, type ResultOf } from '../graphql';
import { Link, navigate } from '../router';
import { useSession, ViewerQuery, type Viewer } from '../session';
import { LinkGate } from './links';
import { Badge, Confirm, CopyButton, download, ErrorNote, Field, FormErrors, Loading, Notice, Page, Select, Table, When } from '../ui';
import './account.css';

const LogIn = graphql(`
  mutation LogIn($email: String!, $password: String!) {
    logIn(email: $email, password: $password) { user { id } }
  }
`);

const LogOut = graphql(`
  mutation LogOut { logOut }
`);

const SignUp = graphql(`
  mutation SignUp($email: String!, $password: String!, $displayName: String!) {
    signUp(email: $email, password: $password, displayName: $displayName) { user { id email } }
  }
`);

const RequestReset = graphql(`
  mutation RequestPasswordReset($email: String!) { requestPasswordReset(email: $email) }
`);

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

const RedeemInvitation = graphql(`
  mutation RedeemInvitation($token: String!, $password: String, $displayName: String) {
    redeemInvitation(token: $token, password: $password, displayName: $displayName) { user { id displayName } }
  }
`);
const ResetPassword = graphql(`
  mutation ResetPassword($token: String!, $password: String!) {
    resetPassword(token: $token, password: $password) { user { id displayName } }
  }
`);
const ConfirmEmail = graphql(`
  mutation ConfirmEmail($token: String!) { confirmEmail(token: $token) }
`);

const JoinTeam = graphql(`
  mutation JoinTeamByLink($inviteCode: String!) { joinTeam(inviteCode: $inviteCode) { id name event { id slug } } }
`);

// A message for the next page (after sign-up, a reset, an accepted invitation): kept in
// memory only, read once by the page it was meant for.
let flash: string | null = null;
function takeFlash(): string | null {
  const f = flash;
  flash = null;
  return f;
}

/** `next` from the query string when it is a path of this site, else `fallback`. */
function nextPath(fallback: string): string {
  const next = new URLSearchParams(location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') ? next : fallback;
}

export function LoginPage() {
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const m = useMutation(LogIn);
  const next = new URLSearchParams(location.search).get('next');
  return (
    <Page title="Log in">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await m.run({ email, password })) {
            await refresh();
            navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/my-events');
          }
        }}
      >
        <Field label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
        <Field label="Password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
        <ErrorNote error={m.error} />
        <button type="submit" disabled={m.loading}>
          Log in
        </button>
        <p>
          <Link href="/forgot">Forgot your password?</Link> ·{' '}
          <Link href={next ? `/signup?next=${encodeURIComponent(next)}` : '/signup'}>Create an account</Link>
        </p>
      </form>
    </Page>
  );
}

export function LogOutButton() {
  const { refresh } = useSession();
  const m = useMutation(LogOut);
  return (
    <button
      type="button"
      class="link"
      onClick={async () => {
        await m.run({});
        await refresh();
        navigate('/');
      }}
    >
      Log out
    </button>
  );
}

export function SignupPage() {
  const { refresh } = useSession();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const m = useMutation(SignUp);
  const next = nextPath('/account');
  return (
    <Page title="Sign up">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          const d = await m.run({ email, password, displayName: name });
          if (d) {
            flash = `Welcome! Your account is ready and you are signed in. We mailed a link to ${d.signUp.user.email ?? email} to confirm the address.`;
            await refresh();
            navigate(next);
          }
        }}
      >
        <FormErrors error={m.error}>
          <Field label="Your name" name="displayName" hint="The name other people see." autoComplete="name" required value={name} onValue={setName} />
          <Field label="Email" name="email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
          <Field label="Password" name="password" hint="10 to 256 characters." type="password" autoComplete="new-password" required value={password} onValue={setPassword} />
          <ErrorNote error={m.error} />
        </FormErrors>
        <button type="submit" disabled={m.loading}>
          Create account
        </button>
        <p>
          Already have an account? <Link href={next !== '/account' ? `/login?next=${encodeURIComponent(next)}` : '/login'}>Log in</Link>
        </p>
      </form>
    </Page>
  );
}

export function ForgotPage() {
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const m = useMutation(RequestReset);
  return (
    <Page title="Forgot your password">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          setSentTo(null);
          if (await m.run({ email })) setSentTo(email.trim());
        }}
      >
        <p>Give the email you log in with and we will mail you a link to choose a new password.</p>
        <Field label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
        <ErrorNote error={m.error} />
        <Notice>
          {sentTo && `If an account exists for ${sentTo}, a link to reset its password is on its way. It works once, for 30 minutes.`}
        </Notice>
        <button type="submit" disabled={m.loading}>
          Send reset link
        </button>
        <p>
          <Link href="/login">Back to log in</Link>
        </p>
      </form>
    </Page>
  );
}

// ---- the account page ------------------------------------------------------------

type AccountData = NonNullable<ResultOf<typeof AccountQuery>['viewer']>;
type ApiTokenRow = AccountData['apiTokens'][number];

/** Where each role works in an event. */
function roleLinks(slug: string, role: string): [string, string][] {
  const base = `/e/${encodeURIComponent(slug)}`;
  switch (role) {
    case 'PARTICIPANT':
      return [
        [`${base}/team`, 'My team'],
        [`${base}/my-project`, 'My project'],
      ];
    case 'JUDGE':
      return [[`${base}/judge`, 'Judging']];
    case 'ORGANIZER':
      return [[`${base}/admin`, 'Organize']];
    default:
      return [];
  }
}

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
  const [welcome] = useState(takeFlash);
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

// ---- links from mail ----------------------------------------------------------------

/** After a link signed someone in: where their new role works (the event the link was
 *  for), else the account page. */
async function whereNext(before: Viewer['memberships']): Promise<string> {
  try {
    const d = await request(ViewerQuery, {});
    const had = new Set(before.map((m) => m.id));
    const fresh = d.viewer?.memberships.filter((m) => !had.has(m.id)) ?? [];
    const slugs = [...new Set(fresh.map((m) => m.event.slug))];
    if (slugs.length === 1) {
      const role = fresh.find((m) => m.role === 'ORGANIZER') ?? fresh.find((m) => m.role === 'JUDGE') ?? fresh[0];
      return roleLinks(slugs[0], role.role)[0]?.[0] ?? `/e/${encodeURIComponent(slugs[0])}`;
    }
  } catch {
    // The account page shows whatever the viewer has.
  }
  return '/account';
}

const LINK_TITLES = {
  invite: 'Accept your invitation',
  reset: 'Choose a new password',
  confirm: 'Confirm your email address',
} as const;

const LINK_KINDS = { invite: 'INVITATION', reset: 'PASSWORD_RESET', confirm: 'EMAIL_CONFIRMATION' } as const;

export function LinkPage({ kind, token }: { kind: 'invite' | 'reset' | 'confirm'; token: string }) {
  return (
    <Page title={LINK_TITLES[kind]}>
      <LinkGate kind={LINK_KINDS[kind]} token={token}>
        {() => (kind === 'confirm' ? <ConfirmLink token={token} /> : kind === 'reset' ? <ResetLink token={token} /> : <InviteLink token={token} />)}
      </LinkGate>
    </Page>
  );
}

function ConfirmLink({ token }: { token: string }) {
  const session = useSession();
  const m = useMutation(ConfirmEmail);
  const [done, setDone] = useState(false);
  const started = useRef(false);
  useEffect(() => {
    // The page's purpose: opening the link confirms the address, once.
    if (started.current) return;
    started.current = true;
    void m.run({ token }).then(async (d) => {
      if (d) {
        setDone(true);
        await session.refresh();
      }
    });
  }, [token]);
  if (m.error)
    return (
      <div class="narrow">
        <ErrorNote error={m.error} />
        <p>
          {session.viewer ? (
            <>
              Ask for a new link on <Link href="/account">your account page</Link>.
            </>
          ) : (
            <>
              <Link href="/login?next=/account">Log in</Link> to ask for a new link on your account page.
            </>
          )}
        </p>
      </div>
    );
  if (!done) return <Loading what="Confirming your address" />;
  return (
    <div class="narrow">
      <Notice>Your email address is confirmed.</Notice>
      <p>{session.viewer ? <Link href="/account">Go to your account</Link> : <Link href="/login?next=/account">Log in</Link>}</p>
    </div>
  );
}

function ResetLink({ token }: { token: string }) {
  const { refresh } = useSession();
  const [password, setPassword] = useState('');
  const m = useMutation(ResetPassword);
  return (
    <form
      class="narrow"
      onSubmit={async (e) => {
        e.preventDefault();
        const d = await m.run({ token, password });
        if (d) {
          flash = `Your new password is set, ${d.resetPassword.user.displayName}. Every other session and every API token of your account was revoked.`;
          await refresh();
          navigate('/account', { replace: true });
        }
      }}
    >
      <p>Setting it signs your account out everywhere else and revokes its API tokens.</p>
      <Field label="New password" hint="10 to 256 characters." type="password" autoComplete="new-password" required value={password} onValue={setPassword} />
      <ErrorNote error={m.error} />
      <button type="submit" disabled={m.loading}>
        Set password
      </button>
      <p>
        Link expired? <Link href="/forgot">Ask for a new one</Link>.
      </p>
    </form>
  );
}

function InviteLink({ token }: { token: string }) {
  const session = useSession();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const m = useMutation(RedeemInvitation);
  const [loggingIn, setLoggingIn] = useState(false);

  const accept = async (vars: { password?: string; displayName?: string }) => {
    const before = session.viewer?.memberships ?? [];
    const d = await m.run({ token, password: vars.password ?? null, displayName: vars.displayName ?? null });
    if (!d) return;
    flash = `Welcome, ${d.redeemInvitation.user.displayName}: your invitation is accepted and you are signed in.`;
    const to = await whereNext(before);
    await session.refresh();
    navigate(to, { replace: true });
  };

  if (session.loading) return <Loading />;
  if (session.viewer) {
    const me = session.viewer.user;
    return (
      <div class="narrow">
        <p>
          You are signed in as <strong>{me.displayName}</strong>
          {me.email && <> ({me.email})</>}. Accept the invitation for this account:
        </p>
        <ErrorNote error={m.error} />
        <div class="actions">
          <button type="button" disabled={m.loading} onClick={() => accept({})}>
            Accept as {me.displayName}
          </button>
        </div>
        <p class="muted">
          Is the invitation for another account? <LogOutButton /> and open this link again.
        </p>
      </div>
    );
  }
  return (
    <div class="narrow">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void accept({ password, displayName: name.trim() || undefined });
        }}
      >
        <p>Choose a password to finish your account.</p>
        <Field label="Your name" hint="The name other people see; the part of your email before the @ when left empty." autoComplete="name" value={name} onValue={setName} />
        <Field label="Password" hint="10 to 256 characters." type="password" autoComplete="new-password" value={password} onValue={setPassword} />
        <ErrorNote error={m.error} />
        <button type="submit" disabled={m.loading}>
          Accept invitation
        </button>
      </form>
      <h2>Already have an account?</h2>
      {loggingIn ? (
        <InlineLogIn />
      ) : (
        <p>
          <button type="button" class="secondary" onClick={() => setLoggingIn(true)}>
            Log in to accept it
          </button>
        </p>
      )}
    </div>
  );
}

/** Logging in without leaving the page (the link's token stays where it is). */
function InlineLogIn() {
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const m = useMutation(LogIn);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (await m.run({ email, password })) await refresh();
      }}
    >
      <Field label="Your account's email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
      <Field label="Your account's password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
      <ErrorNote error={m.error} />
      <button type="submit" disabled={m.loading}>
        Log in here
      </button>
    </form>
  );
}

// ---- team join links -----------------------------------------------------------------

export function JoinPage({ code }: { code: string }) {
  const session = useSession();
  const m = useMutation(JoinTeam);
  const here = `/join/${encodeURIComponent(code)}`;
  if (session.loading)
    return (
      <Page title="Join a team">
        <Loading />
      </Page>
    );
  if (!session.viewer)
    return (
      <Page title="Join a team">
        <LinkGate kind="TEAM_JOIN" token={code}>
          {() => (
            <p class="narrow">
              Someone shared a link to join their team. <Link href={`/login?next=${encodeURIComponent(here)}`}>Log in</Link> first, or{' '}
              <Link href={`/signup?next=${encodeURIComponent(here)}`}>create an account</Link>; you come back here after.
            </p>
          )}
        </LinkGate>
      </Page>
    );
  const me = session.viewer.user;
  return (
    <Page title="Join a team">
      <LinkGate kind="TEAM_JOIN" token={code}>
        {() => (
          <div class="narrow">
            <p>
              Someone shared a link to join their team. You join it as <strong>{me.displayName}</strong>; you can be on one team per event.
            </p>
            <ErrorNote error={m.error} />
            <button
              type="button"
              disabled={m.loading}
              onClick={async () => {
                const d = await m.run({ inviteCode: code });
                if (!d) return;
                flash = `You joined ${d.joinTeam.name}.`;
                await session.refresh();
                navigate(`/e/${encodeURIComponent(d.joinTeam.event.slug)}/team`);
              }}
            >
              Join the team
            </button>
          </div>
        )}
      </LinkGate>
    </Page>
  );
}

/** The message the previous page left for this one (e.g. "You joined …"), once. */
export function useFlash(): string | null {
  const [f] = useState(takeFlash);
  return f;
}
