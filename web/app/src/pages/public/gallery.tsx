// /e/:slug/projects : the gallery of submitted projects, by track, searchable among those loaded.
import { useState } from 'preact/hooks';
import { graphql, type ResultOf } from '../../graphql';
import { LoadMore, usePaged } from '../../paging';
import { Link } from '../../router';
import { ErrorNote, Field, Loading, Page, Select } from '../../ui';
import { NoEvent, Pending, projectPath, Tags } from './shared';
import './gallery.css';

const GalleryQuery = graphql(`
  query PublicGallery($slug: String!, $track: ID, $first: Int, $after: String) {
    event(slug: $slug) {
      id slug name
      tracks { id name }
      projects(track: $track, first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { id title tagline tags table track { id name } team { id name } }
      }
    }
  }
`);

type GalleryProject = NonNullable<ResultOf<typeof GalleryQuery>['event']>['projects']['nodes'][number];

function matches(p: GalleryProject, words: string[]) {
  const hay = [p.title, p.tagline, p.team.name, ...p.tags].join(' ').toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function GalleryPage({ slug }: { slug: string }) {
  const [track, setTrack] = useState('');
  const [search, setSearch] = useState('');
  const p = usePaged(GalleryQuery, { slug, track: track || null }, (d) => d.event?.projects, { pageSize: 48 });
  const e = p.data?.event;
  if (!e) {
    if (p.data) return <NoEvent slug={slug} />;
    return <Pending title="Projects" q={p} />;
  }
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = words.length ? p.items.filter((n) => matches(n, words)) : p.items;
  return (
    <Page title={`Projects · ${e.name}`}>
      <form class="gallery-filters" role="search" onSubmit={(ev) => ev.preventDefault()}>
        <Select
          label="Track"
          value={track}
          onValue={setTrack}
          options={[{ value: '', label: 'All tracks' }, ...e.tracks.map((t) => ({ value: t.id, label: t.name }))]}
        />
        <Field label="Search" type="search" value={search} onValue={setSearch} hint="Title, tagline, tags or team, among the projects loaded." />
      </form>
      <ErrorNote error={p.error} />
      {p.loading && <Loading what="Loading projects" />}
      <p class="muted" role="status" aria-live="polite">
        {words.length ? `${shown.length} of ${p.items.length} loaded projects match “${search.trim()}”.` : `${p.total} submitted project${p.total === 1 ? '' : 's'}${track ? ' in this track' : ''}.`}
      </p>
      {shown.length > 0 && (
        <ul class="cards gallery">
          {shown.map((n) => (
            <li class="card project-card">
              <h2>
                <Link href={projectPath(e.slug, n.id)}>{n.title}</Link>
              </h2>
              {n.tagline && <p>{n.tagline}</p>}
              <p class="muted">
                by {n.team.name} · {n.track.name}
                {n.table && <> · <span class="expo-table">Table {n.table}</span></>}
              </p>
              {n.tags.length > 0 && <Tags tags={n.tags} label="Tags" />}
            </li>
          ))}
        </ul>
      )}
      {p.total > 0 && <LoadMore list={p} what="projects" />}
    </Page>
  );
}
