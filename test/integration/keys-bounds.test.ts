/**
 * Bounded by construction (issue 23 finding 1): every list of a key record (countries: the 249
 * assigned codes, each once; addresses: 16) and every YAML document (its size, its aliases and its
 * expanded size) is bounded in one place, used by the keys file, the reader process, `keys
 * validate`, `keys import` and the key admin (admin API, console, CLI). A hostile keys file is
 * refused with one line while the gateway keeps serving.
 */
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { fixtureListings } from '../fixtures/listings';
import {
  DEFAULT_TIERS, getWithKey, keysFileText, makeTempDir, randomKeyValue, removeTempDirs, sha256Hex, startBackend, startGateway, UNLIMITED,
  writeGatewayConfig, writeListingsFile, writeTempFile, type KeySpec, type Proc,
} from '../kit/gateway-stack';
import { runKeysCliWith } from '../kit/keys-cli';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { readKeysFile } from '../../gateway/keys/keys-file';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { MAX_YAML_BYTES } from '../../gateway/config/yaml-bounds';
import { ConfigError } from '../../gateway/config/config-error';
import { ApiError } from '../../gateway/errors';
import Redis from 'ioredis';

/** A keys file of `entries` keys whose countries all alias one anchored list of `items` items. */
function aliasedFile(entries: number, items: number): string {
  const list = `[${Array.from({ length: items }, () => 'GB').join(', ')}]`;
  const lines = ['keys:'];
  for (let i = 0; i < entries; i++) {
    lines.push(`  - {id: k${i}, key_sha256: ${sha256Hex(`k${i}`)}, tier: standard, countries: ${i === 0 ? `&c ${list}` : '*c'}, address: 10.0.0.1, status: active}`);
  }
  return `${lines.join('\n')}\n`;
}

const entry = (fields: string): string => `keys:\n  - {id: one, key_sha256: ${sha256Hex('one')}, tier: standard, status: active, ${fields}}\n`;

let hostilePath: string | undefined;
/** The finding's file: 3,300 entries whose countries alias one list of 150,000 items (about 1 MB). */
const hostileFile = (): string => (hostilePath ??= writeTempFile('hostile.yaml', aliasedFile(3300, 150_000)));

const refusal = (file: string): string => {
  try {
    readKeysFile(file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message.split('\n')).toHaveLength(1);
    return (err as Error).message;
  }
  throw new Error(`${file} was accepted`);
};

afterAll(() => removeTempDirs());

