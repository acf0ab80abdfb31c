// A calibrated ranking as a table: the one way the organizers' live leaderboard, a stored
// calibration run and the public results show it (the forest plot beside it is plots.tsx).
import { excludedReason, type ForestRow } from './plots';
import { Link } from './router';
import { Badge, Table } from './ui';
import './ranking.css';

/** One project's line of a ranking; `key` is its calibration id (external id). */
export type RankedRow = {
  key: string;
  title: string;
  href?: string;
  /** The project's expo table, where it has one. */
  table?: string | null;
  rank: number | null;
  rankLow: number | null;
  rankHigh: number | null;
  quality: number | null;
  /** The quality's standard error, where the ranking has one. */
  stdError?: number | null;
  rawMean: number | null;
  rawRank: number | null;
  reviews: number;
  /** Judges' comparisons of the project counted; null when the ranking has no comparisons. */
  comparisons?: number | null;
  excluded: string | null;
};

/** A number to a few places, a dash for none. */
export function num(n: number | null | undefined, places = 2): string {
  return n == null || Number.isNaN(n) ? '–' : n.toFixed(places);
}

/** The same rows for the forest plot drawn beside the table. */
export function forestRows(rows: RankedRow[]): ForestRow[] {
  return rows.map((p) => ({
    label: p.title,
    href: p.href,
    rank: p.rank,
    rankLow: p.rankLow,
    rankHigh: p.rankHigh,
    quality: p.quality,
    rawMean: p.rawMean,
    rawRank: p.rawRank,
    excluded: p.excluded,
  }));
}

function interval(p: RankedRow) {
  if (p.rankLow == null || p.rankHigh == null) return '–';
  return p.rankLow === p.rankHigh ? String(p.rankLow) : `${p.rankLow}–${p.rankHigh}`;
}

/** Whether a ranking was computed with comparisons (pairwise judging): then each project
 *  shows its comparisons beside its reviews. */
export function hasComparisons(rows: { comparisons?: number | null }[]): boolean {
  return rows.some((p) => p.comparisons != null);
}

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The ranking, best first as given: rank, project, 90 % interval, quality, raw mean and
 *  raw rank (folded under the title on a phone), reviews, and comparisons when the ranking
 *  has them (folded too). `digits`: the numbers' places. */
export function RankingTable({ rows, caption, digits = 2 }: { rows: RankedRow[]; caption: string; digits?: number }) {
  const compared = hasComparisons(rows);
  return (
    <div class="ranking-table">
      <Table caption={caption}>
        <thead>
          <tr>
            <th scope="col" class="num">
              Rank
            </th>
            <th scope="col">Project</th>
            <th scope="col" class="num">
              90 % interval
            </th>
            <th scope="col" class="num">
              Quality
            </th>
            <th scope="col" class="num minor">
              Raw mean
            </th>
            <th scope="col" class="num minor">
              Raw rank
            </th>
            <th scope="col" class="num">
              Reviews
            </th>
            {compared && (
              <th scope="col" class="num minor">
                Comparisons
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((p) => (
            <tr key={p.key}>
              <td class="num">{p.rank ?? '–'}</td>
              <th scope="row">
                {p.href ? <Link href={p.href}>{p.title}</Link> : p.title}
                {p.table && <span class="muted"> · table {p.table}</span>}
                {p.excluded && (
                  <>
                    {' '}
                    <Badge tone="warn">{excludedReason(p.excluded)}</Badge>
                  </>
                )}
                <span class="minor-line muted">
                  Raw mean {num(p.rawMean, digits)} · raw rank {p.rawRank ?? '–'}
                  {compared && ` · ${count(p.comparisons ?? 0, 'comparison')}`}
                </span>
              </th>
              <td class="num">{interval(p)}</td>
              <td class="num">
                <span class="nowrap">
                  {num(p.quality, digits)}
                  {p.stdError != null && <span class="muted"> ± {num(p.stdError, digits)}</span>}
                </span>
              </td>
              <td class="num minor">{num(p.rawMean, digits)}</td>
              <td class="num minor">{p.rawRank ?? '–'}</td>
              <td class="num">{p.reviews}</td>
              {compared && <td class="num minor">{p.comparisons ?? 0}</td>}
            </tr>
          ))}
        </tbody>
      </Table>
    </div>
  );
}
