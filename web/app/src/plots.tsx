// Pictures drawn as SVG by hand (four charts need no plotting library): the ranking as a
// forest plot, judge severity, the reliability of judges who compare, and judging coverage. Each is a <figure> with a caption and
// a text alternative; colours come from the stylesheet so dark mode works.
//
// The drawings are laid out in CSS pixels of the width they are shown at (measured with a
// ResizeObserver), so that text stays 12 px on a phone instead of shrinking with the
// viewBox; the viewBox still lets the picture scale while the width settles.
import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './plots.css';
import { navigate } from './router';

const FONT = 12;
/** Rough advance of one character at 12 px in a system UI font. */
const CHAR = 7.4; // a generous average glyph width at 12 px (bold labels included), so labels never run past the left edge

function useWidth(initial = 640) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const read = () => {
      const w = Math.floor(el.getBoundingClientRect().width);
      if (w > 0) setWidth((old) => (Math.abs(old - w) >= 1 ? w : old));
    };
    read();
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(read);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return { ref, width: Math.max(240, width) };
}

/** `text` cut to about `px` pixels, with an ellipsis. */
function fit(text: string, px: number): string {
  const n = Math.max(3, Math.floor(px / CHAR));
  return text.length <= n ? text : `${text.slice(0, n - 1)}…`;
}

/** Evenly spaced "nice" ticks over [lo, hi], about `count` of them. */
function ticks(lo: number, hi: number, count: number): number[] {
  const span = hi - lo || 1;
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toFixed(10)));
  return out;
}

function Frame({ caption, label, summary, children, figureRef }: { caption?: string; label: string; summary?: ComponentChildren; children: ComponentChildren; figureRef: RefObject<HTMLDivElement> }) {
  return (
    <figure class="plot">
      <div ref={figureRef} class="plot-box">
        {children}
      </div>
      {summary}
      <figcaption>{caption ?? label}</figcaption>
    </figure>
  );
}

/** A clickable label inside an SVG that navigates in place. Not an <a>: the picture is
 *  role="img", whose children are presentational, so a focusable link inside it would be
 *  a nested interactive control; keyboard and screen-reader users follow the same link
 *  from the table that accompanies the plot. */
function SvgLink({ href, children }: { href: string; children: ComponentChildren }) {
  return (
    <g
      class="svg-link"
      onClick={(e) => {
        const m = e as MouseEvent;
        if (m.metaKey || m.ctrlKey || m.shiftKey) window.open(href, '_blank', 'noopener');
        else navigate(href);
      }}
    >
      {children}
    </g>
  );
}

const ordinal = (n: number) => {
  const s = ['th', 'st', 'nd', 'rd'];
  const v = n % 100;
  return `${n}${s[(v - 20) % 10] ?? s[v] ?? s[0]}`;
};

// ---- forest plot -----------------------------------------------------------------------

/** One ranked project: calibrated quality with its 90 % rank interval, raw mean beside. */
export type ForestRow = {
  label: string;
  href?: string;
  rank: number | null;
  rankLow: number | null;
  rankHigh: number | null;
  quality: number | null;
  rawMean: number | null;
  rawRank: number | null;
  excluded?: string | null;
};

const EXCLUDED: Record<string, string> = {
  duplicate: 'marked a duplicate',
  not_submitted: 'not submitted',
  no_usable_reviews: 'no usable reviews',
  not_comparable: 'not comparable with the rest (judged by judges who saw none of the others)',
};

export function excludedReason(code: string | null | undefined): string {
  if (!code) return 'not ranked';
  return EXCLUDED[code] ?? code.replace(/_/g, ' ');
}

