/**
 * deploy/kubernetes: the kustomize base and the example overlay render with `kubectl kustomize`;
 * every object validates offline against the Kubernetes schemas (kubernetes-models, run by
 * deploy-schemas.mjs); the probes, Services, ServiceMonitor, disruption budget and autoscaler point
 * at what the Deployment runs; a real gateway started with the rendered Deployment's environment and
 * ConfigMap serves the probe paths on the probed port; the termination grace exceeds preStop plus
 * the gateway's measured drain; every secret the gateway reads is referenced, never written inline.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  DEFAULT_TIERS, makeTempDir, randomKeyValue, removeTempDirs, send, startGateway, startStub, writeGatewayConfig, writeKeysFile, type Stub,
} from '../kit/gateway-stack';
import { ROOT, startProcess, type RunningProcess } from '../kit/processes';
import { freePort, startRedis, type RedisServer } from '../kit/redis-server';

const BASE = path.join(ROOT, 'deploy/kubernetes/base');
const OVERLAY = path.join(ROOT, 'deploy/kubernetes/overlays/example');

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: unknown };
}
interface Port {
  name?: string;
  containerPort?: number;
  port?: number;
  targetPort?: string | number;
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  name: string;
  ports: Port[];
  env: EnvVar[];
  readinessProbe: Probe;
  livenessProbe: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  volumeMounts: Array<{ name: string; mountPath: string }>;
}
interface Volume {
  name: string;
  configMap?: { name: string };
  secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
  emptyDir?: object;
}
/** The fields these tests read; the schemas check the rest. */
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec: {
    selector?: { matchLabels?: Record<string, string> } & Record<string, string>;
    ports?: Port[];
    template?: { metadata: { labels: Record<string, string> }; spec: { containers: Container[]; volumes: Volume[]; terminationGracePeriodSeconds: number } };
    scaleTargetRef?: { kind: string; name: string };
    endpoints?: Array<{ port: string; path: string }>;
  };
}

