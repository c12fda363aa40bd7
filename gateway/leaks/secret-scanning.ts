// gateway/leaks/: leaked keys reported by a public code host (GitHub secret scanning): the signed report
// checked against the host's published keys, each value looked up by its hash and marked; the host's feedback.
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { ApiError, errorBody } from '../errors';
import type { HookAnswer } from '../hooks/hooks-app';
import type { GithubKeySource } from './github-keys';
import { feedbackOn, type LeakMarker } from './leak-feedback';
import { checkReport, IDENTIFIER_HEADER, SIGNATURE_HEADER, type Refusal } from './leak-report';

/** Where GitHub posts its reports, on the providers' listener. */
export const SECRET_SCANNING_PATH = '/hooks/github/secret-scanning';


const REFUSALS: Record<Refusal, { parameter: string; message: string }> = {
  too_large: { parameter: 'body', message: 'The report is larger than 1 MiB.' },
  too_many: { parameter: 'body', message: 'The report names more than 1000 tokens.' },
  no_signature: { parameter: SIGNATURE_HEADER, message: `The report needs the ${IDENTIFIER_HEADER} and ${SIGNATURE_HEADER} headers.` },
  unknown_key: { parameter: IDENTIFIER_HEADER, message: 'No published key has this identifier.' },
  bad_signature: { parameter: SIGNATURE_HEADER, message: 'The signature does not match the report.' },
  not_json: { parameter: 'body', message: 'The report is not JSON.' },
  not_a_report: { parameter: 'body', message: 'The report is not a list of {token, type, url, source}.' },
};

/** GitHub retries a report refused with 503; Retry-After says when (the key list is fetched again at most once a minute). */
const RETRY_AFTER_SECONDS = 60;
/** Thrown, so the listener answers it with its Retry-After header. */
const unavailable = (message: string): ApiError => new ApiError('service_unavailable', {}, RETRY_AFTER_SECONDS, message);

/**
 * `POST /hooks/github/secret-scanning`: a report that does not verify is answered 400 and changes
 * nothing; one that cannot be judged (the key list out of reach, the key store away) 503, which
 * GitHub sends again (marking is idempotent, so a report half applied before a failure is
 * completed by the retry). A verified report is answered with GitHub's feedback array. Logged:
 * the outcome and counts, never a value.
 */
export function secretScanningHook(keys: GithubKeySource, mark: LeakMarker, logger: Logger): (body: Buffer, headers: IncomingHttpHeaders) => Promise<HookAnswer> {
  const log = logger.child({ hook: 'github-secret-scanning' });
  /** A report not judged: logged, and thrown so the listener answers 503 with Retry-After. */
  const notJudged = (why: string, message: string, err?: unknown): never => {
    log.warn(err ? { err: (err as Error).message } : {}, `secret scanning report not judged: ${why} (GitHub sends it again)`);
    throw unavailable(message);
  };
  return async function secretScanning(body, headers) {
    const check = await checkReport(body, headers, keys).catch((err: unknown) => notJudged('its check failed', 'The report could not be checked; send it again later.', err));
    if (check.kind === 'unavailable') return notJudged('the key list could not be read', 'GitHub\'s public keys could not be read; send the report again later.');
    if (check.kind === 'refused') {
      log.warn({ refused: check.why }, 'secret scanning report refused');
      const refusal = REFUSALS[check.why];
      return { status: 400, body: errorBody(new ApiError('invalid_parameter', { parameter: refusal.parameter }, undefined, refusal.message)) };
    }
    const { feedback, confirmed } = await feedbackOn(check.tokens, mark).catch((err: unknown) => notJudged('the key store could not be reached', 'The key store could not be reached; send the report again later.', err));
    log.info({ tokens: check.tokens.length, confirmed }, 'secret scanning report answered');
    return { status: 200, body: feedback };
  };
}
