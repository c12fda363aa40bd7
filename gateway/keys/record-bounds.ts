import { ISO_COUNTRY_CODES } from '../validation/iso-countries';

/**
 * The bounds of every list and text a key record holds, in one place: the keys file, the reader
 * process, `keys validate`, `keys import` and the admin API all check records with the schema in
 * key-entry.ts, which takes its limits from here. A record can therefore never be larger than
 * these, whoever wrote it.
 */

/** The most countries a record may list: the 249 assigned ISO 3166-1 alpha-2 codes, each once. */
export const MAX_COUNTRIES = ISO_COUNTRY_CODES.size;
/** The most entries a key's address list may hold (docs/guarantees.md). */
export const MAX_ADDRESSES = 16;
/** The longest `note` a record may carry. */
export const MAX_NOTE = 500;
/** The longest open-invoice link (`billing_invoice_url`) a record may carry. */
export const MAX_INVOICE_URL = 2048;
/** The longest leak location (`leak_url`, from a code host's report) a record keeps; a longer one is not kept. */
export const MAX_LEAK_URL = 2048;
