import { chooseEncoding, parseAcceptEncoding, type ContentCoding } from '../../gateway/compression/negotiate';

const ALL: readonly ContentCoding[] = ['br', 'zstd', 'gzip'];
const NO_ZSTD: readonly ContentCoding[] = ['br', 'gzip'];

describe('Accept-Encoding negotiation', () => {
  it.each([
    [undefined, 'identity', true],
    ['', 'identity', true],
    ['   ', 'identity', true],
    ['gzip', 'gzip', true],
    ['gzip, deflate, br, zstd', 'br', true],
    ['deflate', 'identity', true],
    ['gzip;q=0.2, br;q=0.8', 'br', true],
    ['br;q=0.5, gzip;q=0.9', 'gzip', true],
    ['br;q=0, gzip', 'gzip', true],
    ['br;q=0, gzip;q=0', 'identity', true],
    ['*', 'br', true],
    ['*;q=0.5, br;q=0', 'zstd', true],
    ['*;q=0', 'identity', false],
    ['*;q=0, identity', 'identity', true],
    ['identity;q=0', 'identity', false],
    ['gzip;q=0.5, identity;q=0', 'gzip', false],
    ['gzip;q=0.5, identity', 'identity', true],
    ['gzip, identity;q=0.5', 'gzip', true],
    ['gzip;q=1, identity;q=1', 'gzip', true],
    ['GZip;Q=0.7, BR;q=0.6', 'gzip', true],
    ['gzip;q=2, br', 'br', true],
    ['gzip;q=abc', 'identity', true],
    ['gzip;q=0.0001', 'identity', true],
    ['zstd', 'zstd', true],
    ['gzip;level=5;q=0.9', 'gzip', true],
    [',,gzip,,', 'gzip', true],
  ])('%j → %s (identity acceptable: %s)', (header, coding, identityAcceptable) => {
    expect(chooseEncoding(header, ALL)).toEqual({ coding, identityAcceptable });
  });

  it('offers only what the runtime has: zstd alone is identity without zstd, and * picks from the offer', () => {
    expect(chooseEncoding('zstd', NO_ZSTD).coding).toBe('identity');
    expect(chooseEncoding('*;q=0.5, br;q=0', NO_ZSTD).coding).toBe('gzip');
  });

  it('ties go to the order offered', () => {
    expect(chooseEncoding('gzip, br', ['gzip', 'br']).coding).toBe('gzip');
    expect(chooseEncoding('gzip, br', ['br', 'gzip']).coding).toBe('br');
  });

  it('parses weights, the first mention of a coding standing', () => {
    expect([...parseAcceptEncoding('gzip;q=0.5, GZIP, br ; q=0.25, *;q=0')]).toEqual([
      ['gzip', 0.5],
      ['br', 0.25],
      ['*', 0],
    ]);
  });
});
