import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The rules of the house for gateway/, measured on the source itself: files ≤ 300 lines, functions
 * ≤ 80 lines (declarative tables aside), no import cycles, no import that runs up a floor.
 */
const gateway = path.resolve(__dirname, '../../gateway');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

/**
 * Functions allowed past 80 lines, by `file:name`, each with its reason. Only declarative tables
 * belong here: a list of definitions with no logic between them, which splitting would only scatter.
 */
const DECLARATIVE_TABLES: Record<string, string> = {};

/**
 * The floors, lowest first: a file may import from its own floor or a lower one, never a higher one.
 * A member is a folder (ending in /) or a file directly in gateway/. Every gateway/ file must belong
 * to a floor, so a new folder is placed here on purpose.
 */
const FLOORS: ReadonlyArray<{ name: string; members: readonly string[] }> = [
  {
    name: 'base (errors, configuration, Redis, HTTP helpers, output, logging)',
    members: [
      'errors.ts', 'repo-root.ts', 'client-address.ts', 'slices.ts', 'send.ts', 'server.ts', 'connection-guard.ts', 'pipelined-connection.ts',
      'log-format.ts', 'log-reasons.ts', 'logging.ts', 'defined.ts', 'clock.ts', 'validation/', 'config/', 'redis/', 'http/', 'output/', 'cursor/',
    ],
  },
  { name: 'shared services (upstream calls, counters, operators, ops, workers)', members: ['upstream/', 'limits/', 'operators/', 'ops/', 'workers/'] },
  { name: 'records (audit, usage, webhooks)', members: ['audit/', 'usage/', 'webhooks/'] },
  { name: 'keys', members: ['keys/'] },
  { name: 'holders (accounts, key requests)', members: ['accounts/', 'requests/'] },
  {
    name: 'the public request path',
    members: ['pipeline.ts', 'router.ts', 'observe.ts', 'access-log.ts', 'app.ts', 'policies/', 'routes/', 'reference/', 'compression/', 'tracing/'],
  },
  { name: 'operator and holder surfaces', members: ['admin/', 'console/', 'portal/', 'hooks/', 'billing/', 'leaks/'] },
  { name: 'start-up', members: ['startup/'] },
  { name: 'entry', members: ['main.ts'] },
];

/**
 * Each folder's entry file: its first two lines say what lives in the folder, the first beginning
 * `// gateway/<folder>/: `. A new folder gets its entry here.
 */
const FOLDER_ENTRIES: Record<string, string> = {
  'accounts': 'account.ts',
  'admin': 'admin-app.ts',
  'audit': 'audit-log.ts',
  'billing': 'stripe-hook.ts',
  'compression': 'send-compressed.ts',
  'config': 'env.ts',
  'console': 'console-app.ts',
  'console/pages': 'layout.ts',
  'console/routes': 'key-routes.ts',
  'cursor': 'cursor-codec.ts',
  'hooks': 'hooks-app.ts',
  'http': 'express-app.ts',
  'keys': 'key-record.ts',
  'leaks': 'secret-scanning.ts',
  'limits': 'counters.ts',
  'operators': 'operator-tokens.ts',
  'ops': 'ops-app.ts',
  'output': 'safe-text.ts',
  'policies': 'authenticate.ts',
  'portal': 'portal-app.ts',
  'portal/pages': 'layout.ts',
  'redis': 'connect.ts',
  'reference': 'reference-router.ts',
  'requests': 'request-store.ts',
  'routes': 'properties.ts',
  'startup': 'configuration.ts',
  'tracing': 'start-tracing.ts',
  'upstream': 'listing-stores.ts',
  'usage': 'usage-model.ts',
  'validation': 'query.ts',
  'webhooks': 'webhook-queue.ts',
  'workers': 'supervisor.ts',
};

interface SourceFile {
  readonly rel: string;
  readonly source: ts.SourceFile;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

function loadSources(): SourceFile[] {
  return tsFiles(gateway).map((file) => ({
    rel: path.relative(gateway, file).split(path.sep).join('/'),
    source: ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true),
  }));
}

