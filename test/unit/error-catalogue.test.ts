import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../gateway/errors';

const root = path.resolve(__dirname, '../..');

/** The catalogue, the interface document, and the README list the same codes with the same statuses. */
describe('error catalogue', () => {
  const tableRows = (markdown: string): Map<string, number> => {
    const rows = new Map<string, number>();
    for (const match of markdown.matchAll(/^\|\s*`?([a-z_]+)`?\s*\|\s*(\d{3})\s*\|/gm)) rows.set(match[1]!, Number(match[2]));
    return rows;
  };
  const expected = new Map(ERROR_CODES.map((code) => [code, ERROR_CATALOGUE[code].status]));

  it('matches part 7 of the interface document exactly', () => {
    const spec = readFileSync(path.resolve(root, '../shared/interface-spec.md'), 'utf8');
    expect(tableRows(spec)).toEqual(expected);
  });

  it('matches the README error table exactly', () => {
    expect(tableRows(readFileSync(path.join(root, 'README.md'), 'utf8'))).toEqual(expected);
  });
});
