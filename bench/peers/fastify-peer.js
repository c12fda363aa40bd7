// The peer a Node team would write instead of the gateway: Fastify, an API key looked up by its
// sha256 in an onRequest hook, @fastify/rate-limit with one per-key minute window on the same
// Redis, @fastify/reply-from passing the data service's page through as bytes (undici), and one
// access-log line per request (pino, Fastify's own logger). It checks one window and reshapes
// nothing: the comparison is what a team sees when it weighs the gateway against this.
//
// KEYS_FILE: JSON array of {id, key_sha256}; REDIS_URL; TARGET_URL (the data service).
'use strict';
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const Fastify = require('fastify');
const Redis = require('ioredis');

const keys = new Map(JSON.parse(readFileSync(process.env.KEYS_FILE, 'utf8')).map((k) => [k.key_sha256, k.id]));
const app = Fastify({ logger: { level: 'info' }, disableRequestLogging: true });

app.decorateRequest('keyId', '');
app.addHook('onRequest', (req, reply, done) => {
  const given = req.headers['x-api-key'];
  const id = typeof given === 'string' ? keys.get(createHash('sha256').update(given).digest('hex')) : undefined;
  if (id === undefined) {
    reply.code(401).send({ error: 'unauthorized', message: 'A valid API key is required.' });
    return;
  }
  req.keyId = id;
  done();
});
app.addHook('onResponse', (req, reply, done) => {
  app.log.info({ reqId: req.id, method: req.method, url: req.url, status: reply.statusCode, key_id: req.keyId, ms: reply.elapsedTime }, 'answered');
  done();
});

app.register(require('@fastify/rate-limit'), {
  global: true,
  hook: 'preHandler', // after the key is known (onRequest above)
  max: 1_000_000_000,
  timeWindow: 60_000,
  redis: new Redis(process.env.REDIS_URL, { enableAutoPipelining: true }),
  nameSpace: 'peer-rl-',
  keyGenerator: (req) => req.keyId,
});
app.register(require('@fastify/reply-from'), { base: process.env.TARGET_URL, undici: { connections: 128, pipelining: 1 } });

// Registered after the plugins, so rate-limit's onRoute hook sees the route; reply-from's own
// per-request lines are below the route's log level: the one access line is the onResponse hook's.
app.register(async (scope) => {
  scope.get('/v1/properties', { logLevel: 'warn' }, (req, reply) => {
    const q = req.url.indexOf('?');
    reply.from(`/internal/v1/listings${q < 0 ? '' : req.url.slice(q)}`);
  });
});

app.listen({ port: 0, host: '127.0.0.1' }).then(() => {
  process.stderr.write(`${JSON.stringify({ msg: 'listening', port: app.server.address().port })}\n`);
});
process.on('SIGTERM', () => {
  app.close().then(() => process.exit(0));
});
