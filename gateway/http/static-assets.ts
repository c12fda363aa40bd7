import fs from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import { findRepoRoot } from '../repo-root';

/** A static file served under a name: its path from the repository's root, and its media type. */
export interface StaticAsset {
  readonly file: string;
  readonly type: string;
}

export const CSS = 'text/css; charset=utf-8';
export const JAVASCRIPT = 'text/javascript; charset=utf-8';

/**
 * `GET …/:name` for a fixed set of files (the console's and the portal's stylesheets and script),
 * read once at start-up from the repository (they are not compiled); any other name is 404.
 * Cached privately for five minutes.
 */
export function serveStaticAssets(assets: Readonly<Record<string, StaticAsset>>): RequestHandler {
  const root = findRepoRoot(__dirname);
  const files = new Map(Object.entries(assets).map(([name, a]) => [name, { body: fs.readFileSync(path.join(root, a.file)), type: a.type }]));
  return function staticAsset(req, res) {
    const asset = files.get(req.params.name as string);
    if (!asset) throw new ApiError('not_found');
    res.set('Cache-Control', 'private, max-age=300').type(asset.type).send(asset.body);
  };
}
