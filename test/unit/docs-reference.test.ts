import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { COMMANDS } from '../../scripts/keys/commands';

const root = path.resolve(__dirname, '../..');
const read = (rel: string): string => readFileSync(path.join(root, rel), 'utf8');

/**
 * The reference (docs/reference.md) against what the code reads and runs, and the links between the
 * README and the pages under docs/, as the error catalogue is held to its table: a variable read by
 * gateway/config/ or a keys CLI command cannot exist undocumented, and a link cannot point at a page
 * or a heading that is not there.
 */

/** The lines of a markdown text outside fenced code blocks (``` … ```), with their code fences blanked. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** The text of one section: from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/**
 * The environment variable names the sources of gateway/config/ read: every ALL_CAPS name with an
 * underscore, and every one-word ALL_CAPS object key or string literal (`PORT:`, `'HOST'`), less the
 * constants those files declare or import (MAX_YAML_BYTES, CORE_SCHEMA, …). Comments are left out.
 */
function envNamesReadByConfig(): Set<string> {
  const dir = path.join(root, 'gateway/config');
  const names = new Set<string>();
  const declared = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(path.join(dir, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    for (const m of source.matchAll(/\b(?:const|let|var|function|class|enum|type|interface)\s+([A-Z][A-Z0-9_]*)\b/g)) declared.add(m[1]!);
    for (const m of source.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}/g)) {
      for (const part of m[1]!.split(',')) declared.add(part.trim().split(/\s+as\s+/).pop()!.replace(/^type\s+/, ''));
    }
    for (const m of source.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) names.add(m[0]);
    for (const m of source.matchAll(/^\s*([A-Z][A-Z0-9]+)\s*:/gm)) names.add(m[1]!);
    for (const m of source.matchAll(/['"]([A-Z][A-Z0-9]+)['"]/g)) names.add(m[1]!);
  }
  for (const name of declared) names.delete(name);
  return names;
}

/** GitHub's anchor for a heading: rendered text, lower-cased, punctuation dropped, each space a hyphen. */
function anchorOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a markdown file offers, duplicates numbered as GitHub does (`x`, `x-1`, `x-2`). */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    anchors.add(n === 0 ? base : `${base}-${n}`);
    seen.set(base, n + 1);
  }
  return anchors;
}


describe('docs/reference.md', () => {
  const reference = read('docs/reference.md');

  it('lists every environment variable gateway/config/ reads', () => {
    const read = envNamesReadByConfig();
    // The parse finds what it must: if it found nothing, the check below would pass for nothing.
    for (const known of ['PORT', 'HOST', 'REDIS_URL', 'PORTAL_PUBLIC_URL', 'OTEL_BSP_SCHEDULE_DELAY', 'GATEWAY_ADMIN_WORKER']) expect(read).toContain(known);
    expect(read.size).toBeGreaterThan(70);
    const documented = new Set([...section(reference, '## Environment variables').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
    expect([...read].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  it('lists every command of the keys CLI, and only those', () => {
    const names = ['help', ...COMMANDS.map((c) => c.name)];
    expect(names.length).toBeGreaterThan(20);
    const documented = new Set([...section(reference, '## The keys CLI').matchAll(/^\| `keys ([a-z-]+)/gm)].map((m) => m[1]!));
    expect(names.filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !names.includes(name))).toEqual([]);
  });
});

describe('links between README.md and docs/*.md', () => {
  const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

  it('lead to a file that exists and, with #anchor, to a heading it has', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const lines = prose(read(page)).map((line) => line.replace(/`[^`]*`/g, ''));
      for (const [i, line] of lines.entries()) {
        for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = m[1]!;
          if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
          const [file, anchor] = target.split('#') as [string, string | undefined];
          const rel = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
          const where = `${page}:${i + 1}: ${target}`;
          if (rel.startsWith('..')) {
            broken.push(`${where} (outside the repository)`);
            continue;
          }
          if (!existsSync(path.join(root, rel))) {
            broken.push(`${where} (no such file)`);
            continue;
          }
          checked++;
          if (anchor !== undefined && !(rel.endsWith('.md') && anchorsOf(read(rel)).has(anchor))) broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('reach every page under docs/ from the README', () => {
    const readme = read('README.md');
    for (const page of pages.filter((p) => p !== 'README.md')) {
      expect({ page, linked: readme.includes(`](${page}`) }).toEqual({ page, linked: true });
    }
  });

  it('computes anchors as GitHub does', () => {
    expect(anchorOf('Several cores: `GATEWAY_WORKERS`')).toBe('several-cores-gateway_workers');
    expect(anchorOf("The providers' listener (payments and leaked keys)")).toBe('the-providers-listener-payments-and-leaked-keys');
    expect(anchorOf('Managing keys with Redis (`KEY_STORE=redis`)')).toBe('managing-keys-with-redis-key_storeredis');
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n## A')]).toEqual(['a', 'a-1', 'a-2']);
  });
});
