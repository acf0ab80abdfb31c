// / : every event, a page at a time, with its windows and whether results are out.
import { graphql } from '../../graphql';
import { LoadMore, usePaged } from '../../paging';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Badge, Countdown, ErrorNote, isOpen, Loading, Page, When } from '../../ui';
import { eventPath } from './shared';
import './events.css';

const EventsQuery = graphql(`
  query PublicEvents($first: Int, $after: String) {
    events(first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        id slug name timeZone submissionsOpen submissionsClose judgingOpen judgingClose
        projects(first: 1) { totalCount }
        results { final }
      }
    }
  }
`);

export function EventsPage() {
  const { viewer } = useSession();
  const p = usePaged(EventsQuery, {}, (d) => d.events, { pageSize: 20 });
  const admin = viewer?.user.isSiteAdmin;
  return (
    <Page
      title="Events"
      actions={
        admin && (
          <Link href="/new-event" class="button">
            New event
          </Link>
        )
      }
    >
      {p.error && <ErrorNote error={p.error} />}
      {!p.data && !p.error && <Loading what="Loading events" />}
      {p.data && p.items.length === 0 && <p>No event yet.{admin ? ' Create the first one.' : ''}</p>}
      {p.items.length > 0 && (
        <ul class="cards">
          {p.items.map((e) => {
            const open = isOpen(e.submissionsOpen, e.submissionsClose);
            return (
              <li class="card event-card">
                <h2>
                  <Link href={eventPath(e.slug)}>{e.name}</Link>
                </h2>
                <dl>
                  <dt>Submissions</dt>
                  <dd>
                    <When at={e.submissionsOpen} zone={e.timeZone} /> to <When at={e.submissionsClose} zone={e.timeZone} />
                  </dd>
                  {e.judgingOpen && (
                    <>
                      <dt>Judging</dt>
                      <dd>
                        <When at={e.judgingOpen} zone={e.timeZone} /> to <When at={e.judgingClose} zone={e.timeZone} />
                      </dd>
                    </>
                  )}
                  <dt>Projects</dt>
                  <dd>
                    <Link href={`${eventPath(e.slug)}/projects`}>
                      {e.projects.totalCount} submitted
                    </Link>
                  </dd>
                </dl>
                {open && (
                  <p>
                    Submissions close in <Countdown to={e.submissionsClose} />
                  </p>
                )}
                {e.results && (
                  <p>
                    <Link href={`${eventPath(e.slug)}/results`}>{e.results.final ? 'Final results' : 'Provisional results'}</Link>{' '}
                    <Badge tone={e.results.final ? 'good' : 'warn'}>{e.results.final ? 'final' : 'provisional'}</Badge>
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {p.data && p.total > p.items.length && <LoadMore list={p} what="events" />}
    </Page>
  );
}