describe('the keys file', () => {
  it('refuses a document whose aliases expand it far beyond its size, naming the bound', () => {
    // 600 entries naming one list of 2,000 items: 1.2 million items for 15 KB of text.
    const file = writeTempFile('aliased.yaml', aliasedFile(600, 2000));
    expect(refusal(file)).toMatch(/aliased\.yaml: refused: the document expands to more than \d+ values \(YAML aliases/);
  });

  it('accepts a shared country list named by every entry (aliases within the bound)', () => {
    const codes = ['GB', 'FR', 'DE', 'IE', 'NL', 'BE', 'ES', 'IT', 'PT', 'AT'];
    const lines = ['keys:'];
    for (let i = 0; i < 2000; i++) {
      lines.push(`  - {id: k${i}, key_sha256: ${sha256Hex(`k${i}`)}, tier: standard, countries: ${i === 0 ? `&eu [${codes.join(', ')}]` : '*eu'}, address: 10.0.0.1, status: active}`);
    }
    const entries = readKeysFile(writeTempFile('shared.yaml', `${lines.join('\n')}\n`));
    expect(entries).toHaveLength(2000);
    expect(entries[1999]!.countries).toEqual(codes);
  });

  it('refuses more countries than the 249 assigned codes, and lists each country once', () => {
    const many = `countries: [${Array.from({ length: 250 }, () => 'GB').join(', ')}], address: 10.0.0.1`;
    expect(refusal(writeTempFile('many.yaml', entry(many)))).toMatch(/keys\[0\] \(id one\): field "countries": must list at most 249 countries/);
    const repeated = readKeysFile(writeTempFile('repeated.yaml', entry('countries: [gb, GB, fr, Gb, FR], address: 10.0.0.1')));
    expect(repeated[0]!.countries).toEqual(['GB', 'FR']);
  });

  it('refuses more than 16 addresses', () => {
    const addresses = `countries: [GB], addresses: [${Array.from({ length: 17 }, (_, i) => `10.0.0.${i + 1}`).join(', ')}]`;
    expect(refusal(writeTempFile('addresses.yaml', entry(addresses)))).toMatch(/field "addresses": must list at most 16/);
  });

  it('refuses a file larger than the bound before reading it', () => {
    const file = path.join(makeTempDir(), 'huge.yaml');
    fs.writeFileSync(file, 'keys: []\n');
    fs.truncateSync(file, MAX_YAML_BYTES + 1); // sparse: no disk written
    expect(refusal(file)).toBe(`${file}: is ${MAX_YAML_BYTES + 1} bytes, larger than the ${MAX_YAML_BYTES} bytes a YAML file may be`);
  });

  it('keys validate refuses the hostile file of the finding (3,300 entries aliasing 150,000 items) with one line', async () => {
    // A heap of 512 MB: the unbounded reading needed several GB and died; the bounded one needs little.
    const result = await runKeysCliWith({ NODE_OPTIONS: '--max-old-space-size=512' }, ['validate', hostileFile()]);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('expands to more than');
    expect(result.code).toBe(1);
  }, 120_000);
});

describe('the key admin (admin API, console, CLI) and keys import', () => {
  let redisServer: RedisServer;
  let admin: ReturnType<typeof createKeyAdmin>;
  let redis: Redis;

  beforeAll(async () => {
    redisServer = await startRedis();
    redis = new Redis(redisServer.url);
    admin = createKeyAdmin(redis, loadGatewayConfig(writeGatewayConfig()));
  });
  afterAll(async () => {
    redis?.disconnect();
    await redisServer?.stop();
  });

  const refusedWith = async (work: Promise<unknown>): Promise<ApiError> => {
    const err = await work.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  };

  it('refuses 5,000 x "GB" on create and on change, and lists a country once', async () => {
    const countries = Array.from({ length: 5000 }, () => 'GB');
    const created = await refusedWith(admin.create({ id: 'big', tier: 'standard', countries, address: '10.0.0.1' }));
    expect(created.message).toMatch(/^countries: must list at most 249 countries/);
    await admin.create({ id: 'small', tier: 'standard', countries: ['gb', 'GB', 'fr'], address: '10.0.0.1' });
    expect((await admin.show('small')).countries).toEqual(['GB', 'FR']);
    const changed = await refusedWith(admin.set('small', { countries }));
    expect(changed.message).toMatch(/^countries: must list at most 249 countries/);
    expect((await admin.set('small', { countries: ['de', 'DE'] })).countries).toEqual(['DE']);
  });

  it('keys import refuses the hostile file with one line before writing anything', async () => {
    const err = await admin.import(writeTempFile('hostile-import.yaml', aliasedFile(600, 2000))).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('expands to more than');
    expect((await admin.list()).keys.map((k) => k.id)).toEqual(['small']);
  });
});

describe('a running gateway', () => {
  const steady: KeySpec = { id: 'steady', value: randomKeyValue('steady'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
  let backend: Proc;
  let gateway: Proc;
  let keysFile: string;

  beforeAll(async () => {
    backend = await startBackend(writeListingsFile(fixtureListings()));
    const dir = makeTempDir();
    keysFile = writeTempFile('keys.yaml', keysFileText([steady]), dir);
    gateway = await startGateway({ backendUrl: backend.url, keysFile, gatewayConfig: writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS }), dir) });
  }, 30_000);
  afterAll(async () => {
    await gateway?.stop();
    await backend?.stop();
  });

  it('refuses the hostile file renamed over KEYS_FILE with one line and keeps serving throughout', async () => {
    const before = gateway.output.length;
    let running = true;
    const statuses: number[] = [];
    const load = (async () => {
      while (running) statuses.push((await getWithKey(gateway.url, '/v1/ping', steady.value)).status);
    })();
    // Under 1 MiB, as in the finding: read in the gateway's own thread.
    const hostile = aliasedFile(3000, 120_000);
    expect(Buffer.byteLength(hostile)).toBeLessThan(1024 * 1024);
    fs.writeFileSync(`${keysFile}.tmp`, hostile);
    fs.renameSync(`${keysFile}.tmp`, keysFile);
    const refused = (): string | undefined => gateway.output.slice(before).find((l) => l.includes('configuration refused'));
    const deadline = Date.now() + 60_000;
    while (!refused() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    running = false;
    await load;
    expect(refused()).toContain('expands to more than');
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect((await getWithKey(gateway.url, '/v1/ping', steady.value)).status).toBe(200);
  }, 90_000);
});
