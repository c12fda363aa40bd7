/**
 * The messages between the primary and its workers over the cluster IPC channel (besides
 * prom-client's own metrics request and answer). Each carries a `type` prefixed `gateway:`, so
 * neither side mistakes another library's message for one of these.
 */

/** A worker's public listener is accepting connections. */
export interface ListeningMessage {
  type: 'gateway:listening';
  port: number;
}

/** The primary asks a worker for its readiness (`/readyz` on the primary's ops listener). */
export interface ReadinessRequest {
  type: 'gateway:readiness-request';
  requestId: number;
}

/** A worker's readiness: the same body its own `/readyz` would answer. */
export interface ReadinessAnswer {
  type: 'gateway:readiness-answer';
  requestId: number;
  readiness: WorkerReadiness;
}

export interface WorkerReadiness {
  readonly ready: boolean;
  /** starting, serving, draining (or refused), as a single process's /readyz says. */
  readonly status?: string;
  readonly checks: Readonly<Record<string, unknown>>;
}

export type WorkerMessage = ListeningMessage | ReadinessAnswer;
export type PrimaryMessage = ReadinessRequest;

function hasType(value: unknown): value is { type: unknown } {
  return typeof value === 'object' && value !== null && 'type' in value;
}

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return hasType(value) && (value.type === 'gateway:listening' || value.type === 'gateway:readiness-answer');
}

export function isPrimaryMessage(value: unknown): value is PrimaryMessage {
  return hasType(value) && value.type === 'gateway:readiness-request';
}