export function ForestPlot({ rows, caption }: { rows: ForestRow[]; caption?: string }) {
  const { ref, width } = useWidth();
  const ranked = rows.filter((r) => r.rank != null).sort((a, b) => (a.rank ?? 0) - (b.rank ?? 0));
  const excluded = rows.filter((r) => r.rank == null);
  const n = ranked.length;
  const maxRank = Math.max(1, n, ...ranked.map((r) => r.rankHigh ?? r.rank ?? 1), ...ranked.map((r) => r.rawRank ?? 1));
  const firstPlace = ranked.filter((r) => (r.rankLow ?? r.rank) === 1).length;
  const certain = ranked.filter((r) => r.rankLow != null && r.rankLow === r.rankHigh).length;
  // Without raw ranks (some project was only compared, never scored) there are no diamonds.
  const raw = ranked.some((r) => r.rawRank != null);
  const label =
    n === 0
      ? 'No project is ranked.'
      : `Forest plot of ${n} ranked project${n === 1 ? '' : 's'}: each one's calibrated rank as a dot, its 90% rank interval as a line${raw ? ', its raw rank as a hollow diamond' : ''}. ` +
        `${ranked[0].label} is first; ${firstPlace} project${firstPlace === 1 ? '' : 's'} could be first, ${certain} place${certain === 1 ? ' is' : 's are'} certain.`;

  const row = 18;
  const top = 26;
  const bottom = n > 25 ? 22 : 6;
  const labelW = Math.min(340, Math.round(width * 0.42));
  const left = labelW + 8;
  const right = 14;
  const plotW = Math.max(60, width - left - right);
  const x = (r: number) => left + (maxRank === 1 ? plotW / 2 : ((r - 1) / (maxRank - 1)) * plotW);
  const height = top + n * row + bottom;
  const tickVals = ticks(1, maxRank, Math.max(2, Math.floor(plotW / 34))).filter((t) => t >= 1 && Number.isInteger(t));
  if (!tickVals.includes(1)) tickVals.unshift(1);

  return (
    <Frame
      figureRef={ref}
      caption={caption}
      label={label}
      summary={
        <>
          <p class="plot-legend muted" aria-hidden="true">
            <span>
              <svg width="16" height="10" viewBox="0 0 16 10">
                <line class="fp-interval" x1="0" x2="16" y1="5" y2="5" />
                <circle class="fp-dot" cx="8" cy="5" r="4" />
              </svg>{' '}
              calibrated rank with its 90% interval
            </span>
            {raw && (
              <span>
                <svg width="12" height="12" viewBox="0 0 12 12">
                  <path class="fp-raw" d="M6 1 L11 6 L6 11 L1 6 Z" />
                </svg>{' '}
                raw rank (mean score before calibration)
              </span>
            )}
          </p>
          {excluded.length > 0 && (
            <div class="plot-excluded">
              <p>Not ranked:</p>
              <ul>
                {excluded.map((r) => (
                  <li>
                    {r.href ? <a href={r.href}>{r.label}</a> : r.label}: <span class="muted">{excludedReason(r.excluded)}</span>
                  </li>
                ))}
              </ul>
            </div>
          )}
        </>
      }
    >
      {n > 0 && (
        <svg class="forest" viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label={label} preserveAspectRatio="xMinYMin meet">
          <g class="axis" aria-hidden="true">
            <text x={labelW - 4} y={top - 6} text-anchor="end" class="axis-title">
              place (1 = best) →
            </text>
            {tickVals.map((t) => (
              <g>
                <line x1={x(t)} x2={x(t)} y1={top - 4} y2={top + n * row} class="grid" />
                <text x={x(t)} y={top - 6} text-anchor="middle" class="tick">
                  {t}
                </text>
                {n > 25 && (
                  <text x={x(t)} y={top + n * row + 15} text-anchor="middle" class="tick">
                    {t}
                  </text>
                )}
              </g>
            ))}
          </g>
          {ranked.map((r, i) => {
            const y = top + i * row + row / 2;
            const text = `${r.rank}. ${r.label}`;
            const shown = fit(text, labelW);
            const lo = r.rankLow ?? r.rank!;
            const hi = r.rankHigh ?? r.rank!;
            const tip = `${r.label}: place ${r.rank}, 90% interval ${lo}–${hi}${r.rawRank != null ? `, raw rank ${r.rawRank}` : ''}`;
            const title = (
              <text x={labelW} y={y + FONT / 3} text-anchor="end" class="label">
                <title>{tip}</title>
                {shown}
              </text>
            );
            return (
              <g class="fp-row">
                {i % 2 === 1 && <rect class="stripe" x={0} y={top + i * row} width={width} height={row} />}
                {r.href ? <SvgLink href={r.href}>{title}</SvgLink> : title}
                <line class="fp-interval" x1={x(lo)} x2={x(hi)} y1={y} y2={y}>
                  <title>{tip}</title>
                </line>
                <line class="fp-cap" x1={x(lo)} x2={x(lo)} y1={y - 4} y2={y + 4} />
                <line class="fp-cap" x1={x(hi)} x2={x(hi)} y1={y - 4} y2={y + 4} />
                <circle class="fp-dot" cx={x(r.rank!)} cy={y} r={4}>
                  <title>{tip}</title>
                </circle>
                {r.rawRank != null && (
                  <path class="fp-raw" d={`M${x(r.rawRank)} ${y - 5} l5 5 l-5 5 l-5 -5 Z`}>
                    <title>{`${r.label}: raw rank ${r.rawRank}`}</title>
                  </path>
                )}
              </g>
            );
          })}
        </svg>
      )}
    </Frame>
  );
}

