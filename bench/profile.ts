/**
 * Reading a V8 CPU profile (`node --cpu-prof`) of the gateway under load: the top functions by self
 * time, and a per-step budget. Only the samples between the first and the last one taken inside the
 * gateway's request listener count, so start-up and shutdown do not dilute the figures; `(idle)`
 * never counts (the process was waiting, not working).
 *
 * The budget attributes each sample to the innermost frame of the gateway's own code on its stack
 * (a policy file, with everything it calls: node:crypto, ioredis's send, pino...), else to the
 * innermost package (callbacks run from the event loop: undici reading the answer, ioredis reading
 * a reply), else to the Node internal module (HTTP parser, sockets), else to V8's own entries
 * (`(garbage collector)`, `(program)`). Shares are of the profiled CPU; µs per request are the share
 * times the gateway's CPU per request measured from /proc in the same run (a profiled process runs a
 * little slower, so the shares are the measured quantity and /proc gives the scale).
 */
import { readFileSync } from 'node:fs';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

export interface ProfileLine { name: string; where: string; share: number }
export interface ProfileSummary { samplesMs: number; top: ProfileLine[]; budget: Array<{ part: string; share: number }> }

const V8_ENTRIES = new Set(['(program)', '(garbage collector)', '(root)', '(idle)']);

/** `dist/gateway/policies/authenticate.js` → `gateway/policies/authenticate`; a package → its name; `node:net` stays. */
function place(url: string): { kind: 'gateway' | 'package' | 'node' | 'other'; label: string } {
  const g = /\/dist\/((?:gateway|backend-mock)\/[^?]*?)\.js$/.exec(url);
  if (g) return { kind: 'gateway', label: g[1]! };
  const p = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (p) return { kind: 'package', label: p[1]! };
  if (url.startsWith('node:')) return { kind: 'node', label: url };
  return { kind: 'other', label: url || '(native)' };
}

export function summariseProfile(file: string, topCount = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stack = (id: number): ProfileNode[] => {
    const out: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) out.push(byId.get(at)!);
    return out; // innermost first
  };
  const inListener = (id: number): boolean => stack(id).some((n) => n.callFrame.functionName === 'handleRequest' && n.callFrame.url.includes('/dist/gateway/'));

  const { samples, timeDeltas } = profile;
  let first = samples.findIndex(inListener);
  let last = samples.length - 1;
  while (last > first && !inListener(samples[last]!)) last--;
  if (first < 0) first = 0;

  const self = new Map<string, { name: string; where: string; us: number }>();
  const parts = new Map<string, number>();
  let total = 0;
  for (let i = first; i <= last; i++) {
    const node = byId.get(samples[i]!)!;
    if (node.callFrame.functionName === '(idle)') continue;
    const us = timeDeltas[i + 1] ?? timeDeltas[i] ?? 0; // the delta after a sample is the time it stood for
    total += us;
    const f = node.callFrame;
    const where = f.url ? `${place(f.url).label}:${f.lineNumber + 1}` : '(native)';
    const key = `${f.functionName}@${where}`;
    const entry = self.get(key) ?? { name: f.functionName || '(anonymous)', where, us: 0 };
    entry.us += us;
    self.set(key, entry);

    let part: string | undefined;
    if (V8_ENTRIES.has(f.functionName)) part = f.functionName;
    const frames = stack(node.id);
    if (!part) for (const n of frames) { const p = place(n.callFrame.url); if (p.kind === 'gateway') { part = p.label; break; } }
    if (!part) for (const n of frames) { const p = place(n.callFrame.url); if (p.kind === 'package') { part = `${p.label} (event-loop callbacks)`; break; } }
    if (!part) for (const n of frames) { const p = place(n.callFrame.url); if (p.kind === 'node') { part = `${p.label} (Node internals)`; break; } }
    part ??= '(native, no JS frame)';
    parts.set(part, (parts.get(part) ?? 0) + us);
  }
  const top = [...self.values()].sort((a, b) => b.us - a.us).slice(0, topCount).map((e) => ({ name: e.name, where: e.where, share: e.us / total }));
  const budget = [...parts.entries()].sort((a, b) => b[1] - a[1]).map(([part, us]) => ({ part, share: us / total }));
  return { samplesMs: total / 1000, top, budget };
}

/** The two tables as Markdown, µs per request scaled from `cpuUsPerRequest`. */
export function renderProfile(p: ProfileSummary, cpuUsPerRequest: number, minShare = 0.005): string {
  const us = (share: number): string => (share * cpuUsPerRequest).toFixed(1);
  const pct = (share: number): string => `${(share * 100).toFixed(1)} %`;
  const lines = [
    `Profiled CPU: ${p.samplesMs.toFixed(0)} ms of samples (idle excluded); µs/req = share × ${cpuUsPerRequest.toFixed(0)} µs (the gateway's CPU per request from /proc, same run).`,
    '',
    `Top ${p.top.length} functions by self time:`,
    '',
    '| # | Function | Where | Self | µs/req |',
    '|---|---|---|---|---|',
    ...p.top.map((t, i) => `| ${i + 1} | \`${t.name.length > 60 ? `${t.name.slice(0, 57)}...` : t.name}\` | ${t.where} | ${pct(t.share)} | ${us(t.share)} |`),
    '',
    'Per-step budget (each sample to the innermost gateway file on its stack, callees included; else the package or Node module whose callback ran):',
    '',
    '| Part | Share | µs/req |',
    '|---|---|---|',
    ...p.budget.filter((b) => b.share >= minShare).map((b) => `| ${b.part} | ${pct(b.share)} | ${us(b.share)} |`),
  ];
  const rest = p.budget.filter((b) => b.share < minShare).reduce((s, b) => s + b.share, 0);
  if (rest > 0) lines.push(`| (parts under ${pct(minShare)} each) | ${pct(rest)} | ${us(rest)} |`);
  return `${lines.join('\n')}\n`;
}
