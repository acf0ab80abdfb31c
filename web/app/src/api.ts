// Talking to Verdict's public GraphQL API, and nothing else: queries and mutations over
// `POST /graphql` with the session cookie (plus the CSRF header the server requires of
// cookie-authenticated mutations), subscriptions over `/graphql/ws` (graphql-transport-ws),
// which the server authenticates from the same cookie because the socket is same-origin.
import { print } from '@0no-co/graphql.web';
import type { TadaDocumentNode } from 'gql.tada';
import { createClient, type Client } from 'graphql-ws';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** A refusal as the server said it: `code` is the contract's `extensions.code`. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

type Doc<R, V> = TadaDocumentNode<R, V>;
type GqlError = { message: string; extensions?: { code?: string; retryAfter?: number } };

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
  return new ApiError(e.message, e.extensions?.code ?? 'INTERNAL', e.extensions?.retryAfter);
}

/** One operation over HTTP; resolves with `data`, rejects with an [`ApiError`]. */
export async function request<R, V>(doc: Doc<R, V>, variables?: V): Promise<R> {
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
      if (n === latest.current) setError(e instanceof ApiError ? e : new ApiError(String(e), 'INTERNAL'));
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
        setError(e instanceof ApiError ? e : new ApiError(String(e), 'INTERNAL'));
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
