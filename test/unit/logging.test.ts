import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { generateKeyValue } from '../../gateway/keys/key-format';
import { createLogger, loggableUrl } from '../../gateway/logging';

describe('loggableUrl: only what is valid for the route is logged as sent', () => {
  const own = 'imported-key-value-0123456789';

  it('keeps the known filters with valid values, redacts the cursor, bad values and anything unknown', () => {
    expect(loggableUrl('/v1/properties?country=GB&limit=5&cursor=abc.def&api_key=x')).toBe('/v1/properties?country=GB&limit=5&cursor=[redacted]&[redacted]');
    expect(loggableUrl('/v1/properties?country=GBR&listing_type=sale&property_type=villa&limit=1e3')).toBe(
      '/v1/properties?country=[redacted]&listing_type=sale&property_type=[redacted]&limit=[redacted]',
    );
    expect(loggableUrl(`/v1/properties?%63ountry=GB&country=${own}&${own}&__proto__=1&constructor`)).toBe(
      '/v1/properties?[redacted]&country=[redacted]&[redacted]&[redacted]&[redacted]',
    );
  });

  it('keeps the surface\'s words; a path parameter only when the answer was a success and it is written plainly', () => {
    const generated = generateKeyValue();
    expect(loggableUrl('/v1/properties/gb-00042?country=GB', true)).toBe('/v1/properties/gb-00042?country=GB');
    expect(loggableUrl('/v1/properties/gb-00042?country=GB', false)).toBe('/v1/properties/[redacted]?country=GB');
    expect(loggableUrl(`/v1/properties/${own}`)).toBe('/v1/properties/[redacted]');
    expect(loggableUrl(`/v1/properties/%69${own.slice(1)}`, true)).toBe('/v1/properties/[redacted]');
    expect(loggableUrl(`/v1/insights/a/%2569${own.slice(1)}`)).toBe('/v1/insights/[redacted]/[redacted]');
    expect(loggableUrl(`/v1/properties/${generated}`)).toBe('/v1/properties/[redacted]');
    expect(loggableUrl(`/v1/ping/${generated}/x`)).toBe('/v1/ping/[redacted]/[redacted]');
    expect(loggableUrl('/docs/assets/swagger-ui.css', true)).toBe('/docs/assets/swagger-ui.css');
    expect(loggableUrl('/docs/assets/other.js')).toBe('/docs/assets/[redacted]');
  });

  it('bounds a long path or query without keeping any part of an unknown segment', () => {
    const logged = loggableUrl(`/${'a/'.repeat(500)}${own}?${'x=1&'.repeat(100)}`);
    expect(logged).not.toContain(own.slice(0, 8));
    expect(logged.length).toBeLessThan(600);
  });
});

describe('the process logger: an error is logged without the Redis command it failed on', () => {
  it('drops the arguments ioredis attaches to a failed command (key names holding a hash, records), at any depth', async () => {
    const secret = 'lgw:hash:0123456789abcdef-record-with-hash';
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const refused = Object.assign(new Error('NOPERM this user has no permissions to run the \'set\' command'), { command: { name: 'set', args: [secret, '{}'] } });
    const wrapped = Object.assign(new Error('Failed to refresh slots cache.'), { lastNodeError: refused });
    logger.error({ err: refused }, 'admin request failed');
    logger.error({ err: wrapped }, 'admin request failed');
    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toContain(secret);
    const [first, second] = lines.map((l) => JSON.parse(l) as { err: { message: string; stack: string; lastNodeError: { message: string } } });
    expect(first!.err.message).toMatch(/^NOPERM/);
    expect(first!.err.stack).toContain('NOPERM');
    expect(second!.err.lastNodeError.message).toMatch(/^NOPERM/);
  });
});

describe('batchedStdout: lines wait at most LOG_FLUSH_MS, and an exit does not lose them', () => {
  const LOGGING = path.join(__dirname, '../../dist/gateway/logging.js');

  /** Runs a script in a process with the built logger as `createLogger`; its stdout lines. */
  function run(script: string): string[] {
    const child = spawnSync(process.execPath, ['-e', `const { createLogger } = require(${JSON.stringify(LOGGING)});\n${script}`], { encoding: 'utf8', timeout: 10_000 });
    return child.stdout.split('\n').filter(Boolean);
  }

  it('writes a short line within the flush interval (seen before a SIGKILL 300 ms later)', () => {
    const lines = run(`createLogger('info').info('pending line');
      setTimeout(() => process.kill(process.pid, 'SIGKILL'), 300);`);
    expect(lines.some((l) => l.includes('"msg":"pending line"'))).toBe(true);
  });

  it('writes what is pending when the process dies of an uncaught error', () => {
    const lines = run(`const logger = createLogger('info');
      logger.info('before the crash');
      setTimeout(() => { throw new Error('boom'); }, 10);`);
    expect(lines.some((l) => l.includes('"msg":"before the crash"'))).toBe(true);
  });
});