function render(dir: string): K8sObject[] {
  const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  if (run.error) throw new Error(`kubectl is needed to render deploy/kubernetes (${run.error.message})`);
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${run.stderr}`);
  if (run.stderr.trim()) throw new Error(`kubectl kustomize ${dir} warned:\n${run.stderr}`);
  return parseAllDocuments(run.stdout).map((d) => d.toJS() as K8sObject);
}

function validate(objects: readonly object[]): Array<{ name: string; error: string | null }> {
  const out = execFileSync(process.execPath, [path.join(__dirname, 'deploy-schemas.mjs')], { input: JSON.stringify(objects), encoding: 'utf8', cwd: ROOT });
  return JSON.parse(out) as Array<{ name: string; error: string | null }>;
}

const one = (objects: K8sObject[], kind: string, name?: string): K8sObject => {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0]!;
};
const gatewayContainer = (objects: K8sObject[]): Container => one(objects, 'Deployment').spec.template!.spec.containers.find((c) => c.name === 'gateway')!;
const envValue = (c: Container, name: string): string | undefined => c.env.find((e) => e.name === name)?.value;
const portNumber = (c: Container, name: string | number): number => (typeof name === 'number' ? name : c.ports.find((p) => p.name === name)!.containerPort!);
const matches = (selector: Record<string, string>, labels: Record<string, string>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);

/**
 * The secrets the gateway reads: every variable of its configuration schemas (gateway/config/*.ts)
 * whose name says secret, password, token or user name, and the portal's client secret.
 */
function secretVariables(): string[] {
  const dir = path.join(ROOT, 'gateway/config');
  const names = new Set(['PORTAL_OIDC_CLIENT_SECRET']);
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/^\s+([A-Z][A-Z0-9_]*(?:SECRETS?|PASSWORD|TOKEN|TOKENS_FILE|USERNAME))\??:/gm)) names.add(m[1]!);
  }
  return [...names].sort();
}
/** Every source file of gateway/, as one text (to look variable names up in). */
function gatewaySource(): string {
  const dir = path.join(ROOT, 'gateway');
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
}

interface NetworkPolicyPeer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: unknown;
}
interface NetworkPolicySpec {
  podSelector: { matchLabels: Record<string, string> };
  policyTypes: string[];
  ingress: Array<{ from?: NetworkPolicyPeer[]; ports?: Array<{ port: string | number }> }>;
}

/** Features the base leaves off (their secrets come with them, in the overlay). */
const offInBase = (name: string): boolean => name.startsWith('PORTAL_') || name.startsWith('WEBHOOK_') || name.startsWith('STRIPE_');

describe.each([
  ['base', BASE],
  ['overlay', OVERLAY],
])('the %s', (which, dir) => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = render(dir);
  });

  test('renders with kubectl kustomize: a Deployment, Services, a PodDisruptionBudget, an autoscaler, the ConfigMap, a ServiceMonitor, a NetworkPolicy', () => {
    const kinds = objects.map((o) => o.kind).sort();
    expect(new Set(kinds)).toEqual(new Set(['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'ServiceMonitor']));
  });

  test('a NetworkPolicy opens the public ports to anyone and the admin and ops listeners only to named peers; no service account token', () => {
    const template = one(objects, 'Deployment').spec.template!;
    expect((template.spec as { automountServiceAccountToken?: boolean }).automountServiceAccountToken).toBe(false);
    const policy = one(objects, 'NetworkPolicy').spec as unknown as NetworkPolicySpec;
    expect(matches(policy.podSelector.matchLabels, template.metadata.labels)).toBe(true);
    expect(policy.policyTypes).toContain('Ingress');
    // A rule without ports opens every port: none here.
    expect(policy.ingress.filter((r) => !r.ports?.length)).toEqual([]);
    // The overlay also serves the portal and the providers' listener (Stripe and GitHub reach it from the internet; signatures guard it).
    const publicPorts = which === 'base' ? ['http'] : ['http', 'portal', 'hooks'];
    const open = policy.ingress.filter((r) => !r.from?.length).flatMap((r) => r.ports!.map((p) => p.port));
    expect(open.sort()).toEqual([...publicPorts].sort());
    for (const listener of ['admin', 'ops']) {
      const rules = policy.ingress.filter((r) => r.ports!.some((p) => p.port === listener));
      expect({ listener, rules: rules.length }).toEqual({ listener, rules: 1 });
      // Named peers only: each with a selector that names labels (an empty selector matches every pod), no address block.
      for (const peer of rules[0]!.from ?? []) {
        expect(peer.ipBlock).toBeUndefined();
        expect(Object.keys(peer.podSelector?.matchLabels ?? {}).length + Object.keys(peer.namespaceSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
        if (peer.podSelector) expect(Object.keys(peer.podSelector.matchLabels ?? {}).length).toBeGreaterThan(0);
        if (peer.namespaceSelector) expect(Object.keys(peer.namespaceSelector.matchLabels ?? {}).length).toBeGreaterThan(0);
      }
      expect(rules[0]!.from?.length).toBeGreaterThan(0);
    }
    // Every listener of the container is reachable by some rule.
    const allowed = new Set(policy.ingress.flatMap((r) => r.ports!.map((p) => p.port)));
    expect(gatewayContainer(objects).ports.map((p) => p.name).filter((n) => !allowed.has(n!))).toEqual([]);
  });

  test('every variable the Deployment sets is one the gateway reads; TRUST_PROXY names no range wider than a /24 (or an IPv6 /64)', () => {
    const c = gatewayContainer(objects);
    const source = gatewaySource();
    expect(c.env.map((e) => e.name).filter((name) => !new RegExp(`\\b${name}\\b`).test(source))).toEqual([]);
    const trusted = (envValue(c, 'TRUST_PROXY') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    if (which === 'overlay') expect(trusted.length).toBeGreaterThan(0);
    for (const entry of trusted) {
      const [address, bits] = entry.split('/');
      const widest = address!.includes(':') ? 64 : 24;
      expect({ entry, wideEnough: bits === undefined || Number(bits) >= widest }).toEqual({ entry, wideEnough: true });
    }
  });

  test('every object validates against the Kubernetes schemas (offline)', () => {
    const results = validate(objects);
    expect(results.length).toBe(objects.length);
    expect(results.filter((r) => r.error !== null)).toEqual([]);
  });

  test('the probes, listeners, Services, ServiceMonitor, budget and autoscaler fit together', () => {
    const deployment = one(objects, 'Deployment');
    const template = deployment.spec.template!;
    const c = gatewayContainer(objects);
    // Probes: /readyz and /healthz on the ops listener, which listens on every interface of the pod.
    expect([c.readinessProbe.httpGet.path, c.livenessProbe.httpGet.path]).toEqual(['/readyz', '/healthz']);
    expect(portNumber(c, c.readinessProbe.httpGet.port)).toBe(Number(envValue(c, 'OPS_PORT')));
    expect(portNumber(c, c.livenessProbe.httpGet.port)).toBe(Number(envValue(c, 'OPS_PORT')));
    expect([envValue(c, 'HOST'), envValue(c, 'OPS_HOST'), envValue(c, 'ADMIN_HOST')]).toEqual(['0.0.0.0', '0.0.0.0', '0.0.0.0']);
    expect([portNumber(c, 'http'), portNumber(c, 'admin')]).toEqual([Number(envValue(c, 'PORT')), Number(envValue(c, 'ADMIN_PORT'))]);
    expect(envValue(c, 'GATEWAY_WORKERS')).toBe('1');
    // Every Service selects the gateway's pods and targets a named port of its container.
    for (const service of objects.filter((o) => o.kind === 'Service')) {
      expect(matches(service.spec.selector as Record<string, string>, template.metadata.labels)).toBe(true);
      for (const p of service.spec.ports!) expect(c.ports.map((cp) => cp.name)).toContain(p.targetPort);
    }
    const pdb = one(objects, 'PodDisruptionBudget');
    expect(matches(pdb.spec.selector!.matchLabels!, template.metadata.labels)).toBe(true);
    expect(one(objects, 'HorizontalPodAutoscaler').spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: deployment.metadata.name });
    // The ServiceMonitor scrapes /metrics on the ops port of the Service it selects.
    const monitor = one(objects, 'ServiceMonitor');
    const scraped = objects.filter((o) => o.kind === 'Service' && matches(monitor.spec.selector!.matchLabels!, o.metadata.labels ?? {}));
    expect(scraped.length).toBe(1);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'ops', path: '/metrics' })]);
    expect(scraped[0]!.spec.ports!.map((p) => p.name)).toContain('ops');
    // GATEWAY_CONFIG is the rendered ConfigMap's file, mounted.
    const configVolume = template.spec.volumes.find((v) => v.configMap)!;
    const mount = c.volumeMounts.find((m) => m.name === configVolume.name)!;
    const configMap = one(objects, 'ConfigMap', configVolume.configMap!.name);
    expect(path.dirname(envValue(c, 'GATEWAY_CONFIG')!)).toBe(mount.mountPath);
    expect(Object.keys(configMap.data!)).toContain(path.basename(envValue(c, 'GATEWAY_CONFIG')!));
    // The portal listens only where the overlay turns it on, on the port named `portal`.
    if (which === 'base') expect(envValue(c, 'PORTAL_PORT')).toBeUndefined();
    else {
      expect(portNumber(c, 'portal')).toBe(Number(envValue(c, 'PORTAL_PORT')));
      expect(envValue(c, 'PORTAL_HOST')).toBe('0.0.0.0');
    }
    // The providers' listener likewise, on the port named `hooks`.
    if (which === 'base') expect(envValue(c, 'HOOKS_PORT')).toBeUndefined();
    else {
      expect(portNumber(c, 'hooks')).toBe(Number(envValue(c, 'HOOKS_PORT')));
      expect(envValue(c, 'HOOKS_HOST')).toBe('0.0.0.0');
    }
  });

  test('every secret the gateway reads is referenced (a Secret key, or a file from a Secret volume), none written inline', () => {
    const c = gatewayContainer(objects);
    const volumes = one(objects, 'Deployment').spec.template!.spec.volumes;
    const secretMounts = c.volumeMounts.filter((m) => volumes.find((v) => v.name === m.name)?.secret).map((m) => m.mountPath);
    const referenced = (name: string): boolean => {
      const e = c.env.find((v) => v.name === name);
      if (!e) return false;
      if (name.endsWith('_FILE')) return e.value !== undefined && secretMounts.includes(path.dirname(e.value));
      return e.value === undefined && e.valueFrom?.secretKeyRef !== undefined;
    };
    const wanted = secretVariables().filter((n) => which === 'overlay' || !offInBase(n));
    expect(wanted).toEqual(expect.arrayContaining(['ADMIN_TOKEN', 'ADMIN_TOKENS_FILE', 'CURSOR_SECRET', 'INSIGHTS_IDENTITY_SECRET', 'REDIS_PASSWORD', 'REDIS_USERNAME']));
    expect(wanted.filter((n) => !referenced(n))).toEqual([]);
    // Shared by every pod, so required: a cursor from one pod opens on another.
    expect(c.env.find((e) => e.name === 'CURSOR_SECRET')!.valueFrom!.secretKeyRef!.optional).toBeUndefined();
  });
});

test('the Dockerfile takes its base image as one build argument, so it can be pinned by digest', () => {
  const lines = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').split('\n');
  const froms = lines.filter((l) => /^FROM\s/i.test(l));
  expect(froms.length).toBeGreaterThan(0);
  for (const from of froms) expect(from).toMatch(/^FROM \$\{NODE_IMAGE\}( AS \w+)?$/);
  const arg = lines.findIndex((l) => /^ARG NODE_IMAGE=\S+$/.test(l));
  expect(arg).toBeGreaterThanOrEqual(0);
  expect(arg).toBeLessThan(lines.findIndex((l) => /^FROM\s/i.test(l)));
  // The CI's container check makes the base images itself, from the names it reads here: a
  // Dockerfile it cannot read stops that check (as the move to ARG NODE_IMAGE once did).
  const images = execFileSync('bash', [path.join(ROOT, 'scripts/containers-check.sh'), '--images'], { cwd: ROOT, encoding: 'utf8' });
  expect(images.trim()).toBe(`${lines[arg]!.slice('ARG NODE_IMAGE='.length)} ${/image: *(redis:\S+)/.exec(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'))![1]}`);
  expect(images).toMatch(/^node:\d+-[a-z]+-slim redis:[0-9.]+-[a-z]+\n$/);
});

test('the schema check can fail: a wrong field type is refused', () => {
  const objects = render(BASE);
  const deployment = structuredClone(one(objects, 'Deployment'));
  (deployment.spec.template!.spec.containers[0]!.ports[0] as { containerPort: unknown }).containerPort = 'eighty';
  expect(validate([deployment])[0]!.error).toMatch(/containerPort/);
});

describe('a gateway started as the base Deployment runs it', () => {
  let redis: RedisServer;
  let data: Stub;
  let gateway: RunningProcess;
  let ports: { http: number; ops: number; admin: number };
  const adminToken = randomBytes(24).toString('hex');

  beforeAll(async () => {
    [redis, data] = await Promise.all([startRedis(), startStub((_req, res) => res.end('{}'))]);
    const objects = render(BASE);
    const c = gatewayContainer(objects);
    const volumes = one(objects, 'Deployment').spec.template!.spec.volumes;
    // The Secrets an operator would create, and the files the volumes would hold, in a temp dir per mount.
    const secretValues: Record<string, string> = {
      'cursor-secret': randomBytes(32).toString('base64url'),
      'insights-identity-secret': randomBytes(32).toString('base64url'),
      'admin-token': adminToken,
    };
    const files: Record<string, Record<string, string>> = {
      'listings-gateway-admin-tokens': { 'tokens.yaml': `- name: ops-team\n  token_sha256: ${createHash('sha256').update(randomBytes(24).toString('hex')).digest('hex')}\n  role: admin\n` },
    };
    const mountDirs = new Map<string, string>();
    for (const m of c.volumeMounts) {
      const volume = volumes.find((v) => v.name === m.name)!;
      const local = makeTempDir();
      mountDirs.set(m.mountPath, local);
      const content = volume.configMap ? one(objects, 'ConfigMap', volume.configMap.name).data! : volume.secret ? files[volume.secret.secretName]! : {};
      for (const [file, text] of Object.entries(content)) fs.writeFileSync(path.join(local, file), text);
    }
    const local = (value: string): string => {
      for (const [mountPath, dir] of mountDirs) if (value.startsWith(`${mountPath}/`)) return path.join(dir, value.slice(mountPath.length + 1));
      return value;
    };
    ports = { http: await freePort(), ops: await freePort(), admin: await freePort() };
    const env: Record<string, string> = {};
    for (const e of c.env) {
      const ref = e.valueFrom?.secretKeyRef;
      if (ref) {
        const v = secretValues[ref.key];
        if (v === undefined && !ref.optional) throw new Error(`no test value for the required secret key ${ref.key}`);
        if (v !== undefined) env[e.name] = v;
      } else env[e.name] = local(e.value!);
    }
    // The operator's services (named by URL) and this machine's free ports; the rest as rendered.
    Object.assign(env, { REDIS_URL: redis.url, BACKEND_URL: data.url, PORT: String(ports.http), OPS_PORT: String(ports.ops), ADMIN_PORT: String(ports.admin) });
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['CURSOR_SECRET', 'ADMIN_TOKEN', 'ADMIN_TOKENS_FILE', 'GATEWAY_CONFIG', 'KEY_STORE']));
    gateway = await startProcess('gateway/main.js', env, 30_000);
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([redis?.stop(), data?.close()]);
    removeTempDirs();
  });

  test('the probe paths answer on the probed port; /metrics, the public and admin listeners too', async () => {
    const ops = `http://127.0.0.1:${ports.ops}`;
    const deadline = Date.now() + 20_000;
    let ready = 0;
    while (Date.now() < deadline && ready !== 200) {
      ready = (await fetch(`${ops}/readyz`)).status;
      if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ready).toBe(200);
    expect(await (await fetch(`${ops}/healthz`)).json()).toEqual({ status: 'ok' });
    const metrics = await fetch(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('gateway_redis_up 1');
    expect((await send(`http://127.0.0.1:${ports.http}`, '/v1/ping')).status).toBe(401);
    // The admin API answers the token from the Secret.
    const keys = await fetch(`http://127.0.0.1:${ports.admin}/admin/keys`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(keys.status).toBe(200);
    expect(gateway.output.filter((l) => /"level":(50|60)|"level":"(error|fatal)"/.test(l))).toEqual([]);
  }, 30_000);
});

test('the termination grace exceeds preStop plus the gateway\'s drain, measured with a request held in flight', async () => {
  const objects = render(OVERLAY);
  const template = one(objects, 'Deployment').spec.template!;
  const preStop = gatewayContainer(objects).lifecycle!.preStop!.exec!.command;
  expect(preStop[0]).toBe('sleep');
  const preStopSeconds = Number(preStop[1]);

  // A data service that never answers, and an upstream timeout longer than any drain.
  const stuck = await startStub(() => undefined);
  const dir = makeTempDir();
  const value = randomKeyValue('drain');
  const gw = await startGateway({
    backendUrl: stuck.url,
    keysFile: writeKeysFile([{ id: 'drain', value, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }], dir),
    gatewayConfig: writeGatewayConfig(DEFAULT_TIERS, dir),
    env: { UPSTREAM_TIMEOUT_MS: '120000' },
  });
  try {
    const held = send(gw.url, '/v1/properties?country=GB&limit=1', { headers: { 'x-api-key': value }, timeoutMs: 120_000 }).catch(() => undefined);
    const deadline = Date.now() + 10_000;
    while (stuck.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(stuck.requests.length).toBe(1);
    const signalled = Date.now();
    // Not the kit's stop(): it kills after 5 s, and the drain is what is measured here.
    gw.child.kill('SIGTERM');
    await gw.closed;
    const code = gw.child.exitCode;
    const drainSeconds = (Date.now() - signalled) / 1000;
    await held;
    process.stdout.write(`drain with a request held in flight: ${drainSeconds.toFixed(1)} s; preStop ${preStopSeconds} s; terminationGracePeriodSeconds ${template.spec.terminationGracePeriodSeconds}\n`);
    expect(code).toBe(0);
    expect(template.spec.terminationGracePeriodSeconds).toBeGreaterThan(preStopSeconds + drainSeconds);
  } finally {
    await gw.stop();
    await stuck.close();
  }
}, 60_000);
