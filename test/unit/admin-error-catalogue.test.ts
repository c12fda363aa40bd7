import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ADMIN_ERROR_CATALOGUE, ERROR_CATALOGUE } from '../../gateway/errors';

const root = path.resolve(__dirname, '../..');

/**
 * The admin listener's codes (the admin-only catalogue beside the public one) are checked against
 * the admin API's document, openapi/admin.yaml, as the public catalogue is against openapi.yaml:
 * a code cannot be answered undocumented, nor documented with another status.
 */
describe('admin error catalogue against openapi/admin.yaml', () => {
  interface Doc {
    paths: Record<string, Record<string, { responses?: Record<string, { $ref?: string }> }>>;
    components: {
      schemas: { ErrorBody: { properties: { error: { enum: string[] } } } };
      responses: Record<string, { content?: { 'application/json'?: { schema?: { allOf?: Array<{ properties?: { error?: { const?: string } } }> } } } }>;
    };
  }
  const doc = YAML.parse(readFileSync(path.join(root, 'openapi', 'admin.yaml'), 'utf8')) as Doc;
  const statusOf = (code: string): number | undefined =>
    (ADMIN_ERROR_CATALOGUE as Record<string, { status: number }>)[code]?.status ?? (ERROR_CATALOGUE as Record<string, { status: number }>)[code]?.status;
  const documented = doc.components.schemas.ErrorBody.properties.error.enum;

  it('lists every admin-only code in ErrorBody, and only codes of the two catalogues', () => {
    expect(Object.keys(ADMIN_ERROR_CATALOGUE).length).toBeGreaterThan(0);
    for (const code of Object.keys(ADMIN_ERROR_CATALOGUE)) expect(documented).toContain(code);
    expect(documented.filter((code) => statusOf(code) === undefined)).toEqual([]);
  });

  it('has a reusable response per documented code whose body names that code', () => {
    for (const code of documented) {
      const errorConst = doc.components.responses[code]?.content?.['application/json']?.schema?.allOf?.find((part) => part.properties?.error)?.properties?.error?.const;
      expect({ code, errorConst }).toEqual({ code, errorConst: code });
    }
  });

  it('uses each code\'s response only under the catalogue\'s status for it', () => {
    const uses: Array<{ at: string; status: string; code: string }> = [];
    for (const [p, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const code = response.$ref?.match(/^#\/components\/responses\/([a-z_]+)$/)?.[1];
          if (code !== undefined && statusOf(code) !== undefined) uses.push({ at: `${method} ${p}`, status, code });
        }
      }
    }
    expect(uses.length).toBeGreaterThan(10);
    for (const use of uses) expect(use).toEqual({ ...use, status: String(statusOf(use.code)) });
  });
});
