/** One bar of bench/results.svg: a measured figure beside its target, as a bench returns it. */
export interface ChartRow {
  label: string;
  /** Rows of one bench that share a unit and a scale, e.g. `bundle size, KB`; default: the bench's only group. */
  group?: string;
  /** The figure, in the unit of `target` (a ratio, KB, ms…). */
  value: number;
  /** The bar for this figure; absent where it sets none. */
  target?: number;
  /** Whether the target is a floor (`higher`) or a ceiling (`lower`). */
  better: 'higher' | 'lower';
  /** `log` for ratios that span orders of magnitude (drawn from the axis's low end, ticks at powers of ten). */
  scale?: 'linear' | 'log';
  /** What the bar's label prints, e.g. `1.32x (812,000 vs 615,000/s)`. */
  text: string;
}
