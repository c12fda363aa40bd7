import fs from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { ApiError } from '../../gateway/errors';
import { CSS, JAVASCRIPT, serveStaticAssets } from '../../gateway/http/static-assets';

// The console's and the portal's static files: the named files as they are in the repository, with
// their media type and a private cache; any other name is 404 (the app's error answer).
const app = express();
app.get('/assets/:name', serveStaticAssets({
  'console.css': { file: 'gateway/console/assets/console.css', type: CSS },
  'console.js': { file: 'gateway/console/assets/console.js', type: JAVASCRIPT },
  'portal.css': { file: 'gateway/portal/assets/portal.css', type: CSS },
}));
app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
  res.status(err instanceof ApiError ? err.status : 500).json({ error: err instanceof ApiError ? err.code : 'internal_error' });
});

const repoFile = (file: string): string => fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8');

it.each([
  ['console.css', 'gateway/console/assets/console.css', 'text/css'],
  ['console.js', 'gateway/console/assets/console.js', 'text/javascript'],
  ['portal.css', 'gateway/portal/assets/portal.css', 'text/css'],
])('%s: the repository file, its type, a private cache', async (name, file, type) => {
  const a = await request(app).get(`/assets/${name}`);
  expect(a.status).toBe(200);
  expect(a.headers['content-type']).toBe(`${type}; charset=utf-8`);
  expect(a.headers['cache-control']).toBe('private, max-age=300');
  expect(a.text).toBe(repoFile(file));
});

it.each(['nope.css', '..%2Fconsole-app.ts', 'constructor', '__proto__'])('%s: 404', async (name) => {
  const a = await request(app).get(`/assets/${name}`);
  expect(a.status).toBe(404);
  expect(a.body).toEqual({ error: 'not_found' });
});