const lineOf = (source: ts.SourceFile, pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1;

/** Every function-like node (declarations, expressions, arrows, methods, accessors, constructors) of a file. */
function functionsOf(source: ts.SourceFile): Array<{ name: string; lines: number; start: number }> {
  const found: Array<{ name: string; lines: number; start: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = lineOf(source, node.getStart(source));
      found.push({ name: functionName(node, source), lines: lineOf(source, node.end) - start + 1, start });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function functionName(node: ts.Node, source: ts.SourceFile): string {
  const own = (node as { name?: ts.Node }).name;
  if (own) return own.getText(source);
  const parent = node.parent as { name?: ts.Node } | undefined;
  return parent?.name ? parent.name.getText(source) : '(anonymous)';
}

/** The gateway/ files a file imports (static, dynamic, re-exports; type-only imports count too). */
function importsOf(file: SourceFile): string[] {
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specifiers.push(node.moduleSpecifier.text);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file.source);
  return specifiers
    .filter((s) => s.startsWith('.'))
    .map((s) => {
      const base = path.resolve(gateway, path.dirname(file.rel), s);
      const hit = [`${base}.ts`, path.join(base, 'index.ts')].find((c) => existsSync(c));
      return hit ? path.relative(gateway, hit).split(path.sep).join('/') : `(outside gateway/: ${s})`;
    });
}

function floorOf(rel: string): number {
  const top = rel.includes('/') ? `${rel.split('/')[0]}/` : rel;
  return FLOORS.findIndex((f) => f.members.includes(top));
}

/** Import cycles: the strongly connected components (Tarjan) of more than one file, or a file importing itself. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return cycles;
}

describe('house rules for gateway/', () => {
  const sources = loadSources();
  const graph = new Map(sources.map((f) => [f.rel, importsOf(f)]));

  it('reads the whole gateway (the rules below are not vacuous)', () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(sources.some((f) => f.rel === 'main.ts')).toBe(true);
    expect([...graph.values()].flat().length).toBeGreaterThan(300);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = sources.map((f) => ({ file: f.rel, lines: lineOf(f.source, f.source.end) })).filter((f) => f.lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines except the declarative tables listed`, () => {
    const long = sources.flatMap((f) => functionsOf(f.source).filter((fn) => fn.lines > MAX_FUNCTION_LINES).map((fn) => ({ at: `${f.rel}:${fn.name}`, line: fn.start, lines: fn.lines })));
    expect(long.filter((fn) => !(fn.at in DECLARATIVE_TABLES))).toEqual([]);
    // An allowed table that shrank below the bound leaves the list: the exceptions stay the ones needed.
    expect(Object.keys(DECLARATIVE_TABLES).filter((at) => !long.some((fn) => fn.at === at))).toEqual([]);
  });

  it('measures functions of every kind (the measure itself can fail)', () => {
    const probe = ts.createSourceFile('probe.ts', [
      'function a() {', '}', 'const b = () => {', '', '};', 'class C { m() {', '', '', '} }', 'const d = function () { return 1; };',
    ].join('\n'), ts.ScriptTarget.ES2022, true);
    expect(functionsOf(probe).map((f) => [f.name, f.lines])).toEqual([['a', 2], ['b', 3], ['m', 4], ['d', 1]]);
  });

  it('resolves every relative import to a gateway/ file', () => {
    expect([...graph].flatMap(([from, to]) => to.filter((t) => t.startsWith('(')).map((t) => `${from} → ${t}`))).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cyclesOf(graph)).toEqual([]);
    // The detector finds a cycle when there is one.
    expect(cyclesOf(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c']]);
  });

  it('places every file on a floor', () => {
    expect(sources.map((f) => f.rel).filter((rel) => floorOf(rel) < 0)).toEqual([]);
  });

  it('has no import that runs up a floor (nothing imports startup/ but main.ts; nothing imports main.ts)', () => {
    const upward = [...graph].flatMap(([from, to]) =>
      to.filter((t) => floorOf(t) > floorOf(from)).map((t) => `${from} (${FLOORS[floorOf(from)]!.name}) → ${t} (${FLOORS[floorOf(t)]!.name})`),
    );
    expect(upward).toEqual([]);
  });

  it('has an entry file in every folder whose first two lines say what lives there', () => {
    const folders = [...new Set(sources.map((f) => path.posix.dirname(f.rel)).filter((d) => d !== '.'))].sort();
    expect(folders.filter((d) => !(d in FOLDER_ENTRIES))).toEqual([]);
    const unsaid = Object.entries(FOLDER_ENTRIES).filter(([folder, entry]) => {
      const lines = (sources.find((f) => f.rel === `${folder}/${entry}`)?.source.text ?? '').split('\n');
      return !(lines[0]!.startsWith(`// gateway/${folder}/: `) && lines[0]!.length > 40 && /^\/\/ \S/.test(lines[1] ?? ''));
    });
    expect(unsaid.map(([folder, entry]) => `${folder}/${entry}`)).toEqual([]);
  });

  it('lists every top folder of gateway/ in docs/layout.md', () => {
    const layout = readFileSync(path.resolve(gateway, '../docs/layout.md'), 'utf8');
    const tops = [...new Set(sources.map((f) => f.rel.split('/')).filter((parts) => parts.length > 1).map((parts) => parts[0]!))].sort();
    expect(tops.length).toBeGreaterThan(20);
    expect(tops.filter((folder) => !new RegExp(`^  ${folder}/ `, 'm').test(layout))).toEqual([]);
  });
});
