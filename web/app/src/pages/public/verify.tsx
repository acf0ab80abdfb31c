// /e/:slug/verify : this deployment's signing key, the published results' hashes and
// signatures, and how to check them offline.
import { useEffect, useState } from 'preact/hooks';
import { useQuery } from '../../api';
import { graphql } from '../../graphql';
import { type Check, verifyProof } from '../../proof';
import { useSession } from '../../session';
import { Badge, ErrorNote, Hash, Page } from '../../ui';
import { NoEvent, Pending, Published } from './shared';
import './verify.css';

const VerifyQuery = graphql(`
  query PublicVerify($slug: String!) {
    signingKey { algorithm fingerprint publicKeyPem }
    event(slug: $slug) {
      id slug name timeZone
      results { final version publishedAt publishedAtSigned runId keyFingerprint resultHash inputsHash signature publicationSignature }
    }
  }
`);

const MyProjectsQuery = graphql(`
  query MyProjectsToProve($slug: String!) {
    event(slug: $slug) { id myTeam { id projects { id title } } }
  }
`);

const ProofQuery = graphql(`
  query MyInclusionProof($slug: String!, $project: ID!) {
    event(slug: $slug) { id results { version inclusionProof(project: $project) { projectExternalId leafIndex treeSize root document } } }
  }
`);

/** The signed-in participant's own project, checked in this browser against the signed root. */
function MyProof({ slug, fingerprint }: { slug: string; fingerprint: string }) {
  const { viewer } = useSession();
  const mine = useQuery(MyProjectsQuery, { slug }, { skip: !viewer });
  const project = mine.data?.event?.myTeam?.projects[0];
  const q = useQuery(ProofQuery, { slug, project: project?.id ?? '' }, { skip: !project });
  const proof = q.data?.event?.results?.inclusionProof;
  const [checks, setChecks] = useState<Check[]>();
  useEffect(() => {
    setChecks(undefined);
    if (proof) void verifyProof(proof.document, fingerprint).then(setChecks);
  }, [proof?.document, fingerprint]);
  if (!viewer || !project) return null;
  const passed = checks?.every((c) => c.ok);
  return (
    <section aria-labelledby="my-proof">
      <h2 id="my-proof">Your project, checked in this browser</h2>
      <ErrorNote error={q.error} />
      {q.data && !proof ? (
        <p>“{project.title}” has no inclusion proof in these results (it was not submitted when they were computed, or they were published before results carried one).</p>
      ) : !proof || !checks ? (
        <p>Checking “{project.title}”…</p>
      ) : (
        <>
          <p>
            “{project.title}” is entry {proof.leafIndex + 1} of {proof.treeSize} in the Merkle tree whose root <Hash value={proof.root} length={16} /> the publication
            signs. Your browser checked it with WebCrypto, with nothing but the proof and this deployment’s key fingerprint:{' '}
            {passed ? <Badge tone="good">PASS</Badge> : <Badge tone="bad">FAIL</Badge>}
          </p>
          <ul data-testid="proof-checks">
            {checks.map((c) => (
              <li key={c.what}>
                {c.ok ? 'ok' : 'FAIL'}: {c.what}
              </li>
            ))}
          </ul>
          <p class="muted">
            The same check offline: <code>verdict results prove --event {slug} --project {proof.projectExternalId} --out proof.json</code>, then{' '}
            <code>verdict results verify-proof proof.json --key {fingerprint}</code>.
          </p>
        </>
      )}
    </section>
  );
}

export function VerifyPage({ slug }: { slug: string }) {
  const q = useQuery(VerifyQuery, { slug });
  const e = q.data?.event;
  if (!q.data || !e) return <Pending title="Verify the results" q={q} missing={<NoEvent slug={slug} />} />;
  const key = q.data.signingKey;
  const r = e.results;
  const same = r && r.keyFingerprint.toLowerCase() === key.fingerprint.toLowerCase();
  const origin = location.origin;
  const commands = [
    `# on the server (or with a copy of its database): write the signed bundle`,
    `verdict results export --event ${e.slug} bundle/`,
    ``,
    `# anywhere, offline: re-run the calibration and check every hash and signature,`,
    `# trusting only the key this deployment publishes`,
    `FP=$(curl -sI ${origin}/.well-known/verdict-signing-key | awk -F': ' 'tolower($1)=="x-signing-key-fingerprint"{print $2}' | tr -d '\\r')`,
    `verdict results verify bundle/ --key "$FP"`,
  ].join('\n');
  return (
    <Page title={`Verify the results · ${e.name}`}>
      <ErrorNote error={q.error} />
      <p>
        Every calibration run pins its inputs, hashes inputs and result, and is signed with this deployment’s Ed25519 key. Anyone holding the exported bundle can re-run
        the calibration and check it without the server: a single changed byte fails.
      </p>
      <h2>This deployment’s signing key</h2>
      <dl class="verify-list">
        <dt>Algorithm</dt>
        <dd>{key.algorithm}</dd>
        <dt>Fingerprint</dt>
        <dd>
          <Hash value={key.fingerprint} />
          <span class="visually-hidden"> (SHA-256 of the public key)</span>
        </dd>
        <dt>Public key</dt>
        <dd>
          <pre class="hash" data-testid="public-key">
            {key.publicKeyPem}
          </pre>
          <a href="/.well-known/verdict-signing-key">/.well-known/verdict-signing-key</a> serves the same key, with its fingerprint in the{' '}
          <code>x-signing-key-fingerprint</code> header.
        </dd>
      </dl>
      <h2>The published results</h2>
      {!r ? (
        <p>The results are not published yet: there is nothing to verify.</p>
      ) : (
        <>
          <Published r={r} zone={e.timeZone} />
          <dl class="verify-list">
            <dt>Signed by key</dt>
            <dd>
              <Hash value={r.keyFingerprint} />{' '}
              {same ? <Badge tone="good">matches this deployment’s key</Badge> : <Badge tone="bad">does NOT match this deployment’s key</Badge>}
            </dd>
            <dt>Result hash</dt>
            <dd>
              <Hash value={r.resultHash} />
            </dd>
            <dt>Inputs hash</dt>
            <dd>
              <Hash value={r.inputsHash} />
            </dd>
            <dt>Run signature</dt>
            <dd>
              <Hash value={r.signature} />
            </dd>
            <dt>Publication signature</dt>
            <dd>
              <Hash value={r.publicationSignature} />
            </dd>
            <dt>Signed publication time</dt>
            <dd>
              <Hash value={r.publishedAtSigned} />
            </dd>
            <dt>Run</dt>
            <dd>
              <Hash value={r.runId} />
            </dd>
          </dl>
          <MyProof slug={slug} fingerprint={key.fingerprint} />
          {!same && (
            <p class="error" role="alert">
              The results were signed with another key than the one this server publishes now (the key may have been replaced). Verify the bundle against the key you
              trust.
            </p>
          )}
        </>
      )}
      <h2>Check it yourself, offline</h2>
      <ol>
        <li>Get the bundle: the organizers (or whoever runs the server) export it and share the folder.</li>
        <li>Pin the key: take the fingerprint above from this page or from the well-known address, not from the bundle.</li>
        <li>
          Run the verifier: it re-runs the estimator from the pinned inputs, compares the result with the signed one (ranks exactly, numbers to a millionth) and checks
          the signatures; it prints PASS, or names what failed.
        </li>
      </ol>
      <pre>
        <code>{commands}</code>
      </pre>
      {r && (
        <p class="muted">
          The bundle’s result hash must be <Hash value={r.resultHash} />.
        </p>
      )}
    </Page>
  );
}
