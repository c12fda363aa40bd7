/** Temporary directories and files of a test file, removed by `removeTempDirs` (call it in afterAll). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tempDirs: string[] = [];

/** A fresh directory under os.tmpdir(), removed by `removeTempDirs` (call it in afterAll). A Stack keeps its own. */
export function makeTempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-it-'));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export function writeTempFile(name: string, text: string, dir = makeTempDir()): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}
