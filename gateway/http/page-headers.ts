import type { RequestHandler, Response } from 'express';

/** A page answer of the console or the portal: HTML, with the status given. */
export function sendPage(res: Response, status: number, page: string): void {
  res.status(status).type('text/html; charset=utf-8').send(page);
}

/**
 * The headers of every answer of the operator console and the key holders' portal: their
 * Content-Security-Policy, no type sniffing, never framed, never cached. `Referrer-Policy:
 * same-origin`, not `no-referrer`: a form post then carries its Referer here (the portal's Origin
 * check falls back to it) and nowhere else, and Chromium sends `Origin: null` on form posts under
 * `no-referrer`.
 */
export function pageHeaders(csp: string): RequestHandler {
  return function setPageHeaders(_req, res, next) {
    res.set({
      'Content-Security-Policy': csp,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    });
    next();
  };
}
