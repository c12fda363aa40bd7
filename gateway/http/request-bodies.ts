import express, { type RequestHandler } from 'express';

/**
 * The body readers of every listener that takes bodies (the admin API, the console, the portal):
 * one rule for compressed bodies. A body with a `Content-Encoding` other than `identity` (gzip,
 * deflate, br) is never inflated: body-parser refuses it (415), which each listener answers as its
 * message says, 400 `invalid_parameter` "… not compressed". No form or JSON document here is large
 * enough to need compression, and inflating a caller's bytes is work (and a bomb) for nothing.
 */
export const formBody = (limits: { limit: string; parameterLimit: number }): RequestHandler =>
  express.urlencoded({ extended: false, ...limits, inflate: false });

/** A JSON body of any content type (the admin API's), never inflated. */
export const jsonBody = (limit: string): RequestHandler => express.json({ limit, strict: true, inflate: false, type: () => true });
