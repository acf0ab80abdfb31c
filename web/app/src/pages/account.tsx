// Account pages: sign up, log in, log out, password reset request, the links from mail
// (/invite, /reset, /confirm), team join links, and the account itself (roles, tokens).
import { useState } from 'preact/hooks';
import { useMutation } from '../api';
import { graphql } from '../graphql';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { ErrorNote, Field, Page } from '../ui';

const LogIn = graphql(`
  mutation LogIn($email: String!, $password: String!) {
    logIn(email: $email, password: $password) { user { id } }
  }
`);

const LogOut = graphql(`
  mutation LogOut { logOut }
`);

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
            navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/account');
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
          <Link href="/forgot">Forgot your password?</Link> · <Link href="/signup">Create an account</Link>
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
  return <Page title="Sign up" />;
}
export function ForgotPage() {
  return <Page title="Forgot your password" />;
}
export function AccountPage() {
  return <Page title="Your account" />;
}
export function LinkPage({ kind }: { kind: 'invite' | 'reset' | 'confirm'; token: string }) {
  return <Page title={kind} />;
}
export function JoinPage(_: { code: string }) {
  return <Page title="Join a team" />;
}
