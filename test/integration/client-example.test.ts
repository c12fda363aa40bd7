/**
 * examples/page-country.ts, run as a user would (`tsx`), against a real gateway and data service:
 * it pages through one country and prints the right summary; a refusal is one line and exit code 1.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fixtureListings, publishedListings } from '../fixtures/listings';
import { randomKeyValue, startStack, type KeySpec, type Stack } from '../kit/gateway-stack';

const ROOT = path.resolve(__dirname, '..', '..');
const LISTINGS = fixtureListings();
const KEYS: KeySpec[] = [{ id: 'example', value: randomKeyValue('example'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }];

let stack: Stack;

function runExample(country: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      [path.join(ROOT, 'examples', 'page-country.ts'), country],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', LISTINGS_BASE_URL: stack.url, LISTINGS_API_KEY: stack.key('example').value }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  stack = await startStack({ keys: KEYS, listings: LISTINGS });
});
afterAll(async () => {
  await stack?.stop();
});

test('pages through a country and prints the count, the split by type and the price range', async () => {
  const { code, stdout, stderr } = await runExample('gb');
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const gb = publishedListings(LISTINGS, { country: 'GB' });
  const pages = Math.ceil(gb.length / 100);
  expect(stdout).toContain(`GB: ${gb.length} published listings in ${pages} pages`);
  const sale = gb.filter((l) => l.listing_type === 'sale');
  expect(stdout).toMatch(new RegExp(`\\n  sale +${sale.length} \\(`));
  const houses = gb.filter((l) => l.property_type === 'house').length;
  expect(stdout).toMatch(new RegExp(`\\n  house +${houses} \\(`));
  const min = Math.min(...sale.map((l) => l.price)).toLocaleString('en-GB');
  const max = Math.max(...sale.map((l) => l.price)).toLocaleString('en-GB');
  expect(stdout).toContain(`sale         ${min} – ${max}`);
}, 40_000);

test('a country outside the subscription: one line naming the code, exit code 1', async () => {
  const { code, stdout, stderr } = await runExample('DE');
  expect(code).toBe(1);
  expect(stdout).toBe('');
  expect(stderr.trim()).toMatch(/^403 country_not_entitled: /);
}, 40_000);
