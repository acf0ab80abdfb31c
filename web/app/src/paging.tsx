// Relay connections (`first`/`after`, `pageInfo`, `totalCount`) read a page at a time: the
// one hook every paged list uses, the one "Load more" line under such a list, and
// `allPages` for what needs a whole list at once (coverage, a form's choices).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, asApiError, request } from './api';
import { ErrorNote } from './ui';
import './paging.css';

export type PageInfo = { hasNextPage: boolean; endCursor: string | null | undefined };
export type Connection<N> = { nodes: N[]; totalCount?: number; pageInfo: PageInfo };

type Read<N> = { nodes: N[]; total: number; after: string | null; hasMore: boolean };

/** Pages from `after` on until `enough(nodes read)` says so or the last page; `page`
 *  answering null (no such event) stops the reading there. At most 1,000 pages. */
async function readPages<N>(page: (after: string | null) => Promise<Connection<N> | null | undefined>, after: string | null, enough: (read: number) => boolean): Promise<Read<N> | null> {
  const nodes: N[] = [];
  let at = after;
  let total = 0;
  for (let i = 0; i < 1000; i++) {
    const c = await page(at);
    if (!c) return i === 0 ? null : { nodes, total, after: at, hasMore: false };
    nodes.push(...c.nodes);
    total = c.totalCount ?? nodes.length;
    if (!c.pageInfo.hasNextPage || !c.pageInfo.endCursor) return { nodes, total, after: c.pageInfo.endCursor ?? null, hasMore: false };
    at = c.pageInfo.endCursor;
    if (enough(nodes.length)) break;
  }
  return { nodes, total, after: at, hasMore: true };
}

/** Every node of a connection, page after page (`after` is the previous page's end). */
export async function allPages<N>(page: (after: string | null) => Promise<Connection<N> | null | undefined>): Promise<N[]> {
  return (await readPages(page, null, () => false))?.nodes ?? [];
}

export type Paged<N, R = unknown> = {
  /** The answer that brought the first page (the query's other fields: an event's name). */
  data: R | undefined;
  items: N[];
  total: number;
  hasMore: boolean;
  /** The first page (or a reload) is being read. */
  loading: boolean;
  /** The first page (or a reload) was refused. */
  error: ApiError | undefined;
  loadingMore: boolean;
  moreError: ApiError | undefined;
  /** Loads the next page. */
  more: () => Promise<void>;
  /** Reads again everything loaded so far (after a change). */
  reload: () => Promise<void>;
};

/**
 * A connection read page by page: the first page on mount and whenever `vars` change, more
 * on demand (or every page at once with `all`), keeping what it shows while it re-reads.
 * `pick` finds the connection in the answer; null there (no such event) is a NOT_FOUND
 * refusal, with `data` kept so the page can say what is missing. `pageSize` keeps a page
 * within the server's complexity budget. `sameList` tells whether a later page still
 * continues the first (the same published version); when it does not, the list starts over.
 */
export function usePaged<R, V, N>(
  doc: Parameters<typeof request<R, V>>[0],
  vars: Omit<V, 'first' | 'after'>,
  pick: (r: R) => Connection<N> | null | undefined,
  opts: { skip?: boolean; pageSize?: number; all?: boolean; sameList?: (first: R, next: R) => boolean } = {},
): Paged<N, R> {
  const size = opts.pageSize ?? 50;
  const all = !!opts.all;
  const [data, setData] = useState<R>();
  const [items, setItems] = useState<N[]>([]);
  const [total, setTotal] = useState(0);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(!opts.skip);
  const [error, setError] = useState<ApiError>();
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<ApiError>();
  const key = JSON.stringify(vars);
  const gen = useRef(0);
  const fns = useRef({ pick, sameList: opts.sameList });
  fns.current = { pick, sameList: opts.sameList };
  const loaded = useRef(0);
  const first = useRef<R>();

  /** From the start, at least `want` items (every page with `all`). */
  const readFirst = useCallback(
    async (want: number) => {
      const n = ++gen.current;
      setLoading(true);
      try {
        let answer: R | undefined;
        const read = await readPages(
          async (after) => {
            const r = await request(doc, { ...(JSON.parse(key) as object), first: size, after } as V);
            answer ??= r;
            return fns.current.pick(r);
          },
          null,
          (got) => !all && got >= want,
        );
        if (n !== gen.current) return;
        first.current = answer;
        setData(answer);
        if (!read) throw new ApiError('There is no such event.', 'NOT_FOUND');
        loaded.current = read.nodes.length;
        setItems(read.nodes);
        setTotal(read.total);
        setCursor(read.after);
        setHasMore(read.hasMore);
        setError(undefined);
        setMoreError(undefined);
      } catch (e) {
        if (n === gen.current) setError(asApiError(e));
      } finally {
        if (n === gen.current) setLoading(false);
      }
    },
    [doc, key, size, all],
  );

  useEffect(() => {
    loaded.current = 0;
    if (!opts.skip) void readFirst(1);
    else gen.current++;
  }, [readFirst, opts.skip]);

  const more = async () => {
    if (!hasMore || !cursor) return;
    const n = gen.current;
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      let stale = false;
      const read = await readPages(
        async (after) => {
          const r = await request(doc, { ...(JSON.parse(key) as object), first: size, after } as V);
          const same = fns.current.sameList;
          if (same && first.current !== undefined && !same(first.current, r)) {
            stale = true;
            return null;
          }
          return fns.current.pick(r);
        },
        cursor,
        () => true,
      );
      if (n !== gen.current) return;
      // Another version was published meanwhile: start again from its first page.
      if (stale) return void readFirst(1);
      if (!read) throw new ApiError('There is no such event.', 'NOT_FOUND');
      setItems((old) => {
        const next = old.concat(read.nodes);
        loaded.current = next.length;
        return next;
      });
      setTotal(read.total);
      setCursor(read.after);
      setHasMore(read.hasMore);
    } catch (e) {
      if (n === gen.current) setMoreError(asApiError(e));
    } finally {
      if (n === gen.current) setLoadingMore(false);
    }
  };

  return { data, items, total, hasMore, loading, error, loadingMore, moreError, more, reload: () => readFirst(Math.max(1, loaded.current)) };
}

/** Under a paged list: how many of how many are shown, "Load more" while there are more,
 *  and a refused page's reason. */
export function LoadMore({ list, what }: { list: Paged<unknown>; what: string }) {
  return (
    <div class="load-more">
      <span class="muted" role="status">
        {list.items.length} of {list.total} {what} shown.
      </span>
      {list.hasMore && (
        <button type="button" class="secondary" disabled={list.loadingMore || list.loading} onClick={() => void list.more()}>
          {list.loadingMore ? 'Loading…' : 'Load more'}
        </button>
      )}
      <ErrorNote error={list.moreError} />
    </div>
  );
}
