import type { RunningProcess } from './processes';

/** Waits until the process has written a line containing `text`; returns that line. */
export async function waitForLine(p: RunningProcess, text: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = p.output.find((l) => l.includes(text));
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no line with ${text} within ${timeoutMs} ms:\n${p.output.join('\n')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The base URL of a listener the gateway announced with a JSON log line `{"msg": <message>, "port": N}`. */
export async function announcedUrl(p: RunningProcess, message: string): Promise<string> {
  const line = await waitForLine(p, `"msg":"${message}"`);
  return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}
