import type { UsageView } from '../../keys/key-admin';
import { html, type SafeHtml } from '../html';

const number = (n: number): string => n.toLocaleString('en-GB');

/**
 * One window's use against its quota: a native `<progress>` (no inline style, so the CSP holds)
 * with an accessible name, and the figures beside it.
 */
export function usageBar(usage: UsageView, window: 'day' | 'month' | 'minute', keyId: string): SafeHtml {
  const w = usage.windows.find((x) => x.window === window);
  if (!w) return html`<span class="muted">—</span>`;
  const label = `${keyId}: ${window === 'day' ? 'today' : window === 'month' ? 'this month' : 'this minute'}, ${number(w.used)} of ${number(w.limit)} requests`;
  return html`<progress max="${w.limit}" value="${Math.min(w.used, w.limit)}" aria-label="${label}" data-window="${window}" data-used="${w.used}"></progress> <span class="num">${number(w.used)} / ${number(w.limit)}</span>`;
}