/** One judge's row of the severity and reliability plots: label, a bar from `from` to `to`,
 *  a dot, and the flag when there is one (all x positions in pixels). */
function JudgeRow(p: { i: number; y: number; top: number; row: number; width: number; labelW: number; flagW: number; tip: string; label: string; flag: string; from: number; to: number; dot: number }) {
  const warn = p.flag !== 'ok';
  return (
    <g class={warn ? 'sv-row warn' : 'sv-row'}>
      {p.i % 2 === 1 && <rect class="stripe" x={0} y={p.top + p.i * p.row} width={p.width} height={p.row} />}
      <text x={p.labelW} y={p.y + FONT / 3} text-anchor="end" class="label">
        <title>{p.tip}</title>
        {fit(p.label, p.labelW)}
      </text>
      <rect class="sv-noise" x={p.from} y={p.y - 3} width={Math.max(1, p.to - p.from)} height={6} rx={3}>
        <title>{p.tip}</title>
      </rect>
      <circle class="sv-dot" cx={p.dot} cy={p.y} r={4.5}>
        <title>{p.tip}</title>
      </circle>
      {warn && (
        <text x={p.width - p.flagW} y={p.y + FONT / 3} class="flag">
          <title>{p.tip}</title>⚠ {fit(p.flag, p.flagW - 16)}
        </text>
      )}
    </g>
  );
}

// ---- judge severity --------------------------------------------------------------------

/** One judge: offset (positive = generous), noise, and the calibration's flag. */
export type SeverityRow = { label: string; offset: number; noise: number; reviews: number; flag: string };

const signed = (v: number, digits = 2) => `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(digits)}`;

export function SeverityPlot({ rows, caption }: { rows: SeverityRow[]; caption?: string }) {
  const { ref, width } = useWidth();
  const n = rows.length;
  const flagged = rows.filter((r) => r.flag !== 'ok');
  const sorted = [...rows].sort((a, b) => a.offset - b.offset);
  const label =
    n === 0
      ? 'No judge to show.'
      : `Severity of ${n} judge${n === 1 ? '' : 's'}: offset from the panel (negative = severe, positive = generous) as a dot, noise as a bar around it. ` +
        `Most severe: ${sorted[0].label} (${signed(sorted[0].offset)}); most generous: ${sorted[n - 1].label} (${signed(sorted[n - 1].offset)}). ` +
        (flagged.length ? `Flagged: ${flagged.map((r) => `${r.label} (${r.flag})`).join(', ')}.` : 'No judge is flagged.');

  const row = 20;
  const top = 26;
  const labelW = Math.min(220, Math.round(width * 0.36));
  const flagW = flagged.length ? Math.min(110, Math.round(width * 0.2)) : 0;
  const left = labelW + 8;
  const right = 10 + flagW;
  const plotW = Math.max(60, width - left - right);
  const m0 = Math.max(0.01, ...rows.map((r) => Math.abs(r.offset) + Math.max(0, r.noise)));
  const tv = ticks(-m0, m0, Math.max(2, Math.floor(plotW / 60)));
  const m = Math.max(m0, Math.abs(tv[0] ?? 0), Math.abs(tv[tv.length - 1] ?? 0));
  const x = (v: number) => left + ((v + m) / (2 * m)) * plotW;
  const height = top + n * row + 20;
  const digits = m < 0.05 ? 3 : 2;

  return (
    <Frame figureRef={ref} caption={caption} label={label}>
      {n > 0 && (
        <svg class="severity" viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label={label} preserveAspectRatio="xMinYMin meet">
          <g class="axis" aria-hidden="true">
            <text x={left} y={12} class="axis-title">
              ← severe
            </text>
            <text x={left + plotW} y={12} text-anchor="end" class="axis-title">
              generous →
            </text>
            {tv.map((t) => (
              <g>
                <line x1={x(t)} x2={x(t)} y1={top - 2} y2={top + n * row} class={t === 0 ? 'zero' : 'grid'} />
                <text x={x(t)} y={top + n * row + 14} text-anchor="middle" class="tick">
                  {t === 0 ? '0' : signed(t, digits)}
                </text>
              </g>
            ))}
          </g>
          {rows.map((r, i) => {
            const y = top + i * row + row / 2;
            const warn = r.flag !== 'ok';
            const tip = `${r.label}: offset ${signed(r.offset, 3)}, noise ${r.noise.toFixed(3)}, ${r.reviews} review${r.reviews === 1 ? '' : 's'}${warn ? `, flagged ${r.flag}` : ''}`;
            const lo = Math.max(-m, r.offset - r.noise);
            const hi = Math.min(m, r.offset + r.noise);
            return <JudgeRow {...{ i, y, top, row, width, labelW, flagW, tip }} label={r.label} flag={r.flag} from={x(lo)} to={x(hi)} dot={x(r.offset)} />;
          })}
        </svg>
      )}
    </Frame>
  );
}

