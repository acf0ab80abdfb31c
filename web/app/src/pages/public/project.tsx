// /e/:slug/projects/:id : one project as the public (and the event's members) see it, with its comments.
import { useQuery } from '../../api';
import { graphql } from '../../graphql';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Badge, Page, safeUrl, When } from '../../ui';
import { Thread } from './comments';
import { eventPath, Pending, Tags } from './shared';
import './project.css';

const ProjectQuery = graphql(`
  query PublicProject($id: ID!, $members: Boolean!) {
    project(id: $id) {
      id title tagline summary description repoUrl demoUrl tags status submittedAt table
      track { id name }
      team { id name members @include(if: $members) { id displayName } }
      event { id slug name }
    }
  }
`);

const STATUS: Record<string, ['good' | 'warn' | 'plain', string]> = {
  SUBMITTED: ['good', 'submitted'],
  DRAFT: ['plain', 'draft'],
  WITHDRAWN: ['warn', 'withdrawn'],
};

export function ProjectPage({ slug, id }: { slug: string; id: string }) {
  const { viewer, rolesIn, loading } = useSession();
  // Team members' names are for the event's members (and site admins) only.
  const members = !!viewer && (viewer.user.isSiteAdmin || rolesIn(slug).length > 0);
  const q = useQuery(ProjectQuery, { id, members }, { skip: loading });
  const p = q.data?.project;
  if (!p || p.event.slug !== slug)
    return (
      <Pending
        title="Project"
        q={q}
        missing={
          <Page title="No such project">
            <p>
              This event has no project here that you may see. <Link href={`${eventPath(slug)}/projects`}>See its projects</Link>.
            </p>
          </Page>
        }
      />
    );
  const repo = safeUrl(p.repoUrl);
  const demo = safeUrl(p.demoUrl);
  const [tone, status] = STATUS[p.status] ?? ['plain', p.status.toLowerCase()];
  return (
    <Page title={p.title}>
      {p.tagline && <p class="tagline">{p.tagline}</p>}
      <dl class="project-meta">
        <dt>Team</dt>
        <dd>
          {p.team.name}
          {p.team.members && p.team.members.length > 0 ? (
            <span> ({p.team.members.map((m) => m.displayName).join(', ')})</span>
          ) : (
            !members && <span class="muted"> (members’ names are shown to the event’s participants, judges and organizers)</span>
          )}
        </dd>
        <dt>Track</dt>
        <dd>{p.track.name}</dd>
        {p.table && (
          <>
            <dt>Expo table</dt>
            <dd>{p.table}</dd>
          </>
        )}
        <dt>Status</dt>
        <dd>
          <Badge tone={tone}>{status}</Badge> {p.submittedAt && <When at={p.submittedAt} />}
        </dd>
        {p.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>
              <Tags tags={p.tags} />
            </dd>
          </>
        )}
        {(repo || demo) && (
          <>
            <dt>Links</dt>
            <dd>
              {repo && (
                <a href={repo} rel="noopener noreferrer" target="_blank">
                  Source code
                </a>
              )}
              {repo && demo && ' · '}
              {demo && (
                <a href={demo} rel="noopener noreferrer" target="_blank">
                  Demo
                </a>
              )}
            </dd>
          </>
        )}
      </dl>
      {p.summary && (
        <>
          <h2>Summary</h2>
          <p class="description">{p.summary}</p>
        </>
      )}
      <h2>Description</h2>
      {p.description ? <div class="description">{p.description}</div> : <p class="muted">No description yet.</p>}
      {p.status === 'SUBMITTED' && <Thread slug={slug} projectId={p.id} />}
      <p>
        <Link href={`${eventPath(slug)}/projects`}>← All projects of {p.event.name}</Link>
      </p>
    </Page>
  );
}
