// /e/:slug/results : the published results, live: the podium and how sure it is, the
// prizes, and the whole ranking (a forest plot and the table), a page at a time.
import { useState } from 'preact/hooks';
import { useQuery, useSubscription } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { LoadMore, usePaged } from '../../paging';
import { ForestPlot, ordinal } from '../../plots';
import { forestRows, hasComparisons, RankingTable, type RankedRow } from '../../ranking';
import { Link } from '../../router';
import { ErrorNote, Notice, Page } from '../../ui';
import { eventPath, NoEvent, Pending, projectPath, Published } from './shared';
import './results.css';

// The ranking comes a page at a time (a large event ranks thousands of projects): the
// first page with the rest of the results, then more on request, each page checked to be
// of the version the first page began. 90 a page: with the comparisons counted beside the
// reviews, 100 would pass the anonymous complexity budget (2,000 by default; about 20
// a row).
const ResultsQuery = graphql(`
  query PublicResults($slug: String!, $first: Int, $after: String) {
    event(slug: $slug) {
      id slug name timeZone
      results {
        final version publishedAt connected runId
        certainty {
          draws
          places { rank probability atLeast entry { projectExternalId } }
          pairs { probability better { projectExternalId } worse { projectExternalId } }
        }
        rankingPage(first: $first, after: $after) {
          totalCount
          pageInfo { hasNextPage endCursor }
          edges { node { rank rankLow rankHigh rawRank rawMean quality excluded reviews comparisons projectExternalId project { id title table } } }
        }
      }
    }
  }
`);

type Answer = ResultOf<typeof ResultsQuery>;

/** The ranking's page as a connection; an event without results has an empty one. */
function rankingOf(d: Answer) {
  const page = d.event?.results?.rankingPage;
  if (page) return { totalCount: page.totalCount, pageInfo: page.pageInfo, nodes: page.edges.map((x) => x.node) };
  return d.event ? { totalCount: 0, pageInfo: { hasNextPage: false, endCursor: null }, nodes: [] } : null;
}

/** The prizes' winners: a query of its own (the ranking's page is near the anonymous cost limit). */
const PodiumQuery = graphql(`
  query PublicPodium($slug: String!) {
    event(slug: $slug) {
      id
      podium {
        prize { id name position track { name } }
        source projectExternalId probability
        project { id title }
      }
    }
  }
`);

const ResultsLive = graphql(`
  subscription PublicResultsLive($slug: String!) {
    resultsPublished(event: $slug) { id version final }
  }
`);

type Ranked = NonNullable<NonNullable<Answer['event']>['results']>['rankingPage']['edges'][number]['node'];

const titleOf = (r: Ranked) => r.project?.title ?? `${r.projectExternalId} (no longer public)`;

