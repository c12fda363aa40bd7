import type { Request } from 'express';
import { formBody } from '../http/request-bodies';

/** Portal forms: URL-encoded, at most 16 KB and 20 fields, never compressed (as on every listener). */
export const readForm = formBody({ limit: '16kb', parameterLimit: 20 });

/** The longest value any portal field takes (16 addresses of up to 43 characters, with separators, fit). */
export const MAX_FIELD_LENGTH = 1000;

/** A problem with one field, answered with the form back and the message beside the field. */
export class FieldProblem extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
    this.name = 'FieldProblem';
  }
}

/** One form field as a string ('' when absent); a repeated or oversized field is a FieldProblem. */
export function formField(req: Request, name: string): string {
  const v = ((req.body ?? {}) as Record<string, unknown>)[name];
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new FieldProblem(name, 'Given more than once: give it once.');
  if (v.length > MAX_FIELD_LENGTH) throw new FieldProblem(name, `Too long: at most ${MAX_FIELD_LENGTH} characters.`);
  return v.trim();
}

/** The `_csrf` field, without FieldProblem (a bad one is simply not the session's). */
export function csrfOf(req: Request): unknown {
  return ((req.body ?? {}) as Record<string, unknown>)._csrf;
}

