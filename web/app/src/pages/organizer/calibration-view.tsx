// One way to show a calibrated ranking and its judges, for the live leaderboard and for a
// stored calibration run: the engine's summary, the forest plot beside the ranking table,
// each scoring judge's severity and each comparing judge's reliability beside the judges'
// table, and the diagnostics. A judge who only compares has no severity: the table shows
// their comparisons and reliability instead of an offset of zero.
import { ForestPlot, ReliabilityPlot, SeverityPlot, type ReliabilityRow, type SeverityRow } from '../../plots';
import { forestRows, hasComparisons, num, RankingTable, type RankedRow } from '../../ranking';
import { Badge, Table } from '../../ui';
import './calibration-view.css';
import './organizer-live.css';

export type JudgeRow = {
  key: string;
  name: string;
  email?: string | null;
  flag: string;
  offset: number;
  noise: number;
  scale: number | null;
  reviews: number;
  /** Comparisons the calibration used (0 for a judge who only scores). */
  comparisons: number;
  /** How often the judge's comparisons follow quality rather than a coin (0.5 to 1); null without comparisons. */
  reliability: number | null;
};

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

/** Where a ranking's quality comes from: scores, comparisons, or both. */
function qualityFrom(compared: boolean, scored: boolean): string {
  if (!compared) return "Quality has each judge's severity taken out.";
  const weighed = "each judge's comparisons weighed by how reliable they look";
  if (!scored) return `Quality comes from the judges' comparisons, ${weighed} (on the log-odds scale of a comparison).`;
  return `Quality comes from the rubric scores and the judges' comparisons in one model: each judge's severity taken out of their scores, ${weighed}.`;
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
  // Severity is a scoring judge's; reliability a comparing judge's. A judge who does
  // neither (no usable reviews or comparisons yet) is in the table only.
  const compared = hasComparisons(projects) || judges.some((j) => j.comparisons > 0);
  const scorers = judges.filter((j) => j.reviews > 0 || j.comparisons === 0);
  const severity: SeverityRow[] = scorers.map((j) => ({ label: j.name, offset: j.offset, noise: j.noise, reviews: j.reviews, flag: j.flag }));
  const reliability: ReliabilityRow[] = judges.flatMap((j) =>
    j.comparisons > 0 && j.reliability != null ? [{ label: j.name, reliability: j.reliability, comparisons: j.comparisons, flag: j.flag }] : [],
  );
  const ranked = projects.filter((p) => p.rank != null).length;
  const flagged = judges.filter((j) => j.flag !== 'ok').length;
  const severe = (j: JudgeRow, v: number | null) => (j.reviews === 0 && j.comparisons > 0 ? '–' : num(v));
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
        {ranked} of {projects.length} projects ranked. {qualityFrom(compared, projects.some((p) => p.reviews > 0))} The interval is where the rank lies with 90 %
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
        Offset: how far above (+) or below (−) the panel a judge scores.
        {compared && ' Reliability: how often a judge’s comparisons follow the projects’ quality rather than a coin toss (50 % to 100 %); a judge who only compares has no offset.'}{' '}
        {flagged === 0 ? 'No judge is flagged.' : `${flagged} flagged.`}
      </p>
      <div class="live-split">
        <div class="plot-cell">
          {severity.length > 0 && <SeverityPlot rows={severity} caption={`${what}: each scoring judge's severity (offset) and noise.`} />}
          {reliability.length > 0 && <ReliabilityPlot rows={reliability} caption={`${what}: each comparing judge's reliability.`} />}
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
                {compared && (
                  <>
                    <th scope="col" class="num">
                      Comparisons
                    </th>
                    <th scope="col" class="num">
                      Reliability
                    </th>
                  </>
                )}
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
                  <td class="num">{severe(j, j.offset)}</td>
                  <td class="num">{severe(j, j.scale)}</td>
                  <td class="num">{severe(j, j.noise)}</td>
                  <td class="num">{j.reviews}</td>
                  {compared && (
                    <>
                      <td class="num">{j.comparisons}</td>
                      <td class="num">{j.reliability == null ? '–' : `${Math.round(100 * j.reliability)} %`}</td>
                    </>
                  )}
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
