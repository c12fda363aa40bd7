/** The YAML bounds' measure (gateway/config/yaml-bounds.ts): expanded size through aliases, linear in the parsed document. */
import { load, CORE_SCHEMA } from 'js-yaml';
import { maxExpandedValues, yamlBoundsIssue } from '../../gateway/config/yaml-bounds';

const issue = (text: string) => yamlBoundsIssue(load(text, { schema: CORE_SCHEMA }), Buffer.byteLength(text));

describe('yamlBoundsIssue', () => {
  it('accepts a document without aliases, and aliases within the bound', () => {
    expect(issue('keys:\n  - {id: a, countries: [GB, FR]}\n')).toBeUndefined();
    expect(issue('a: &x [1, 2, 3]\nb: *x\nc: [*x, *x]\n')).toBeUndefined();
  });

  it('refuses nested aliases that multiply (a billion laughs) quickly, measuring each value once', () => {
    const levels = ['l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i <= 9; i++) levels.push(`l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(', ')}]`);
    // Ten billion values expanded: walked expanded, this would not end; measured once each, it is a few hundred nodes.
    expect(issue(`${levels.join('\n')}\n`)).toMatch(/^expands to more than \d+ values/);
  });

  it('counts a value aliased before the measure reached it at its full size', () => {
    const items = Array.from({ length: 60_000 }, () => 'GB').join(', ');
    // The aliases in the second list come first in the walk (the last child is measured first).
    const text = `[&a [${items}], [${Array.from({ length: 20 }, () => '*a').join(', ')}]]\n`;
    const expanded = 1 + (1 + 60_000) + (1 + 20 * (1 + 60_000));
    expect(expanded).toBeGreaterThan(maxExpandedValues(Buffer.byteLength(text)));
    expect(issue(text)).toMatch(/^expands to more than/);
  });
});
