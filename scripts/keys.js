#!/usr/bin/env node
/*
 * Runs the keys CLI from its compiled form (dist/scripts/keys-cli.js), rebuilding first only when
 * a TypeScript source or the tsconfig is newer than the last build. A call then costs one Node
 * start-up (~0.15 s), not a TypeScript build (2-3 s). Plain JavaScript on purpose: it must run
 * before anything is compiled.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const ENTRY = path.join(ROOT, 'dist', 'scripts', 'keys-cli.js');
const BUILD_INFO = path.join(ROOT, 'dist', '.tsbuildinfo');
/** The folders tsconfig.json compiles (its "include"), less what it excludes (the client package's own build). */
const SOURCE_DIRS = ['gateway', 'backend-mock', 'scripts', 'client'];
const EXCLUDED_DIRS = new Set([path.join(ROOT, 'client', 'dist')]);

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

/** True when a source is newer than the last build (or there is no build). */
function isStale() {
  const built = mtime(BUILD_INFO);
  if (built < 0 || mtime(ENTRY) < 0) return true;
  if (mtime(path.join(ROOT, 'tsconfig.json')) > built) return true;
  const pending = SOURCE_DIRS.map((d) => path.join(ROOT, d));
  while (pending.length) {
    const dir = pending.pop();
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      // client/dist's .d.ts files are newer than every build after `npm run client:pack`, and tsc
      // does not rewrite its build info when nothing changed: counted, they would rebuild on every call.
      if (entry.name === 'node_modules' || EXCLUDED_DIRS.has(full)) continue;
      if (entry.isDirectory()) pending.push(full);
      else if (entry.name.endsWith('.ts') && mtime(full) > built) return true;
    }
  }
  return false;
}

function rebuild() {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  } catch {
    // An install without dev dependencies (a container image) runs the build it was given.
    if (mtime(ENTRY) >= 0) return true;
    process.stderr.write('keys: no compiled CLI (dist/) and no TypeScript to build it: run npm install && npm run build\n');
    return false;
  }
  process.stderr.write('keys: sources changed since the last build; compiling (once)…\n');
  // tsc's report goes to stderr: stdout carries the command's answer (a key value, JSON).
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.json')], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    // A failed build still writes its build info: make sure the next call tries again.
    try {
      fs.utimesSync(BUILD_INFO, 0, 0);
    } catch {
      /* no build info: the next call rebuilds anyway */
    }
    process.stderr.write('keys: the TypeScript build failed (above); fix it or run npm run build\n');
    return false;
  }
  return true;
}

if (isStale() && !rebuild()) process.exitCode = 1;
else require(ENTRY);
