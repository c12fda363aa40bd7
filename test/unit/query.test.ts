import { isListingId, parseItemQuery, parseListQuery } from '../../gateway/validation/query';

const invalid = (raw: string) => {
  const parsed = parseListQuery(raw);
  if (parsed.ok) throw new Error(`expected "${raw}" to be refused`);
  return parsed.parameter;
};

describe('parseListQuery', () => {
  it('accepts the contract parameters, upper-cases the country, defaults limit to 20', () => {
    expect(parseListQuery('country=gb')).toEqual({ ok: true, value: { country: 'GB', limit: 20 } });
    expect(parseListQuery('country=FR&listing_type=rent&property_type=house&limit=100&cursor=abc')).toEqual({
      ok: true,
      value: { country: 'FR', listingType: 'rent', propertyType: 'house', limit: 100, cursor: 'abc' },
    });
  });

  it.each([
    ['', 'country'],
    ['listing_type=sale', 'country'],
    ['country=XX', 'country'],
    ['country=GBR', 'country'],
    ['country=g', 'country'],
    ['country=', 'country'],
    ['country=GB&country=FR', 'country'],
    ['country=GB&foo=1', 'foo'],
    ['country=GB&__proto__=x', '__proto__'],
    ['country=GB&a[b]=1', 'a[b]'],
    ['country=GB&listing_type=buy', 'listing_type'],
    ['country=GB&property_type=castle', 'property_type'],
    ['country=GB&cursor=', 'cursor'],
    ['country=GB&Country=GB', 'Country'],
  ])('refuses %j naming %s', (raw, parameter) => {
    expect(invalid(raw)).toBe(parameter);
  });

  it.each(['0', '101', '1e1', '0x10', ' 5', '5.0', '-1', '05', '+5', '99999999999999999999', '1_0'])('refuses limit=%j', (limit) => {
    expect(invalid(`country=GB&limit=${encodeURIComponent(limit)}`)).toBe('limit');
  });

  it.each(['1', '9', '10', '99', '100'])('accepts limit=%s', (limit) => {
    expect(parseListQuery(`country=GB&limit=${limit}`)).toMatchObject({ ok: true, value: { limit: Number(limit) } });
  });

  it('reports the first offending parameter in order of appearance, and caps a huge name', () => {
    expect(invalid('zzz=1&country=XX')).toBe('zzz');
    expect(invalid(`${'n'.repeat(5000)}=1`).length).toBeLessThanOrEqual(129);
  });
});

describe('parseItemQuery', () => {
  it('takes country and nothing else', () => {
    expect(parseItemQuery('country=de')).toEqual({ ok: true, value: { country: 'DE' } });
    expect(parseItemQuery('country=DE&limit=5')).toMatchObject({ ok: false, parameter: 'limit' });
    expect(parseItemQuery('')).toMatchObject({ ok: false, parameter: 'country' });
  });
});

describe('isListingId', () => {
  it.each(['a', 'GB-001Q6JJK', 'x.y_z~w-1', 'a'.repeat(128), '...'])('accepts %j', (id) => expect(isListingId(id)).toBe(true));
  it.each(['', '.', '..', 'a/b', 'a b', 'é', 'a'.repeat(129), 'a%2Fb', '..\\x'])('refuses %j', (id) => expect(isListingId(id)).toBe(false));
});

describe('parseEmptyQuery', () => {
  it('accepts no parameters and refuses any', () => {
    const { parseEmptyQuery } = jest.requireActual('../../gateway/validation/query') as typeof import('../../gateway/validation/query');
    expect(parseEmptyQuery('')).toEqual({ ok: true, value: {} });
    expect(parseEmptyQuery('verbose=1')).toMatchObject({ ok: false, parameter: 'verbose' });
    expect(parseEmptyQuery('api_key=abc')).toMatchObject({ ok: false, parameter: 'api_key' });
  });
});
