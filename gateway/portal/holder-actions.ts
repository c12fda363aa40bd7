import type { NextFunction, Request, Response, Router } from 'express';
import { ANY_ADDRESS, everyAddressFamilies } from '../keys/address-list';
import type { KeyAdmin } from '../keys/key-admin';
import { StaleVersion, type KeyExpectation } from '../keys/key-expectation';
import type { RequestStore } from '../requests/request-store';
import { TooManyPending, type RequestChange } from '../requests/subscription-request';
import { ApiError } from '../errors';
import { normaliseCountry } from '../validation/iso-countries';
import { FieldProblem, formField, MAX_FIELD_LENGTH } from './form-input';
import { holderOf, type HolderDeps } from './holder-context';
import { keyPath, type FormProblem } from './pages/change-forms';
import { rolledPage } from './pages/holder-pages';

/** The most addresses a key may carry (docs/guarantees.md). */
const MAX_ADDRESSES = 16;

type Handler = (req: Request, res: Response, next: NextFunction) => Promise<void>;
interface Helpers {
  ownKey: Handler;
  renderKey: (req: Request, res: Response, problem?: FormProblem) => Promise<void>;
}

const refused = (what: string): ApiError => new ApiError('forbidden', {}, undefined, `Your provider does not let key holders ${what} here; nothing was changed.`);
const entries = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);

/** The addresses field: 1 to 16 entries; `any` only when the policy allows it; the rest is the key admin's check. */
function parseAddresses(text: string, allowAny: boolean): string[] {
  const list = entries(text);
  if (!list.length) throw new FieldProblem('addresses', 'Give at least one address.');
  if (list.length > MAX_ADDRESSES) throw new FieldProblem('addresses', `At most ${MAX_ADDRESSES} addresses (${list.length} given).`);
  if (!allowAny && list.some((a) => a.toLowerCase() === ANY_ADDRESS)) throw new FieldProblem('addresses', '"any" (every address) is not allowed: list your servers\' addresses.');
  const every = allowAny ? [] : everyAddressFamilies(list);
  if (every.length) throw new FieldProblem('addresses', `Together these ranges allow more than a /8 of IPv4 or a /32 of IPv6 (every ${every.join(' and ')} address, as "any" would): list your servers' addresses.`);
  return list.map((a) => (a.toLowerCase() === ANY_ADDRESS ? ANY_ADDRESS : a));
}

/** The countries field: known alpha-2 codes, at least one the key does not cover yet. */
function parseCountries(text: string, covered: readonly string[]): string[] {
  const list = entries(text);
  if (!list.length) throw new FieldProblem('countries', 'Give at least one country code.');
  const codes = list.map((c) => {
    const code = normaliseCountry(c);
    if (!code) throw new FieldProblem('countries', `"${c.slice(0, 20)}" is not an ISO 3166-1 alpha-2 country code.`);
    return code;
  });
  const added = [...new Set(codes)].filter((c) => !covered.includes(c));
  if (!added.length) throw new FieldProblem('countries', 'The key covers these countries already.');
  return added;
}

function adminOf(d: HolderDeps): KeyAdmin {
  if (!d.keys.admin) throw new ApiError('forbidden', {}, undefined, `Read-only: keys come from ${d.keys.source}; nothing was changed.`);
  return d.keys.admin;
}

/**
 * Records a request for the key. The store checks, in the step that records it, that the same
 * change is not pending already (a form sent twice records nothing new and answers as the first
 * did) and that the key has fewer than MAX_PENDING_REQUESTS pending (else the form comes back).
 */
async function ask(store: RequestStore, accountId: string, keyId: string, change: RequestChange, field: string): Promise<void> {
  try {
    await store.create({ keyId, accountId, change });
  } catch (err) {
    if (err instanceof TooManyPending) throw new FieldProblem(field, err.message);
    throw err;
  }
}

/**
 * A holder's roll. The page's form names the key's state it was shown for (`version`): a second
 * click, or the result page sent again, would roll twice and end the grace of the value servers
 * still use. The version and the key's account are checked in the roll's own atomic write: of
 * concurrent rolls from one page one applies (the others: undefined, "not rolled"), and a key
 * moved to another account meanwhile is not rolled (404, as for any key not the holder's).
 */
async function holderRoll(admin: KeyAdmin, id: string, graceSeconds: number, expect: KeyExpectation): Promise<{ id: string; key: string } | undefined> {
  try {
    return await admin.roll(id, graceSeconds, expect);
  } catch (err) {
    if (err instanceof StaleVersion) return undefined;
    throw err;
  }
}

/** A holder's change applies only while the key is the holder's account's, checked in the change's own write (404 otherwise). */
const mine = (res: Response): KeyExpectation => ({ account: holderOf(res).account.id });

/** Counted before anything is written (portal/change-budget.ts): past the account's changes this minute, 429 and nothing changed. */
async function withinChangeBudget(d: HolderDeps, res: Response): Promise<void> {
  const perMinute = d.policy().changesPerMinute;
  if (await d.changeBudget.take(holderOf(res).account.id, perMinute)) return;
  const seconds = d.changeBudget.retryAfterSeconds();
  throw new ApiError('rate_limited', {}, seconds, `Your account has made ${perMinute} changes in this minute, the most allowed; nothing was changed. Try again in ${seconds} seconds.`);
}