// ---- judge reliability (comparisons) ---------------------------------------------------

/** One judge who compared projects: how often their comparisons follow the projects'
 *  quality rather than a coin toss (0.5 to 1), how many they made, and the flag. */
export type ReliabilityRow = { label: string; reliability: number; comparisons: number; flag: string };

export function ReliabilityPlot({ rows, caption }: { rows: ReliabilityRow[]; caption?: string }) {
  const { ref, width } = useWidth();
  const n = rows.length;
  const flagged = rows.filter((r) => r.flag !== 'ok');
  const sorted = [...rows].sort((a, b) => a.reliability - b.reliability);
  const pct = (v: number) => `${Math.round(100 * v)}%`;
  const label =
    n === 0
      ? 'No judge compared projects.'
      : `Reliability of ${n} judge${n === 1 ? '' : 's'} who compared projects: how often a comparison follows the projects' quality, from 50% (a coin toss) to 100%, as a bar. ` +
        `Least reliable: ${sorted[0].label} (${pct(sorted[0].reliability)}); most reliable: ${sorted[n - 1].label} (${pct(sorted[n - 1].reliability)}). ` +
        (flagged.length ? `Flagged: ${flagged.map((r) => `${r.label} (${r.flag})`).join(', ')}.` : 'No judge is flagged.');

  const row = 20;
  const top = 26;
  const labelW = Math.min(220, Math.round(width * 0.36));
  const flagW = flagged.length ? Math.min(110, Math.round(width * 0.2)) : 0;
  const left = labelW + 8;
  const right = 10 + flagW;
  const plotW = Math.max(60, width - left - right);
  const x = (v: number) => left + ((Math.min(1, Math.max(0.5, v)) - 0.5) / 0.5) * plotW;
  const height = top + n * row + 20;
  const tv = [0.5, 0.6, 0.7, 0.8, 0.9, 1];

  return (
    <Frame figureRef={ref} caption={caption} label={label}>
      {n > 0 && (
        <svg class="reliability" viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label={label} preserveAspectRatio="xMinYMin meet">
          <g class="axis" aria-hidden="true">
            <text x={left} y={12} class="axis-title">
              ← coin toss
            </text>
            <text x={left + plotW} y={12} text-anchor="end" class="axis-title">
              follows quality →
            </text>
            {tv.map((t) => (
              <g>
                <line x1={x(t)} x2={x(t)} y1={top - 2} y2={top + n * row} class="grid" />
                <text x={x(t)} y={top + n * row + 14} text-anchor="middle" class="tick">
                  {pct(t)}
                </text>
              </g>
            ))}
          </g>
          {rows.map((r, i) => {
            const y = top + i * row + row / 2;
            const warn = r.flag !== 'ok';
            const tip = `${r.label}: reliability ${pct(r.reliability)}, ${r.comparisons} comparison${r.comparisons === 1 ? '' : 's'}${warn ? `, flagged ${r.flag}` : ''}`;
            return <JudgeRow {...{ i, y, top, row, width, labelW, flagW, tip }} label={r.label} flag={r.flag} from={x(0.5)} to={x(r.reliability)} dot={x(r.reliability)} />;
          })}
        </svg>
      )}
    </Frame>
  );
}

// ---- coverage --------------------------------------------------------------------------

/** One project's reviews against the target. */
export type CoverageRow = { label: string; done: number; assigned: number; target: number };

/** Rows with a label each up to this many projects; beyond it, one thin column each. */
const COVERAGE_ROWS = 40;

