// A judge's standing sign-in, for organizers (issue 28): per judge on the People page, issue
// (or reissue) a link and short code, shown once, or revoke it; and on the Invitation links
// page, every judge's at once as QR codes and a CSV the server writes.
import { useState } from 'preact/hooks';
import { useMutation } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { Confirm, ErrorNote, When } from '../../ui';

const IssueJudgeSignIn = graphql(`
  mutation IssueJudgeSignIn($event: String!, $judge: ID!) {
    issueJudgeSignIn(event: $event, judge: $judge) { link code issuedAt qrSvg }
  }
`);

const RevokeJudgeSignIn = graphql(`
  mutation RevokeJudgeSignIn($event: String!, $judge: ID!) {
    revokeJudgeSignIn(event: $event, judge: $judge) { id }
  }
`);

export const IssueJudgeSignIns = graphql(`
  mutation IssueJudgeSignIns($event: String!) {
    issueJudgeSignIns(event: $event) { csv signIns { name email link code qrSvg } }
  }
`);

export type JudgeSheet = ResultOf<typeof IssueJudgeSignIns>['issueJudgeSignIns'];

type Standing = { issuedAt: string; lastUsedAt: string | null } | null;
type Issued = ResultOf<typeof IssueJudgeSignIn>['issueJudgeSignIn'];

/** What an organizer hands the judge: shown once, as the server keeps only hashes. */
function Handout({ name, issued }: { name: string; issued: Issued }) {
  return (
    <div class="card judge-handout" role="status" aria-label={`Sign-in link for ${name}`}>
      <p>
        <strong>Shown once:</strong> give {name} this link, or the code with the event's short name. Issuing again replaces both.
      </p>
      <p>
        Link: <code class="org-wrap" data-testid="judge-link">{issued.link}</code>
      </p>
      <p>
        Code: <code data-testid="judge-code">{issued.code}</code>
      </p>
      {issued.qrSvg && <div class="qr" role="img" aria-label={`QR code of ${name}'s sign-in link`} dangerouslySetInnerHTML={{ __html: issued.qrSvg }} />}
    </div>
  );
}

/** The standing sign-in of one judge: its state, and issue, reissue or revoke. */
export function StandingSignIn({ slug, judge, name, standing, onChange }: { slug: string; judge: string; name: string; standing: Standing; onChange: () => unknown }) {
  const issue = useMutation(IssueJudgeSignIn);
  const revoke = useMutation(RevokeJudgeSignIn);
  const [issued, setIssued] = useState<Issued | null>(null);
  const run = async () => {
    const d = await issue.run({ event: slug, judge });
    if (d) {
      setIssued(d.issueJudgeSignIn);
      await onChange();
    }
  };
  return (
    <div class="standing-sign-in">
      <p class="muted">
        {standing ? (
          <>
            Sign-in link issued <When at={standing.issuedAt} />
            {standing.lastUsedAt ? (
              <>
                , last used <When at={standing.lastUsedAt} />
              </>
            ) : (
              ', not used yet'
            )}
            .
          </>
        ) : (
          'No sign-in link.'
        )}
      </p>
      <div class="actions">
        {standing ? (
          <Confirm
            action="Reissue sign-in link"
            actionLabel={`Reissue sign-in link for ${name}`}
            question={`${name}'s current link and code stop working.`}
            yes="Yes, reissue"
            busy={issue.loading}
            onYes={run}
          />
        ) : (
          <button type="button" class="secondary" aria-label={`Issue sign-in link for ${name}`} disabled={issue.loading} onClick={() => void run()}>
            Issue sign-in link
          </button>
        )}
        {standing && (
          <Confirm
            action="Revoke"
            actionLabel={`Revoke sign-in link for ${name}`}
            question={`${name}'s link and code stop working and the sessions they started end.`}
            yes="Yes, revoke"
            busy={revoke.loading}
            onYes={async () => {
              if (!(await revoke.run({ event: slug, judge }))) return false;
              setIssued(null);
              await onChange();
            }}
          />
        )}
      </div>
      <ErrorNote error={issue.error ?? revoke.error} />
      {issued && <Handout name={name} issued={issued} />}
    </div>
  );
}
