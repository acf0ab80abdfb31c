// Talking to Verdict's public GraphQL API, and nothing else: queries and mutations over
// `POST /graphql` with the session cookie (plus the CSRF header the server requires of
// cookie-authenticated mutations), subscriptions over `/graphql/ws` (graphql-transport-ws),
// which the server authenticates from the same cookie because the socket is same-origin.
import { print } from '@0no-co/graphql.web';
import type { TadaDocumentNode } from 'gql.tada';
import { createClient, type Client } from 'graphql-ws';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** A refusal as the server said it: `code` is the contract's `extensions.code`, `field`
 *  the input a BAD_USER_INPUT names (`extensions.field`). Show it with [`humanError`]. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly retryAfter?: number,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Whatever a request threw, as an [`ApiError`] (a thrown non-refusal is INTERNAL). */
export function asApiError(e: unknown): ApiError {
  return e instanceof ApiError ? e : new ApiError(String((e as Error)?.message ?? e), 'INTERNAL');
}

/** `maxTeamSize` as a person would say it: "Max team size". */
export function fieldName(field: string): string {
  const words = field.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[-_]/g, ' ').toLowerCase();
  return upper(words);
}

function upper(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function sentence(s: string): string {
  const t = upper(s.trim());
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/**
 * The one place a refusal becomes a sentence a person understands: never a raw code.
 * `label` is what the form calls the field a BAD_USER_INPUT names ("Title"), so
 * "title: must be at most 200 characters" reads "Title must be at most 200 characters."
 */
export function humanError(e: ApiError, label?: string): string {
  const retry = e.retryAfter ? ` Try again in ${e.retryAfter} second${e.retryAfter === 1 ? '' : 's'}.` : ' Try again in a moment.';
  const requestId = e.message.match(/request id ([^)\s]+)/)?.[1];
  switch (e.code) {
    case 'BAD_USER_INPUT': {
      let rest = e.message;
      if (e.field && rest.startsWith(`${e.field}: `)) rest = rest.slice(e.field.length + 2);
      // "must be at most 200 characters" needs its subject; a whole clause does not.
      const needsSubject = /^(must|is|are|has|have|should|cannot|can't|may|does|do)\b/.test(rest);
      return sentence(needsSubject && e.field ? `${label ?? fieldName(e.field)} ${rest}` : rest);
    }
    case 'UNAUTHENTICATED':
      if (/wrong email or password/i.test(e.message)) return 'That email and password do not match an account. Check both and try again.';
      if (/sign in first/i.test(e.message)) return 'Please log in first: your session may have ended.';
      return sentence(e.message);
    case 'NOT_FOUND': {
      const thing = e.message.match(/^(.+) not found$/)?.[1];
      return thing ? `There is no such ${thing}: it may have been removed, or the link is wrong.` : sentence(e.message);
    }
    case 'FORBIDDEN':
    case 'WINDOW_CLOSED':
    case 'CONFLICT':
      return sentence(e.message);
    case 'RATE_LIMITED':
      return `Too many attempts.${retry}`;
    case 'UNAVAILABLE':
      return `Verdict's database is not answering right now; nothing was saved.${retry}`;
    case 'QUERY_TOO_COMPLEX':
      return 'That page asked the server for too much at once. Reload it, or ask the organizers.';
    case 'INTERNAL':
      return requestId
        ? `Something went wrong on Verdict's side. If it happens again, tell the organizers request id ${requestId}.`
        : 'Something went wrong on Verdict\'s side. Try again; if it happens again, tell the organizers.';
    default:
      // NETWORK and the client's own refusals are written as sentences already.
      return sentence(e.message);
  }
}

type Doc<R, V> = TadaDocumentNode<R, V>;
type GqlError = { message: string; extensions?: { code?: string; retryAfter?: number; field?: string } };

const texts = new WeakMap<object, string>();
function text(doc: object): string {
  let t = texts.get(doc);
  if (t === undefined) {
    t = print(doc as Parameters<typeof print>[0]);
    texts.set(doc, t);
  }
  return t;
}

function firstError(errors: GqlError[]): ApiError {
  const e = errors[0];
  return new ApiError(e.message, e.extensions?.code ?? 'INTERNAL', e.extensions?.retryAfter, e.extensions?.field);
}

/** One operation over HTTP; resolves with `data`, rejects with an [`ApiError`]. A session
 *  ended elsewhere (logged out on another device, a judge's link reissued) is refused once:
 *  that answer drops its cookie, and the operation is asked again without it. */
export async function request<R, V>(doc: Doc<R, V>, variables?: V): Promise<R> {
  try {
    return await requestOnce(doc, variables);
  } catch (e) {
    if (e instanceof ApiError && e.code === 'UNAUTHENTICATED' && /token is invalid, expired or revoked/.test(e.message)) {
      return requestOnce(doc, variables);
    }
    throw e;
  }
}

async function requestOnce<R, V>(doc: Doc<R, V>, variables?: V): Promise<R> {
  let resp: Response;
  try {
    resp = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Verdict-Csrf': '1' },
      body: JSON.stringify({ query: text(doc), variables: variables ?? {} }),
    });
  } catch {
    throw new ApiError('Could not reach Verdict. Check your connection and try again.', 'NETWORK');
  }
  let body: { data?: R | null; errors?: GqlError[] };
  try {
    body = await resp.json();
  } catch {
    throw new ApiError(`Verdict answered with HTTP ${resp.status}.`, 'NETWORK');
  }
  if (body.errors?.length) throw firstError(body.errors);
  if (body.data == null) throw new ApiError('The answer carried no data.', 'INTERNAL');
  return body.data;
}