export function CoveragePlot({ rows, caption }: { rows: CoverageRow[]; caption?: string }) {
  const { ref, width } = useWidth();
  const n = rows.length;
  const short = rows.filter((r) => r.assigned < r.target).length;
  const complete = rows.filter((r) => r.done >= r.target).length;
  const label =
    n === 0
      ? 'No project to show.'
      : `Review coverage of ${n} project${n === 1 ? '' : 's'}: reviews done (filled) out of assigned (outlined), with the target marked. ` +
        `${complete} of ${n} have their target reviews done; ${short} ${short === 1 ? 'has' : 'have'} fewer assignments than the target.`;
  const maxV = Math.max(1, ...rows.map((r) => Math.max(r.assigned, r.target, r.done)));
  const tip = (r: CoverageRow) => `${r.label}: ${r.done} done of ${r.assigned} assigned, target ${r.target}${r.assigned < r.target ? ' (below target)' : ''}`;

  let body = null;
  if (n > 0 && n <= COVERAGE_ROWS) {
    const row = 18;
    const top = 22;
    const labelW = Math.min(240, Math.round(width * 0.4));
    const left = labelW + 8;
    const numW = 56;
    const plotW = Math.max(60, width - left - numW - 8);
    const x = (v: number) => left + (v / maxV) * plotW;
    const height = top + n * row + 4;
    const tv = ticks(0, maxV, Math.max(2, Math.min(maxV, Math.floor(plotW / 40)))).filter(Number.isInteger);
    body = (
      <svg class="coverage" viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label={label} preserveAspectRatio="xMinYMin meet">
        <g class="axis" aria-hidden="true">
          {tv.map((t) => (
            <g>
              <line x1={x(t)} x2={x(t)} y1={top - 4} y2={top + n * row} class="grid" />
              <text x={x(t)} y={top - 7} text-anchor="middle" class="tick">
                {t}
              </text>
            </g>
          ))}
        </g>
        {rows.map((r, i) => {
          const y = top + i * row;
          const warn = r.assigned < r.target;
          return (
            <g class={warn ? 'cv-item warn' : r.done >= r.target ? 'cv-item good' : 'cv-item'}>
              <title>{tip(r)}</title>
              <text x={labelW} y={y + row / 2 + FONT / 3} text-anchor="end" class="label">
                {fit(r.label, labelW)}
              </text>
              <rect class="cv-assigned" x={left} y={y + 3} width={Math.max(0, x(r.assigned) - left)} height={row - 6} />
              <rect class="cv-done" x={left} y={y + 3} width={Math.max(0, x(Math.min(r.done, r.assigned || r.done)) - left)} height={row - 6} />
              <line class="cv-target" x1={x(r.target)} x2={x(r.target)} y1={y + 1} y2={y + row - 1} />
              <text x={width - 4} y={y + row / 2 + FONT / 3} text-anchor="end" class="tick">
                {r.done}/{r.assigned}
              </text>
            </g>
          );
        })}
      </svg>
    );
  } else if (n > 0) {
    // One column per project: compact enough for a few hundred.
    const top = 8;
    const left = 24;
    const plotH = 90;
    const plotW = width - left - 4;
    const colW = plotW / n;
    const y = (v: number) => top + plotH - (v / maxV) * plotH;
    const height = top + plotH + 18;
    const tv = ticks(0, maxV, 4).filter(Number.isInteger);
    body = (
      <svg class="coverage compact" viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label={label} preserveAspectRatio="xMinYMin meet">
        <g class="axis" aria-hidden="true">
          {tv.map((t) => (
            <g>
              <line x1={left} x2={width - 4} y1={y(t)} y2={y(t)} class="grid" />
              <text x={left - 4} y={y(t) + 4} text-anchor="end" class="tick">
                {t}
              </text>
            </g>
          ))}
          <text x={left} y={height - 4} class="tick">
            {n} projects →
          </text>
        </g>
        {rows.map((r, i) => {
          const cx = left + i * colW;
          const w = Math.max(0.5, colW - (colW > 3 ? 1 : 0));
          const warn = r.assigned < r.target;
          return (
            <g class={warn ? 'cv-item warn' : r.done >= r.target ? 'cv-item good' : 'cv-item'}>
              <title>{tip(r)}</title>
              <rect class="cv-hit" x={cx} y={top} width={colW} height={plotH} />
              <rect class="cv-assigned" x={cx} y={y(r.assigned)} width={w} height={plotH + top - y(r.assigned)} />
              <rect class="cv-done" x={cx} y={y(Math.min(r.done, r.assigned || r.done))} width={w} height={plotH + top - y(Math.min(r.done, r.assigned || r.done))} />
              <line class="cv-target" x1={cx} x2={cx + w} y1={y(r.target)} y2={y(r.target)} />
            </g>
          );
        })}
      </svg>
    );
  }
  return (
    <Frame
      figureRef={ref}
      caption={caption}
      label={label}
      summary={
        n > 0 && (
          <p class="plot-legend muted" aria-hidden="true">
            <span class="swatch cv-done-swatch" /> done <span class="swatch cv-assigned-swatch" /> assigned <span class="swatch cv-target-swatch" /> target{' '}
            <span class="swatch cv-warn-swatch" /> fewer assignments than the target
          </p>
        )
      }
    >
      {body}
    </Frame>
  );
}

export { ordinal };