function requestsOf(d: HolderDeps): RequestStore {
  if (!d.requests) throw new ApiError('forbidden', {}, undefined, 'Requests cannot be recorded by this gateway (read-only key store); nothing was changed.');
  return d.requests;
}

/**
 * The holder's changes, each behind the policy (`portal.self_service`, read at each request, so a
 * reload applies at once): with a change off its form is absent and a post is refused (403). A
 * field problem (FieldProblem, or the key admin's 400 naming a field) sends the form back, 400,
 * with the message beside the field, and nothing changed.
 */
export function addHolderActions(router: Router, d: HolderDeps, h: Helpers): void {
  const admin = (): KeyAdmin => adminOf(d);
  const requests = (): RequestStore => requestsOf(d);
  /** A change to a live key of the account; field problems come back on the key's page. */
  const change = (form: FormProblem['form'] | undefined, work: (req: Request, res: Response, id: string) => Promise<void>) =>
    async (req: Request, res: Response): Promise<void> => {
      const id = req.params.id as string;
      const key = await d.keys.show(id);
      if (key.status === 'revoked') throw new ApiError('forbidden', {}, undefined, 'The key is revoked; nothing was changed.');
      await withinChangeBudget(d, res);
      try {
        await work(req, res, id);
      } catch (err) {
        const field = err instanceof FieldProblem ? err.field : err instanceof ApiError && err.code === 'invalid_parameter' ? err.extras.parameter : undefined;
        if (!form || field === undefined) throw err;
        const raw = (req.body as Record<string, unknown> | undefined)?.[form];
        // What was typed comes back to be corrected, unless it was refused for its size.
        const value = typeof raw === 'string' && raw.length <= MAX_FIELD_LENGTH ? raw : '';
        await h.renderKey(req, res, { form, field, message: (err as Error).message, value });
      }
    };
  const done = (res: Response, id: string, what: string): void => res.redirect(303, `${keyPath(id)}?done=${what}`);

  router.post('/keys/:id/addresses', h.ownKey, change('addresses', async (req, res, id) => {
    const policy = d.policy();
    if (!policy.addresses) throw refused('change addresses');
    const addresses = parseAddresses(formField(req, 'addresses'), policy.allowAnyAddress);
    try {
      await admin().set(id, { addresses }, undefined, mine(res));
    } catch (err) {
      // The key admin names its own field (`addresses[3]` style messages): beside the one field here.
      if (err instanceof ApiError && err.code === 'invalid_parameter') throw new FieldProblem('addresses', err.message.replace(/^addresses(\[\d+\])?: /, ''));
      throw err;
    }
    done(res, id, 'addresses');
  }));

  router.post('/keys/:id/countries', h.ownKey, change('countries', async (req, res, id) => {
    const mode = d.policy().countries;
    if (mode === 'off') throw refused('add countries');
    const key = await d.keys.show(id);
    const added = parseCountries(formField(req, 'countries'), key.countries);
    if (mode === 'direct') await admin().set(id, { countries: [...key.countries, ...added] }, undefined, mine(res));
    else await ask(requests(), holderOf(res).account.id, id, { countries: added }, 'countries');
    done(res, id, mode === 'direct' ? 'countries' : 'requested');
  }));

  router.post('/keys/:id/tier', h.ownKey, change('tier', async (req, res, id) => {
    const mode = d.policy().tier;
    if (mode === 'off') throw refused('change the tier');
    const tier = formField(req, 'tier');
    if (tier !== 'advanced') throw new FieldProblem('tier', tier === 'standard' ? 'Moving down to Standard is done by your provider.' : `"${tier.slice(0, 20)}" is not a tier: the upgrade is to Advanced.`);
    const key = await d.keys.show(id);
    if (key.tier === 'advanced') throw new FieldProblem('tier', 'The key is Advanced already.');
    if (mode === 'direct') await admin().set(id, { tier }, undefined, mine(res));
    else await ask(requests(), holderOf(res).account.id, id, { tier }, 'tier');
    done(res, id, mode === 'direct' ? 'tier' : 'requested');
  }));

  router.post('/keys/:id/roll', h.ownKey, change(undefined, async (req, res, id) => {
    const policy = d.policy();
    if (!policy.roll) throw refused('roll keys');
    const version = formField(req, 'version');
    const rolled = await holderRoll(admin(), id, policy.rollGraceSeconds, { ...mine(res), ...(version ? { version } : {}) });
    if (!rolled) return done(res, id, 'not-rolled');
    const after = await d.keys.show(id);
    res.status(201).type('text/html; charset=utf-8').send(rolledPage(holderOf(res).ctx, rolled.id, rolled.key, after.previous_key_valid_until));
  }));

  router.post('/keys/:id/revoke', h.ownKey, change(undefined, async (req, res, id) => {
    if (!d.policy().revoke) throw refused('revoke keys');
    // Only the confirmation page's form carries this: a bare post goes to that page first.
    if (formField(req, 'confirm') !== 'revoke') return res.redirect(303, keyPath(id, '/revoke'));
    await admin().revoke(id, mine(res));
    done(res, id, 'revoked');
  }));
}
