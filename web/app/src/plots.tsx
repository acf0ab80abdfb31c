// Pictures drawn as SVG by hand (no plotting library needed for three charts):
// the ranking as a forest plot, judge severity, and judging coverage.
export {};