export type QueryState<R> = {
  data: R | undefined;
  error: ApiError | undefined;
  loading: boolean;
  refetch: () => Promise<void>;
};

/** Runs a query when mounted and whenever its variables change; keeps the last data while
 *  refetching so a live page does not flicker. */
export function useQuery<R, V>(doc: Doc<R, V>, variables: V, opts: { skip?: boolean } = {}): QueryState<R> {
  const [data, setData] = useState<R>();
  const [error, setError] = useState<ApiError>();
  const [loading, setLoading] = useState(!opts.skip);
  const key = JSON.stringify(variables);
  const latest = useRef(0);
  const refetch = useCallback(async () => {
    const n = ++latest.current;
    setLoading(true);
    try {
      const d = await request(doc, JSON.parse(key) as V);
      if (n === latest.current) {
        setData(d);
        setError(undefined);
      }
    } catch (e) {
      if (n === latest.current) setError(asApiError(e));
    } finally {
      if (n === latest.current) setLoading(false);
    }
  }, [doc, key]);
  useEffect(() => {
    if (!opts.skip) void refetch();
  }, [refetch, opts.skip]);
  return { data, error, loading, refetch };
}

export type MutationState<R, V> = {
  run: (variables: V) => Promise<R | undefined>;
  loading: boolean;
  error: ApiError | undefined;
  reset: () => void;
};

/** A mutation to run on demand: `run` resolves with the data, or with `undefined` after
 *  setting `error` to the server's refusal. */
export function useMutation<R, V>(doc: Doc<R, V>): MutationState<R, V> {
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ApiError>();
  const run = useCallback(
    async (variables: V) => {
      setLoading(true);
      setError(undefined);
      try {
        return await request(doc, variables);
      } catch (e) {
        setError(asApiError(e));
        return undefined;
      } finally {
        setLoading(false);
      }
    },
    [doc],
  );
  return { run, loading, error, reset: () => setError(undefined) };
}

// ---- subscriptions -------------------------------------------------------------------

export type SocketStatus = 'connecting' | 'live' | 'reconnecting';
let socket: Client | null = null;
let status: SocketStatus = 'connecting';
const statusListeners = new Set<(s: SocketStatus) => void>();
const reconnectListeners = new Set<() => void>();

function setStatus(s: SocketStatus) {
  status = s;
  statusListeners.forEach((l) => l(s));
}

function client(): Client {
  if (socket) return socket;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql/ws`;
  socket = createClient({
    url,
    lazy: true,
    keepAlive: 20_000,
    retryAttempts: Infinity,
    shouldRetry: () => true,
    // 1 s, 2 s, 4 s ... up to 30 s, with jitter so a restarted server is not hit at once.
    retryWait: (retries) =>
      new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 1000 * 2 ** retries) * (0.5 + Math.random() / 2))),
    on: {
      connected: (_socket, _payload, wasRetry) => {
        setStatus('live');
        // Whatever changed while the socket was down was not delivered: refetch it.
        if (wasRetry) reconnectListeners.forEach((l) => l());
      },
      closed: () => setStatus(status === 'live' ? 'reconnecting' : status),
      connecting: () => setStatus(status === 'live' ? 'reconnecting' : 'connecting'),
    },
  });
  return socket;
}

/** Drops the socket so the next subscription authenticates afresh (after log-in or out). */
export function resetSocket() {
  socket?.dispose();
  socket = null;
  setStatus('connecting');
}

export function useSocketStatus(): SocketStatus {
  const [s, set] = useState(status);
  useEffect(() => {
    statusListeners.add(set);
    return () => void statusListeners.delete(set);
  }, []);
  return s;
}

/** Subscribes while mounted; `onData` gets each event, `onReconnect` runs after a dropped
 *  socket came back (refetch what was missed there). */
export function useSubscription<R, V>(
  doc: Doc<R, V>,
  variables: V,
  onData: (data: R) => void,
  opts: { skip?: boolean; onReconnect?: () => void; onError?: (e: ApiError) => void } = {},
) {
  const handlers = useRef({ onData, ...opts });
  handlers.current = { onData, ...opts };
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (opts.skip) return;
    const reconnect = () => handlers.current.onReconnect?.();
    reconnectListeners.add(reconnect);
    const stop = client().subscribe<R>(
      { query: text(doc), variables: JSON.parse(key) },
      {
        next: (r) => {
          if (r.errors?.length) handlers.current.onError?.(firstError(r.errors as GqlError[]));
          else if (r.data) handlers.current.onData(r.data);
        },
        error: (e) => handlers.current.onError?.(new ApiError(String((e as Error)?.message ?? e), 'NETWORK')),
        complete: () => {},
      },
    );
    return () => {
      reconnectListeners.delete(reconnect);
      stop();
    };
  }, [doc, key, opts.skip]);
}
