/**
 * The repository stands alone: no file of it reads, links or cites a document kept outside it (the
 * interface's rules are told in its own docs/ and openapi/). Walks every text file but
 * node_modules, dist, .git and bench/results/tmp.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../kit/processes';

const SKIP = new Set(['node_modules', 'dist', '.git', 'tmp']);
const TEXT = /\.(ts|js|mjs|cjs|md|ya?ml|json|sh|html|css|txt)$|^(Dockerfile|run)$/;
/** Spelled in pieces, so this file does not find itself. */
const OUTSIDE = [['..', '/shared'], ['CONTR', 'ACT part'], ['CONTR', 'ACT.md'], ['interface', '-spec']].map((p) => p.join(''));

function* files(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else if (TEXT.test(entry.name)) yield full;
  }
}

test('no file names a document outside the repository', () => {
  const found: string[] = [];
  let seen = 0;
  for (const file of files(ROOT)) {
    seen++;
    const text = fs.readFileSync(file, 'utf8');
    for (const needle of OUTSIDE) if (text.includes(needle)) found.push(`${path.relative(ROOT, file)}: ${needle}`);
  }
  expect(seen).toBeGreaterThan(300);
  expect(found).toEqual([]);
});
