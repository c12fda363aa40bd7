/** An event that gave up (or was never deliverable), kept until an operator re-sends it. */
export interface DeadLetter {
  readonly id: string;
  readonly type: string;
  readonly attempts: number;
  readonly last_error: string;
  readonly failed_at: string;
  readonly event: { type: string; timestamp: string; data: unknown };
}
