// The tabs under an event: what everyone sees, plus each of the caller's roles' pages.
import { Link, useLocation } from '../router';
import { useSession } from '../session';

export function EventTabs({ slug }: { slug: string }) {
  const { rolesIn } = useSession();
  const { path } = useLocation();
  const roles = rolesIn(slug);
  const base = `/e/${encodeURIComponent(slug)}`;
  const tabs: [string, string][] = [
    [base, 'Event'],
    [`${base}/projects`, 'Projects'],
    [`${base}/results`, 'Results'],
  ];
  if (roles.includes('PARTICIPANT')) tabs.push([`${base}/team`, 'My team'], [`${base}/my-project`, 'My project']);
  if (roles.includes('JUDGE')) tabs.push([`${base}/judge`, 'Judging']);
  if (roles.includes('ORGANIZER')) tabs.push([`${base}/admin`, 'Organize']);
  return (
    <nav class="tabs" aria-label="Event">
      {tabs.map(([href, label]) => (
        <Link href={href} class={path === href || (href !== base && path.startsWith(href + '/')) ? 'active' : ''}>
          {label}
        </Link>
      ))}
    </nav>
  );
}
