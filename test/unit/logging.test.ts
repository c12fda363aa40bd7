import { generateKeyValue } from '../../gateway/keys/key-format';
import { loggableUrl } from '../../gateway/logging';

describe('loggableUrl', () => {
  const own = 'imported-key-value-0123456789';

  it('keeps the path and the short filter values, redacts the cursor and anything unknown', () => {
    expect(loggableUrl('/v1/properties?country=GB&limit=5&cursor=abc.def&api_key=x')).toBe('/v1/properties?country=GB&limit=5&cursor=[redacted]&[redacted]');
  });

  it('redacts a key in the path: the caller\'s own (as sent or percent-encoded) and any in the project\'s format', () => {
    const generated = generateKeyValue();
    expect(loggableUrl(`/v1/properties/${own}?country=GB`, own)).toBe('/v1/properties/[redacted]?country=GB');
    expect(loggableUrl(`/v1/insights/a/${encodeURIComponent('k+y/v=1234567')}`, 'k+y/v=1234567')).toBe('/v1/insights/a/[redacted]');
    expect(loggableUrl(`/v1/properties/${generated}`)).toBe('/v1/properties/[redacted]');
    expect(loggableUrl(`/v1/ping/${generated}/x`, own)).toBe('/v1/ping/[redacted]/x');
  });

  it('redacts before cutting a long path, so no part of a key survives the cut', () => {
    const path = `/${'a'.repeat(500)}${own}`;
    const logged = loggableUrl(path, own);
    expect(logged).not.toContain(own.slice(0, 8));
    expect(logged.length).toBeLessThanOrEqual(513);
  });
});
