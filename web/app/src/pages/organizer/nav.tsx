// The frame of every /e/:slug/admin page: its title, the organizer's sub-navigation, and a
// log-in prompt for visitors.
import type { ComponentChildren } from 'preact';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Loading, Page } from '../../ui';

const AREAS: [string, string][] = [
  ['', 'Overview'],
  ['/settings', 'Settings'],
  ['/people', 'People'],
  ['/import', 'Import & tables'],
  ['/links', 'Invitation links'],
  ['/tracks', 'Tracks'],
  ['/rubric', 'Rubric'],
  ['/assignments', 'Assignments'],
  ['/recusals', 'Recusals'],
  ['/leaderboard', 'Leaderboard'],
  ['/calibration', 'Calibration & publishing'],
  ['/prizes', 'Prizes'],
  ['/voting', 'Community vote'],
  ['/webhooks', 'Webhooks'],
  ['/moderation', 'Moderation'],
  ['/exports', 'Exports'],
  ['/audit', 'Audit log'],
];

export function OrganizerNav({ slug }: { slug: string }) {
  const base = `/e/${encodeURIComponent(slug)}/admin`;
  return (
    <nav class="sub" aria-label="Organizer">
      {AREAS.map(([path, label]) => (
        <Link href={base + path}>{label}</Link>
      ))}
    </nav>
  );
}

/** An organizer page: the title, the organizer navigation, and a log-in prompt for visitors
 *  (everyone else sees what the server answers, refusals included). */
export function OrgPage({ slug, title, children, actions }: { slug: string; title: string; children?: ComponentChildren; actions?: ComponentChildren }) {
  const { viewer, loading } = useSession();
  return (
    <Page title={title} actions={actions}>
      <OrganizerNav slug={slug} />
      {loading ? (
        <Loading />
      ) : !viewer ? (
        <p>
          <Link href={`/login?next=${encodeURIComponent(location.pathname)}`}>Log in</Link> as an organizer of this event to see this page.
        </p>
      ) : (
        children
      )}
    </Page>
  );
}
