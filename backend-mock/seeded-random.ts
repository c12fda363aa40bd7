/**
 * A small seeded pseudo-random source (mulberry32). Math.random cannot be seeded, and the
 * generated data set must be identical on every run so benchmarks and tests compare like with like.
 * mulberry32 is tiny, fast and statistically good enough for fake data; it is not for security.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A float in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with the given probability. */
  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick() needs a non-empty array');
    return item;
  }
}

/**
 * Chooses among items in proportion to their weights. The cumulative table is built once so each
 * draw is a short scan rather than a sum over all weights.
 */
export class WeightedChoice<T> {
  private readonly cumulative: number[] = [];
  private readonly total: number;

  constructor(
    private readonly items: readonly T[],
    weightOf: (item: T) => number,
  ) {
    if (items.length === 0) throw new Error('WeightedChoice needs at least one item');
    let sum = 0;
    for (const item of items) {
      sum += weightOf(item);
      this.cumulative.push(sum);
    }
    this.total = sum;
  }

  draw(random: SeededRandom): T {
    const target = random.next() * this.total;
    for (let i = 0; i < this.cumulative.length; i += 1) {
      if (target < this.cumulative[i]!) return this.items[i]!;
    }
    // Only reachable through floating-point rounding at the very top of the range.
    return this.items[this.items.length - 1]!;
  }
}
