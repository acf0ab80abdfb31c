// Signing in and out: sign up, log in, log out, the password reset request, the links from
// mail (/invite, /reset, /confirm) and team join links. The account itself is my-account.tsx.
import { useEffect, useRef, useState } from 'preact/hooks';
import { request, useMutation } from '../api';
import { graphql } from '../graphql';
import { Link, navigate } from '../router';
import { useSession, ViewerQuery, type Viewer } from '../session';
import { LinkGate } from './links';
import { ErrorNote, Field, FormErrors, Loading, Notice, Page } from '../ui';

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

// ---- links from mail ----------------------------------------------------------------

/** Where each role works in an event. */
export function roleLinks(slug: string, role: string): [string, string][] {
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
