import type { AccessLine as WrittenAccessLine } from '../../gateway/access-log';
import type { RunningProcess } from './processes';
import { eventually } from './timing';

/** Waits until the process has written a line containing `text`; returns that line. */
export async function waitForLine(p: RunningProcess, text: string, timeoutMs = 10_000): Promise<string> {
  try {
    return await eventually(`a line with ${text}`, () => p.output.find((l) => l.includes(text)), { timeoutMs, intervalMs: 20 });
  } catch (err) {
    throw new Error(`${(err as Error).message}:\n${p.output.join('\n')}`);
  }
}

/** The base URL of a listener the gateway announced with a JSON log line `{"msg": <message>, "port": N}`. */
export async function announcedUrl(p: RunningProcess, message: string): Promise<string> {
  const line = await waitForLine(p, `"msg":"${message}"`);
  return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}

/**
 * The gateway's access line ("answered") as read back from the log: the fields the gateway writes
 * (its own type, gateway/access-log.ts) and pino's level, time (epoch ms) and message.
 */
export interface AccessLine extends WrittenAccessLine {
  level: string;
  time: number;
  msg: 'answered';
  [field: string]: unknown;
}

/** What every access line contains. */
export const ANSWERED = '"msg":"answered"';

/** The text of the access line of the request with this id (`req.id` is the line's first request field). */
export const requestIdText = (id: string): string => `"req":{"id":${JSON.stringify(id)}`;

/** The access lines among a process's output lines, parsed. */
export function accessLines(output: readonly string[]): AccessLine[] {
  return output.filter((l) => l.includes(ANSWERED)).map((l) => JSON.parse(l) as AccessLine);
}

/** The access line of the request with this id, when written. */
export function accessLineOf(output: readonly string[], id: string): AccessLine | undefined {
  const text = requestIdText(id);
  const line = output.find((l) => l.includes(text));
  return line === undefined ? undefined : (JSON.parse(line) as AccessLine);
}
