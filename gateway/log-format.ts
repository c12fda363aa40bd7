import pino from 'pino';

/**
 * The log line format both services (gateway and listings data service) share: the level by name
 * (`"level":"warn"`, not 40) and the time as ISO 8601 UTC (`"time":"2026-11-24T16:01:52.315Z"`), so
 * one query reads both services' lines.
 */
export const LOG_FORMAT = {
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label: string) => ({ level: label }) },
} as const;
