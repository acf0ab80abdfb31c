// The organizer's sub-navigation, shown at the top of every /e/:slug/admin page.
import { Link } from '../../router';

const AREAS: [string, string][] = [
  ['', 'Overview'],
  ['/settings', 'Settings'],
  ['/people', 'People'],
  ['/tracks', 'Tracks'],
  ['/rubric', 'Rubric'],
  ['/assignments', 'Assignments'],
  ['/recusals', 'Recusals'],
  ['/leaderboard', 'Leaderboard'],
  ['/calibration', 'Calibration & publishing'],
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
