// /setup/:token: the one-time link `verdict serve` prints on a deployment with no account.
// It says what it is (or at once that it no longer works), then asks for the first
// account, which becomes the site admin and is signed in.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '../api';
import { graphql } from '../graphql';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { ErrorNote, Field, Loading, Page, When } from '../ui';

const SetupLinkQuery = graphql(`
  query SetupLink($token: String!) { setupLink(token: $token) { state expiresAt } }
`);

const SetUpSite = graphql(`
  mutation SetUpSite($token: String!, $email: String!, $password: String!, $displayName: String!) {
    setUpSite(token: $token, email: $email, password: $password, displayName: $displayName) { user { id displayName } }
  }
`);

/** Why a setup link no longer works, as a sentence. */
const GONE: Record<string, string> = {
  USED: 'This setup link was used already: the site has its administrator.',
  EXPIRED: 'This setup link has expired. Restart the server to print a new one.',
  REVOKED: 'This site is set up already: an account exists.',
};

export function SetupPage({ token }: { token: string }) {
  const q = useQuery(SetupLinkQuery, { token });
  return (
    <Page title="Set up Verdict">
      <div class="narrow">
        {q.loading && !q.data && <Loading what="Reading the setup link" />}
        {q.error &&
          (q.error.code === 'NOT_FOUND' ? (
            <p role="alert">
              This setup link is not valid. Use the link the server printed most recently, or <Link href="/login">log in</Link>.
            </p>
          ) : (
            <ErrorNote error={q.error} />
          ))}
        {q.data && q.data.setupLink.state !== 'VALID' && (
          <>
            <p role="alert">{GONE[q.data.setupLink.state]}</p>
            <p>
              <Link href="/login">Log in</Link> instead.
            </p>
          </>
        )}
        {q.data && q.data.setupLink.state === 'VALID' && <SetupForm token={token} expiresAt={q.data.setupLink.expiresAt} />}
      </div>
    </Page>
  );
}

function SetupForm({ token, expiresAt }: { token: string; expiresAt: string }) {
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const m = useMutation(SetUpSite);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const d = await m.run({ token, email, password, displayName: name });
        if (d) {
          await refresh();
          navigate('/new-event', { replace: true });
        }
      }}
    >
      <p>
        This is the one-time setup link of this Verdict server. The account you create here is its <strong>site administrator</strong>: the
        one who creates events and makes their organizers. The link works once, until <When at={expiresAt} />.
      </p>
      <Field label="Your name" hint="The name other people see." autoComplete="name" required value={name} onValue={setName} />
      <Field label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
      <Field label="Password" hint="10 to 256 characters." type="password" autoComplete="new-password" required value={password} onValue={setPassword} />
      <ErrorNote error={m.error} />
      <button type="submit" disabled={m.loading}>
        Create the site administrator
      </button>
    </form>
  );
}
