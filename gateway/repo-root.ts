import fs from 'node:fs';
import path from 'node:path';

/** What only the repository root holds beside its package.json: the public OpenAPI document. */
const MARKER = path.join('openapi', 'openapi.yaml');

/**
 * The repository root: the nearest ancestor of `startDir` holding both `package.json` and
 * `openapi/openapi.yaml`. Works from the TypeScript source (gateway/, under jest) and
 * from the compiled file (dist/gateway/), even if a `package.json` is copied into dist.
 */
export function findRepoRoot(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, MARKER))) {
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`cannot find the repository root (a directory with package.json and ${MARKER}) above ${startDir}`);
    }
    dir = parent;
  }
}
