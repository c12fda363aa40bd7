import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../gateway/errors';

const root = path.resolve(__dirname, '../..');

/**
 * The catalogue, the public OpenAPI document and the reference (docs/reference.md, "Public error
 * codes") list the same codes with the same statuses: the interface is what the repository
 * publishes (the OpenAPI document and its docs), so the catalogue is checked against those two,
 * never against anything outside the repository.
 */
describe('error catalogue', () => {
  const tableRows = (markdown: string): Map<string, number> => {
    const rows = new Map<string, number>();
    for (const match of markdown.matchAll(/^\s*\|\s*`?([a-z_]+)`?\s*\|\s*(\d{3})\s*\|/gm)) rows.set(match[1]!, Number(match[2]));
    return rows;
  };
  const expected = new Map(ERROR_CODES.map((code) => [code, ERROR_CATALOGUE[code].status]));
  const openapi = YAML.parse(readFileSync(path.join(root, 'openapi', 'openapi.yaml'), 'utf8')) as {
    info: { description: string };
    components: { schemas: { ErrorBody: { properties: { error: { description: string } } } }; examples: Record<string, { value: { error: string; message: string } }> };
  };

  it('matches the error table of the OpenAPI document (info.description) exactly', () => {
    expect(tableRows(openapi.info.description)).toEqual(expected);
  });

  it('matches the codes the OpenAPI ErrorBody schema lists, with their statuses', () => {
    const listed = new Map<string, number>();
    for (const m of openapi.components.schemas.ErrorBody.properties.error.description.matchAll(/`([a-z_]+)` \((\d{3})\)/g)) listed.set(m[1]!, Number(m[2]));
    expect(listed).toEqual(expected);
  });

  it('gives each code the message of its OpenAPI example', () => {
    for (const code of ERROR_CODES) {
      expect({ code, value: openapi.components.examples[code]?.value }).toEqual({ code, value: expect.objectContaining({ error: code, message: ERROR_CATALOGUE[code].message }) });
    }
  });

  it('matches the public error table of docs/reference.md exactly', () => {
    const reference = readFileSync(path.join(root, 'docs', 'reference.md'), 'utf8');
    // The public table alone: the admin-only codes are listed after it, under their own heading.
    const start = reference.indexOf('\n### Public error codes\n');
    expect(start).toBeGreaterThan(0);
    const end = reference.indexOf('\n#', start + 1);
    expect(tableRows(reference.slice(start, end < 0 ? undefined : end))).toEqual(expected);
  });
});
