// One way to show a calibrated ranking and its judges, for the live leaderboard and for a
// stored calibration run: the engine's summary, the forest plot beside the ranking table,
// each judge's severity beside the judges' table, and the diagnostics.
import { ForestPlot, SeverityPlot, type SeverityRow } from '../../plots';
import { forestRows, num, RankingTable, type RankedRow } from '../../ranking';
import { Badge, Table } from '../../ui';
import './calibration-view.css';
import './organizer-live.css';

export type JudgeRow = { key: string; name: string; email?: string | null; flag: string; offset: number; noise: number; scale: number | null; reviews: number };

const FLAGS: Record<string, string> = {
  ok: 'ok',
  constant: 'gives every project the same score',
  single_review: 'only one review: severity not estimable',
  discordant: 'disagrees with the panel',
  no_reviews: 'no submitted reviews',
  not_comparable: 'shares no project with the largest group',
};

function flagTone(flag: string): 'good' | 'warn' | 'bad' {
  return flag === 'ok' ? 'good' : flag === 'discordant' ? 'bad' : 'warn';
}

function Diagnostics({ value }: { value: unknown }) {
  const nothing = (v: unknown) => v == null || v === 0 || (Array.isArray(v) && v.length === 0);
  const empty = nothing(value) || (typeof value === 'object' && Object.values(value as Record<string, unknown>).every(nothing));
  return (
    <details class="diagnostics">
      <summary>Diagnostics{empty ? ' (nothing unusual)' : ''}</summary>
      <p class="muted">Outlying reviews and judge pairs with identical scores. They are shown for a closer look; the model does not use them.</p>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/** The engine's plain-words summary of a run (engine verdict-calibrate/3 on). */
function summaryOf(diagnostics: unknown): string[] {
  const lines = (diagnostics as { summary?: unknown } | null)?.summary;
  return Array.isArray(lines) ? lines.filter((l): l is string => typeof l === 'string') : [];
}

export function CalibrationView({ projects, judges, diagnostics, what }: { projects: RankedRow[]; judges: JudgeRow[]; diagnostics: unknown; what: string }) {
  // The engine names projects by their calibration ids (external ids): show titles.
  const byLength = [...projects].sort((a, b) => b.key.length - a.key.length);
  const summary = summaryOf(diagnostics).map((line) => byLength.reduce((l, p) => l.split(p.key).join(p.title), line));
  const forest = forestRows(projects);
  const severity: SeverityRow[] = judges.map((j) => ({ label: j.name, offset: j.offset, noise: j.noise, reviews: j.reviews, flag: j.flag }));
  const ranked = projects.filter((p) => p.rank != null).length;
  const flagged = judges.filter((j) => j.flag !== 'ok').length;
  return (
    <>
      {summary.length > 0 && (
        <section class="run-summary" aria-label="What this ranking says">
          <h3>What this ranking says</h3>
          <ul data-testid="run-summary">
            {summary.map((line) => (
              <li>{line}</li>
            ))}
          </ul>
        </section>
      )}
      <h3>Projects</h3>
      <p class="muted">
        {ranked} of {projects.length} projects ranked. Quality has each judge's severity taken out; the interval is where the rank lies with 90 %
        confidence.
      </p>
      <div class="live-split">
        <div class="plot-cell">
          <ForestPlot rows={forest} caption={`${what}: calibrated quality and 90 % rank intervals; raw means beside.`} />
        </div>
        <div>
          <RankingTable rows={projects} caption={`${what}: projects by rank`} />
        </div>
      </div>
      <h3>Judges</h3>
      <p class="muted">
        Offset: how far above (+) or below (−) the panel a judge scores. {flagged === 0 ? 'No judge is flagged.' : `${flagged} flagged.`}
      </p>
      <div class="live-split">
        <div class="plot-cell">
          <SeverityPlot rows={severity} caption={`${what}: each judge's severity (offset) and noise.`} />
        </div>
        <div>
          <Table caption={`${what}: judges`}>
            <thead>
              <tr>
                <th scope="col">Judge</th>
                <th scope="col" class="num">
                  Offset
                </th>
                <th scope="col" class="num">
                  Scale
                </th>
                <th scope="col" class="num">
                  Noise
                </th>
                <th scope="col" class="num">
                  Reviews
                </th>
                <th scope="col">Flag</th>
              </tr>
            </thead>
            <tbody>
              {judges.map((j) => (
                <tr>
                  <td>
                    {j.name}
                    {j.email && <span class="muted judge-email">{j.email}</span>}
                  </td>
                  <td class="num">{num(j.offset)}</td>
                  <td class="num">{num(j.scale)}</td>
                  <td class="num">{num(j.noise)}</td>
                  <td class="num">{j.reviews}</td>
                  <td>
                    <Badge tone={flagTone(j.flag)}>{j.flag}</Badge>
                    {j.flag !== 'ok' && FLAGS[j.flag] && <span class="muted flag-why"> {FLAGS[j.flag]}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      </div>
      <Diagnostics value={diagnostics} />
    </>
  );
}

export function projectHref(slug: string, id: string | undefined) {
  return id ? `/e/${encodeURIComponent(slug)}/projects/${encodeURIComponent(id)}` : undefined;
}
