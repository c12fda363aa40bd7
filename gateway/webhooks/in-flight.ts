/**
 * Deliveries in flight, counted, and a bounded wait for the last one to end: what a queue's
 * `close()` waits for (both queues, memory and Redis).
 */
export class InFlight {
  private n = 0;
  private readonly idle: Array<() => void> = [];

  get count(): number {
    return this.n;
  }

  start(): void {
    this.n++;
  }

  end(): void {
    this.n--;
    if (this.n === 0) this.idle.splice(0).forEach((resolve) => resolve());
  }

  /** Resolves once nothing is in flight, or after `maxMs` at the most. */
  async settled(maxMs = 2000): Promise<void> {
    if (this.n > 0) await Promise.race([new Promise<void>((resolve) => this.idle.push(resolve)), new Promise((resolve) => setTimeout(resolve, maxMs).unref())]);
  }
}