export function ResultsPage({ slug }: { slug: string }) {
  const q = usePaged(ResultsQuery, { slug }, rankingOf, {
    pageSize: 90,
    sameList: (first, next) => first.event?.results?.version === next.event?.results?.version,
  });
  const prizes = useQuery(PodiumQuery, { slug });
  const [fresh, setFresh] = useState<number>();
  useSubscription(
    ResultsLive,
    { slug },
    (d) => {
      setFresh(d.resultsPublished.version);
      void q.reload();
      void prizes.refetch();
    },
    {
      onReconnect: () => {
        void q.reload();
        void prizes.refetch();
      },
    },
  );
  const e = q.data?.event;
  if (!e) return <Pending title="Results" q={q} missing={<NoEvent slug={slug} />} />;
  const r = e.results;
  const title = `Results · ${e.name}`;
  if (!r)
    return (
      <Page title={title}>
        <ErrorNote error={q.error} />
        <p>The results are not published yet. This page updates by itself when the organizers publish them.</p>
      </Page>
    );
  const ranking = q.items;
  const ranked = ranking.filter((x) => x.rank != null);
  const podium = ranked.filter((x) => x.rank! <= 3);
  const odds = r.certainty;
  const placeOdds = (x: Ranked) => odds?.places.find((p) => p.entry.projectExternalId === x.projectExternalId);
  const percent = (p: number) => `${Math.round(100 * p)}%`;
  const winners = prizes.data?.event?.podium ?? [];
  // How sure the order of neighbouring podium places is.
  const neighbours = podium.slice(1).flatMap((worse, i) => {
    const better = podium[i];
    const pair = odds?.pairs.find((p) => p.better.projectExternalId === better.projectExternalId && p.worse.projectExternalId === worse.projectExternalId);
    return pair ? [{ better, worse, p: pair.probability }] : [];
  });
  const shown = ranking.length < q.total ? ` (the first ${ranking.length} of ${q.total})` : '';
  const rows: RankedRow[] = ranking.map((x) => ({
    key: x.projectExternalId,
    title: titleOf(x),
    href: x.project ? projectPath(e.slug, x.project.id) : undefined,
    table: x.project?.table,
    rank: x.rank ?? null,
    rankLow: x.rankLow ?? null,
    rankHigh: x.rankHigh ?? null,
    quality: x.quality ?? null,
    rawMean: x.rawMean ?? null,
    rawRank: x.rawRank ?? null,
    reviews: x.reviews,
    comparisons: x.comparisons ?? null,
    excluded: x.excluded ?? null,
  }));
  return (
    <Page title={title}>
      <ErrorNote error={q.error} />
      {fresh != null && <Notice>Version {fresh} was just published; the page shows it.</Notice>}
      <Published r={r} zone={e.timeZone}>
        <Link href={`${eventPath(e.slug)}/verify`}>Verify these results</Link>
      </Published>
      {!r.final && <p class="muted">Provisional: the organizers may publish a newer version.</p>}
      {!r.connected && (
        <p class="muted">
          Not every project could be compared with every other (the judges formed separate groups): only the largest group is ranked.
        </p>
      )}
      <h2>Podium</h2>
      {podium.length === 0 ? (
        <p class="muted">No project is ranked.</p>
      ) : (
        <ol class="podium">
          {podium.map((x) => (
            <li class={`place-${x.rank}`}>
              <span class="place">{ordinal(x.rank!)}</span>
              <span class="title">{x.project ? <Link href={projectPath(e.slug, x.project.id)}>{titleOf(x)}</Link> : titleOf(x)}</span>
              <span class="muted">
                {x.rankLow === x.rankHigh ? `certainly ${ordinal(x.rank!)} (90% interval)` : `90% interval: ${ordinal(x.rankLow!)} to ${ordinal(x.rankHigh!)} place`}
              </span>
              {placeOdds(x) && (
                <span class="odds" data-testid="place-odds">
                  {ordinal(x.rank!)} in {percent(placeOdds(x)!.probability)} of {odds!.draws} plausible rankings
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
      {neighbours.length > 0 && (
        <ul class="podium-order" data-testid="podium-order">
          {neighbours.map(({ better, worse, p }) => (
            <li>
              {titleOf(better)} ahead of {titleOf(worse)}: {percent(p)} sure
              {p < 0.6 ? ' — close to a coin toss' : p >= 0.9 ? ' — clear' : ''}
            </li>
          ))}
        </ul>
      )}
      {winners.length > 0 && (
        <>
          <h2>Prizes</h2>
          <ul class="prizes" data-testid="prizes">
            {winners.map((w) => (
              <li>
                <span class="prize-name">{w.prize.name}</span>
                {w.prize.track && <span class="muted"> · {w.prize.track.name}</span>}
                {': '}
                {w.project ? <Link href={projectPath(e.slug, w.project.id)}>{w.project.title}</Link> : `${w.projectExternalId} (no longer public)`}
                <span class="muted">
                  {w.source === 'ASSIGNED' ? ' — awarded by the organizers' : ` — ${ordinal(w.prize.position)} in the ranking`}
                  {w.probability != null && `, ${percent(w.probability)} sure of that place`}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      <h2>The whole ranking</h2>
      <p>
        {hasComparisons(rows)
          ? 'Judges scored projects on the rubric or compared them two at a time, and each project is seen by only a few of them, so scores and comparisons are calibrated together into one ranking: each judge’s severity is taken out of their scores, and each judge’s comparisons count by how reliable they look.'
          : 'Judges differ in severity and each project is seen by only a few of them, so the scores are calibrated before ranking.'}{' '}
        Each line shows where a project could plausibly place: where lines overlap, the order is close to a coin toss.
      </p>
      <ForestPlot rows={forestRows(rows)} caption={`Calibrated ranks of ${ranked.length} projects${shown} with 90% rank intervals; the table below gives the same numbers.`} />
      <RankingTable rows={rows} caption="The ranking" digits={3} />
      {q.total > ranking.length && <LoadMore list={q} what="projects" />}
    </Page>
  );
}
