import { isDemoKey } from '../keys/demo-keys';
import { isPlausibleKeyValue, sha256Hex } from '../keys/key-format';
import type { ReportedToken } from './leak-report';

/** GitHub's feedback on one reported token. */
export interface TokenFeedback {
  readonly token_raw: string;
  readonly token_type: string;
  readonly label: 'true_positive' | 'false_positive';
}

/** Marks a reported value (by its SHA-256) as leaked: true when it is a live value of a key, false when it is none. Throws when the store cannot be reached. */
export type LeakMarker = (keySha256: string, report: { readonly url?: string }) => Promise<boolean>;

/**
 * The feedback on every reported token, in order. A value in this project's format with a wrong
 * checksum is no key (no look-up); a demo key's value is published, so its report changes nothing;
 * any other value is looked up (and marked) by its SHA-256 alone: the value itself is never
 * kept, logged or passed on. A value reported twice in one report is looked up once.
 */
export async function feedbackOn(tokens: readonly ReportedToken[], mark: LeakMarker): Promise<{ feedback: TokenFeedback[]; confirmed: number }> {
  const decided = new Map<string, boolean>();
  const feedback: TokenFeedback[] = [];
  for (const reported of tokens) {
    const hash = sha256Hex(reported.token);
    let issued = decided.get(hash);
    if (issued === undefined) {
      issued = isPlausibleKeyValue(reported.token) && !isDemoKey(hash) && (await mark(hash, reported.url !== undefined ? { url: reported.url } : {}));
      decided.set(hash, issued);
    }
    feedback.push({ token_raw: reported.token, token_type: reported.type, label: issued ? 'true_positive' : 'false_positive' });
  }
  return { feedback, confirmed: [...decided.values()].filter(Boolean).length };
}
