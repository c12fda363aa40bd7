import fs from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import { findRepoRoot } from '../repo-root';

/** The console's only static files (no inline script or style: the CSP allows neither). */
const ASSETS: Record<string, string> = { 'console.css': 'text/css; charset=utf-8', 'console.js': 'text/javascript; charset=utf-8' };

/**
 * `GET /console/assets/:name`: the asset files, read once at start-up from the repository (they are
 * not compiled); any other name is 404.
 */
export function serveAssets(): RequestHandler {
  const dir = path.join(findRepoRoot(__dirname), 'gateway', 'console', 'assets');
  const files = new Map(Object.keys(ASSETS).map((name) => [name, fs.readFileSync(path.join(dir, name))]));
  return function consoleAsset(req, res) {
    const name = req.params.name as string;
    const body = files.get(name);
    if (!body) throw new ApiError('not_found');
    res.set('Cache-Control', 'private, max-age=300').type(ASSETS[name]!).send(body);
  };
}
