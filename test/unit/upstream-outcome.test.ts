import { errorForUpstream, parseRetryAfter, type UpstreamFailure } from '../../gateway/upstream/outcome';

describe('upstream outcome table', () => {
  it.each<[UpstreamFailure, string, number]>([
    [{ kind: 'unreachable' }, 'service_unavailable', 503],
    [{ kind: 'timeout' }, 'service_unavailable', 503],
    [{ kind: 'unavailable' }, 'service_unavailable', 503],
    [{ kind: 'not_found' }, 'not_found', 404],
    [{ kind: 'server_error', status: 500 }, 'internal_error', 500],
    [{ kind: 'server_error', status: 400 }, 'internal_error', 500],
    [{ kind: 'unreadable' }, 'internal_error', 500],
  ])('%j → %s', (failure, code, status) => {
    const err = errorForUpstream(failure);
    expect(err.code).toBe(code);
    expect(err.status).toBe(status);
    if (status === 503) expect(err.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });
  it.each<UpstreamFailure>([
    { kind: 'unreachable' }, { kind: 'timeout' }, { kind: 'unavailable' }, { kind: 'server_error', status: 502 }, { kind: 'unreadable' }, { kind: 'aborted' },
  ])('%j: the failure kind is a field of the error (counted and logged from it), and the logged reason upstream_<kind>', (failure) => {
    const err = errorForUpstream(failure);
    expect(err.upstream).toBe(failure.kind);
    expect(err.reason).toBe(`upstream_${failure.kind}`);
  });
  it('a listing the data service does not know is no upstream failure', () => {
    expect(errorForUpstream({ kind: 'not_found' }).upstream).toBeUndefined();
  });
  it('keeps a sane upstream Retry-After only', () => {
    expect(errorForUpstream({ kind: 'unavailable', retryAfterSeconds: 30 }).retryAfterSeconds).toBe(30);
    expect(parseRetryAfter('30')).toBe(30);
    expect(parseRetryAfter('0')).toBeUndefined();
    expect(parseRetryAfter('99999')).toBeUndefined();
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBeUndefined();
  });
});
