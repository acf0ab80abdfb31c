// What the public pages share: their paths, the page for an unknown event, a query's
// loading or refusal as a page, a project's tags, and a publication's line (kind, version, time).
import type { ComponentChildren } from 'preact';
import type { ApiError } from '../../api';
import { Link } from '../../router';
import { Badge, ErrorNote, Loading, Page, When } from '../../ui';
import './shared.css';

export const eventPath = (slug: string) => `/e/${encodeURIComponent(slug)}`;
export const projectPath = (slug: string, id: string) => `${eventPath(slug)}/projects/${encodeURIComponent(id)}`;

export function NoEvent({ slug }: { slug: string }) {
  return (
    <Page title="No such event">
      <p>
        There is no event called “{slug}”. It may have been renamed. <Link href="/">See all events</Link>.
      </p>
    </Page>
  );
}

/** A query's loading, refusal, or unknown event, or null when there is something to show. */
export function Pending({ title, q, missing }: { title: string; q: { loading: boolean; error?: ApiError; data?: unknown }; missing?: ComponentChildren }) {
  if (q.error && !q.data)
    return (
      <Page title={title}>
        <ErrorNote error={q.error} />
      </Page>
    );
  if (!q.data)
    return (
      <Page title={title}>
        <Loading />
      </Page>
    );
  return <>{missing}</>;
}

/** A project's tags, as badges. */
export function Tags({ tags, label }: { tags: string[]; label?: string }) {
  return (
    <ul class="tags" aria-label={label}>
      {tags.map((t) => (
        <li>
          <Badge>{t}</Badge>
        </li>
      ))}
    </ul>
  );
}

/** A publication in one line: final or provisional, its version, when; `children` after. */
export function Published({ r, zone, children }: { r: { final: boolean; version: number; publishedAt: string }; zone: string; children?: ComponentChildren }) {
  return (
    <p class="results-meta">
      <Badge tone={r.final ? 'good' : 'warn'}>{r.final ? 'final' : 'provisional'}</Badge>
      <span>Version {r.version}</span>
      <span>
        published <When at={r.publishedAt} zone={zone} />
      </span>
      {children}
    </p>
  );
}
