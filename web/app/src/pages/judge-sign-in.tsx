// A judge's standing sign-in (issue 28): /judge-sign-in/:token is the link organizers hand
// each judge (by mail, a CSV or a printed QR code). It says what it is, or at once that it
// no longer works, and one tap signs the judge in and opens their judging queue.
// /judge-sign-in takes the event and the short code instead, for a judge who was told it.
// The session it starts only scores: the account's password, email and tokens need a
// log-in with the password.
import { useState } from 'preact/hooks';
import { useMutation } from '../api';
import { graphql } from '../graphql';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { ErrorNote, Field, Page } from '../ui';
import { LinkGate } from './links';

const SignInAsJudge = graphql(`
  mutation SignInAsJudge($token: String!) {
    signInAsJudge(token: $token) { user { id displayName } }
  }
`);

const SignInAsJudgeByCode = graphql(`
  mutation SignInAsJudgeByCode($event: String!, $code: String!) {
    signInAsJudgeByCode(event: $event, code: $code) { user { id displayName } }
  }
`);

export function JudgeSignInLinkPage({ token }: { token: string }) {
  const { refresh } = useSession();
  const m = useMutation(SignInAsJudge);
  return (
    <Page title="Judge sign-in">
      <LinkGate kind="JUDGE_SIGN_IN" token={token}>
        {(link) => (
          <div class="narrow">
            <button
              type="button"
              disabled={m.loading}
              onClick={async () => {
                if (await m.run({ token })) {
                  await refresh();
                  navigate(`/e/${encodeURIComponent(link.eventSlug ?? '')}/judge`, { replace: true });
                }
              }}
            >
              Start judging
            </button>
            <ErrorNote error={m.error} />
            <p class="muted">
              This link signs you in to score your projects only. To change your password or email, <Link href="/login">log in with your password</Link>.
            </p>
          </div>
        )}
      </LinkGate>
    </Page>
  );
}

export function JudgeSignInCodePage() {
  const { refresh } = useSession();
  const [event, setEvent] = useState(new URLSearchParams(location.search).get('event') ?? '');
  const [code, setCode] = useState('');
  const m = useMutation(SignInAsJudgeByCode);
  return (
    <Page title="Judge sign-in">
      <form
        class="narrow"
        onSubmit={async (e) => {
          e.preventDefault();
          const slug = event.trim().toLowerCase();
          if (await m.run({ event: slug, code })) {
            await refresh();
            navigate(`/e/${encodeURIComponent(slug)}/judge`, { replace: true });
          }
        }}
      >
        <p>Type the event and the code the organizers gave you (like K7QM-P2XD) to start judging.</p>
        <Field label="Event" hint="The event's short name, as in its address after /e/." required value={event} onValue={setEvent} />
        <Field label="Code" autoComplete="one-time-code" required value={code} onValue={setCode} />
        <ErrorNote error={m.error} />
        <button type="submit" disabled={m.loading}>
          Start judging
        </button>
        <p class="muted">
          Have a password? <Link href="/login">Log in</Link> instead.
        </p>
      </form>
    </Page>
  );
}
