/**
 * Loads listings from LISTINGS_FILE: a JSON array of records, or NDJSON (one record per line,
 * blank lines allowed). Any problem stops start-up with one ListingsFileError whose message is the
 * complete, single line an operator needs (file, entry, field), so main can print it without a
 * stack trace: a data error is not a program bug.
 */
import { readFileSync } from 'node:fs';
import { RecordError, StoredListing, toStoredListing } from './listing';

export class ListingsFileError extends Error {
  constructor(file: string, detail: string) {
    // Error texts from fs or JSON.parse are one line today; flatten anyway to keep the promise.
    super(`LISTINGS_FILE ${file}: ${detail}`.replace(/\s*[\r\n]+\s*/g, ' '));
    this.name = 'ListingsFileError';
  }
}

/** Reads `message` structurally: errors from another realm (a vm context, say) fail `instanceof Error`. */
function messageOf(error: unknown): string {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(error);
}

/**
 * Validates records in order, rejecting duplicates of (country, id). `entryOf(i)` names the i-th
 * record in messages: its 1-based position in an array, or its line number in NDJSON.
 */
function toListings(file: string, records: readonly unknown[], entryOf: (i: number) => number): StoredListing[] {
  const seen = new Map<string, number>();
  const listings = new Array<StoredListing>(records.length);
  for (let i = 0; i < records.length; i += 1) {
    const entry = entryOf(i);
    let listing: StoredListing;
    try {
      listing = toStoredListing(records[i]);
    } catch (error) {
      if (error instanceof RecordError) throw new ListingsFileError(file, `entry ${entry}: ${error.message}`);
      throw error;
    }
    const { country, id } = listing.record;
    const key = `${country}/${id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new ListingsFileError(file, `entry ${entry}: field "id": duplicate of entry ${first} (country ${country}, id ${id})`);
    }
    seen.set(key, entry);
    listings[i] = listing;
  }
  return listings;
}

function parseArray(file: string, text: string): StoredListing[] {
  let records: unknown;
  try {
    records = JSON.parse(text);
  } catch (error) {
    throw new ListingsFileError(file, `invalid JSON: ${messageOf(error)}`);
  }
  if (!Array.isArray(records)) throw new ListingsFileError(file, 'must be a JSON array or NDJSON');
  return toListings(file, records, (i) => i + 1);
}

function parseNdjson(file: string, text: string): StoredListing[] {
  const records: unknown[] = [];
  const lineNumbers: number[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line));
    } catch (error) {
      throw new ListingsFileError(file, `entry ${i + 1}: invalid JSON: ${messageOf(error)}`);
    }
    lineNumbers.push(i + 1);
  }
  return toListings(file, records, (i) => lineNumbers[i]!);
}

/**
 * Parses file contents. The format is told by the first non-space character: `[` opens a JSON
 * array, anything else is NDJSON. `file` is only used to name the source in error messages.
 */
export function parseListings(file: string, text: string): StoredListing[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // editors on Windows add a BOM
  return body.trimStart().startsWith('[') ? parseArray(file, body) : parseNdjson(file, body);
}

export function loadListingsFile(file: string): StoredListing[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ListingsFileError(file, `cannot read: ${messageOf(error)}`);
  }
  return parseListings(file, text);
}
