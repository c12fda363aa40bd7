import type { Counter, Histogram } from 'prom-client';

/**
 * Per-request counting without prom-client's per-call label work. `counter.inc({labels})` and
 * `histogram.observe({labels}, v)` validate and hash the label object on every call; on the public
 * path that is several calls per request. Here a request adds to plain numbers found by walking
 * nested Maps with its label values (interned strings and small integers: no string is built), and
 * prom-client's metric is brought up to date when it is read: its `collect()` hook (every scrape,
 * and the workers' summed scrape) folds what was added since the last read into it. The metric's
 * names, labels, HELP, TYPE and values are prom-client's own.
 */
type LabelValue = string | number;

interface CounterCell {
  readonly labels: Record<string, LabelValue>;
  pending: number;
}

/** A counter's fast side: `add(a, b?, c?)` with the label values in the metric's labelNames order. */
export class CounterTally {
  private readonly root = new Map<LabelValue, unknown>();
  private readonly cells: CounterCell[] = [];

  constructor(private readonly labelNames: readonly string[]) {
    if (labelNames.length < 1 || labelNames.length > 3) throw new Error('CounterTally takes one to three labels');
  }

  add(a: LabelValue, b?: LabelValue, c?: LabelValue): void {
    this.cell(a, b, c).pending++;
  }

  private cell(a: LabelValue, b: LabelValue | undefined, c: LabelValue | undefined): CounterCell {
    // No array, no string: one Map per label level, the last one holding the cells.
    const depth = this.labelNames.length;
    let node = this.root;
    if (depth > 1) node = child(node, a);
    if (depth > 2) node = child(node, b!);
    const last = depth === 1 ? a : depth === 2 ? b! : c!;
    let cell = node.get(last) as CounterCell | undefined;
    if (cell === undefined) {
      const values = [a, b, c];
      const labels: Record<string, LabelValue> = {};
      for (let i = 0; i < depth; i++) labels[this.labelNames[i]!] = values[i]!;
      node.set(last, (cell = { labels, pending: 0 }));
      this.cells.push(cell);
    }
    return cell;
  }

  /** Adds what was counted since the last fold to the prom-client counter (its `collect()`). */
  foldInto(counter: Counter<string>): void {
    for (const cell of this.cells) {
      if (cell.pending === 0) continue;
      counter.inc(cell.labels, cell.pending);
      cell.pending = 0;
    }
  }
}

function child(node: Map<LabelValue, unknown>, value: LabelValue): Map<LabelValue, unknown> {
  let next = node.get(value) as Map<LabelValue, unknown> | undefined;
  if (next === undefined) node.set(value, (next = new Map()));
  return next;
}

/** prom-client's histogram series, as it keeps them (bucket counts per upper bound, not cumulative). */
interface HistogramSeries {
  labels: Record<string, LabelValue>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/** One label value's observations since the last fold: per bucket (the last one is +Inf), sum, count. */
export class HistogramCell {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, LabelValue>,
    private readonly upperBounds: readonly number[],
  ) {
    this.counts = new Float64Array(upperBounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/**
 * A one-label histogram's fast side: `cell(value)` once per label value (keep it), then
 * `cell.observe(v)` per request. prom-client has no public way to add many observations at once,
 * so the fold writes into the histogram's series (`hashMap`, the structure prom-client 15 keeps
 * them in; test/unit/metrics-tally.test.ts compares the result with prom-client's own observe).
 */
export class HistogramTally {
  private readonly cells = new Map<LabelValue, HistogramCell>();

  constructor(
    private readonly labelName: string,
    private readonly upperBounds: readonly number[],
  ) {}

  cell(value: LabelValue): HistogramCell {
    let cell = this.cells.get(value);
    if (cell === undefined) this.cells.set(value, (cell = new HistogramCell({ [this.labelName]: value }, this.upperBounds)));
    return cell;
  }

  foldInto(histogram: Histogram<string>): void {
    const store = histogram as unknown as { hashMap: Record<string, HistogramSeries> };
    for (const cell of this.cells.values()) {
      if (cell.count === 0) continue;
      const value = cell.labels[this.labelName]!;
      let series = findSeries(store.hashMap, this.labelName, value);
      if (series === undefined) {
        histogram.zero(cell.labels); // prom-client creates the series under its own hash
        series = findSeries(store.hashMap, this.labelName, value);
        if (series === undefined) throw new Error(`prom-client histogram by ${this.labelName}: no series after zero()`);
      }
      for (let i = 0; i < this.upperBounds.length; i++) series.bucketValues[this.upperBounds[i]!]! += cell.counts[i]!;
      // The +Inf bucket is not kept by prom-client: it is the count.
      series.sum += cell.sum;
      series.count += cell.count;
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}

function findSeries(hashMap: Record<string, HistogramSeries>, name: string, value: LabelValue): HistogramSeries | undefined {
  for (const key in hashMap) {
    const series = hashMap[key]!;
    if (series.labels[name] === value) return series;
  }
  return undefined;
}
