/**
 * The ops app's own error path: a source that fails unexpectedly is answered 500 with the
 * catalogue's body (no stack) and logged once, with the cause, for whoever runs the gateway.
 */
import request from 'supertest';
import { createLogger } from '../../gateway/logging';
import { createOpsApp } from '../../gateway/ops/ops-app';

describe('ops app', () => {
  it('answers an unexpected failure of /metrics 500 from the catalogue and logs its cause', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const app = createOpsApp(
      {
        readiness: async () => ({ ready: true }),
        metrics: async () => {
          throw new Error('registry exploded');
        },
        metricsContentType: 'text/plain',
      },
      logger,
    );
    const answer = await request(app).get('/metrics');
    expect(answer.status).toBe(500);
    expect(answer.body.error).toBe('internal_error');
    expect(answer.text).not.toContain('registry exploded');
    expect(answer.text).not.toMatch(/at .*\.ts:\d+/);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; path?: string; err?: { message?: string } });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ msg: 'ops request failed', path: '/metrics', err: { message: 'registry exploded' } });
  });

  it('logs nothing for a catalogued refusal (unknown path, other method)', async () => {
    const lines: string[] = [];
    const app = createOpsApp({ readiness: async () => ({ ready: false }), metrics: async () => '', metricsContentType: 'text/plain' }, createLogger('info', { write: (l: string) => lines.push(l) }));
    expect((await request(app).get('/nope')).status).toBe(404);
    expect((await request(app).post('/metrics')).status).toBe(405);
    expect((await request(app).get('/readyz')).status).toBe(503);
    expect(lines).toEqual([]);
  });
});
