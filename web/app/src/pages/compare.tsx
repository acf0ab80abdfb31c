// A judge's pairwise page (issue 26): the project they are at and the one before, and one
// tap for which was better. The server walks the route (`myNextComparison`); a tap is
// queued in localStorage with its own idempotency key and sent at once, and again when the
// network comes back, so a dropped connection loses no tap and a resent one is not counted
// twice. "Skip: not there" needs the network (the next project depends on it).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, asApiError, humanError, request, useQuery } from '../api';
import { graphql } from '../graphql';
import { Link } from '../router';
import { ErrorNote, Loading, Notice, Page } from '../ui';
import './judge.css';

const NextPair = graphql(`
  query NextPair($slug: String!, $seen: ID) {
    event(slug: $slug) {
      id
      slug
      judgingMode
      tracks { judgingMode }
      myNextComparison(seen: $seen) {
        remaining
        previous { id title table }
        current { id title tagline table }
      }
    }
  }
`);

const Compare = graphql(`
  mutation Compare($event: String!, $better: ID!, $worse: ID!, $idempotencyKey: String) {
    compareProjects(event: $event, better: $better, worse: $worse, idempotencyKey: $idempotencyKey) { id version }
  }
`);

const Skip = graphql(`
  mutation SkipProject($event: String!, $project: ID!, $reason: String!) {
    skipComparison(event: $event, project: $project, reason: $reason) { remaining }
  }
`);

/** A tap not yet acknowledged by the server. */
type Tap = { better: string; worse: string; key: string };

const storeKey = (slug: string) => `verdict.compare.${slug}`;

function loadQueue(slug: string): Tap[] {
  try {
    const v = JSON.parse(localStorage.getItem(storeKey(slug)) ?? '[]');
    return Array.isArray(v) ? (v as Tap[]) : [];
  } catch {
    return [];
  }
}

function saveQueue(slug: string, q: Tap[]) {
  localStorage.setItem(storeKey(slug), JSON.stringify(q));
}

/** Sends the queued taps in order; stops at the first network failure (they stay queued).
 *  A refusal (judging closed, say) drops that tap and is returned to be shown. */
async function flush(slug: string): Promise<{ left: number; refused?: ApiError }> {
  let refused: ApiError | undefined;
  for (;;) {
    const q = loadQueue(slug);
    const tap = q[0];
    if (!tap) return { left: 0, refused };
    try {
      await request(Compare, { event: slug, better: tap.better, worse: tap.worse, idempotencyKey: tap.key });
    } catch (e) {
      const err = asApiError(e);
      if (err.code === 'NETWORK' || err.code === 'UNAVAILABLE' || err.code === 'RATE_LIMITED') {
        return { left: q.length, refused };
      }
      refused = err;
    }
    saveQueue(slug, loadQueue(slug).filter((t) => t.key !== tap.key));
  }
}

/** Whether any project of the event is judged by comparisons: the event's mode, or a
 *  track's own (a track without one follows the event). */
export function takesComparisons(ev: { judgingMode: string; tracks: { judgingMode?: string | null }[] }) {
  return ev.judgingMode !== 'SCORES' || ev.tracks.some((t) => t.judgingMode != null && t.judgingMode !== 'SCORES');
}

function label(p: { title: string; table?: string | null }) {
  return p.table ? `Table ${p.table}: ${p.title}` : p.title;
}

export function ComparePage({ slug }: { slug: string }) {
  const [seen, setSeen] = useState<string | null>(null);
  const q = useQuery(NextPair, { slug, seen });
  const [waiting, setWaiting] = useState(() => loadQueue(slug).length);
  const [refused, setRefused] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  const send = async () => {
    const r = await flush(slug);
    setWaiting(r.left);
    if (r.refused) setRefused(r.refused);
    if (r.left === 0) {
      setSeen(null);
      await q.refetch();
    }
  };

  useEffect(() => {
    void send();
    const online = () => void send();
    window.addEventListener('online', online);
    return () => window.removeEventListener('online', online);
  }, [slug]);

  if (q.loading && !q.data) return <Loading />;
  if (q.error) return <ErrorNote error={q.error} />;
  const ev = q.data?.event;
  if (!ev) return <Page title="Compare projects"><p>No such event.</p></Page>;
  if (!takesComparisons(ev)) {
    return (
      <Page title="Compare projects">
        <p>This event is judged by rubric scores. <Link href={`/e/${slug}/judge`}>Go to your queue</Link>.</p>
      </Page>
    );
  }
  const pair = ev.myNextComparison;

  const tap = async (better: string, worse: string) => {
    const key = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    saveQueue(slug, [...loadQueue(slug), { better, worse, key }]);
    setWaiting(loadQueue(slug).length);
    await send();
  };

  const skip = async (project: string) => {
    setBusy(true);
    setRefused(undefined);
    try {
      await request(Skip, { event: slug, project, reason: 'not at the table' });
      setSeen(null);
      await q.refetch();
    } catch (e) {
      setRefused(asApiError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title="Compare projects">
      {waiting > 0 && (
        <Notice>
          {waiting} comparison{waiting === 1 ? '' : 's'} waiting to be sent: they go out when the network is back.
        </Notice>
      )}
      {refused && <p role="alert">{humanError(refused)}</p>}
      {!pair ? (
        <Notice>You have compared every project on your route. Thank you!</Notice>
      ) : !pair.previous ? (
        <section aria-label="Start">
          <p>Start here, then move on to the next table.</p>
          <h2>{label(pair.current)}</h2>
          {pair.current.tagline && <p class="muted">{pair.current.tagline}</p>}
          <p>
            <button type="button" class="button" disabled={busy || waiting > 0} onClick={() => setSeen(pair.current.id)}>
              Seen it: next project
            </button>{' '}
            <button type="button" disabled={busy || waiting > 0} onClick={() => void skip(pair.current.id)}>
              Skip: not there
            </button>
          </p>
        </section>
      ) : (
        <section aria-label="Which was better?">
          <p class="muted">{pair.remaining} left on your route.</p>
          <p>Now at: <strong>{label(pair.current)}</strong></p>
          <p>Before: {label(pair.previous)}</p>
          <h2>Which was better?</h2>
          <p>
            <button type="button" class="button" disabled={busy || waiting > 0} onClick={() => void tap(pair.current.id, pair.previous!.id)}>
              This one ({pair.current.table ?? pair.current.title})
            </button>{' '}
            <button type="button" class="button" disabled={busy || waiting > 0} onClick={() => void tap(pair.previous!.id, pair.current.id)}>
              The one before ({pair.previous.table ?? pair.previous.title})
            </button>
          </p>
          <p>
            <button type="button" disabled={busy || waiting > 0} onClick={() => void skip(pair.current.id)}>
              Skip: not there
            </button>
          </p>
        </section>
      )}
    </Page>
  );
}
