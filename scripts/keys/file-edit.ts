import fs from 'node:fs';
import path from 'node:path';
import { isMap, isSeq, parseDocument, type Document, type YAMLMap } from 'yaml';
import { ConfigError } from '../../gateway/config/config-error';
import { readKeysFile } from '../../gateway/keys/keys-file';
import { UsageError } from './command';

/**
 * Edits a YAML keys file in place, safely: the file is parsed with the `yaml` package (which keeps
 * comments and layout), changed, written to a temporary file beside it, validated there exactly as
 * the gateway loads it, and only then renamed over the original (atomic on one file system). A
 * failed edit, or one that would make the file invalid, leaves the original untouched. When
 * `unchanged` says so after `change` ran (nothing to do), nothing is written at all.
 */
export function editKeysFile(file: string, change: (doc: Document.Parsed, keys: YAMLMap[]) => void, unchanged?: () => boolean): void {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot read the keys file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const doc = parseDocument(text);
  if (doc.errors.length) throw new ConfigError(`${file}: not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  const seq = doc.get('keys', true);
  if (!isSeq(seq)) throw new ConfigError(`${file}: field "keys": must be a list of key records`);
  const keys = seq.items.filter(isMap) as YAMLMap[];
  change(doc, keys);
  if (unchanged?.()) return;
  // Beside the file (same file system, so the rename is atomic), and not a name the gateway watches.
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(temp, doc.toString({ lineWidth: 0, flowCollectionPadding: false }), { mode: fs.statSync(file).mode });
    readKeysFile(temp); // the gateway's own reading: throws a one-line ConfigError
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    if (err instanceof ConfigError) throw new ConfigError(`the edit was not written: ${err.message.split(temp).join(file)}`);
    throw err;
  }
}

/** The record with this id, or a one-line error. */
export function entryById(keys: YAMLMap[], id: string, file: string): YAMLMap {
  const entry = keys.find((k) => k.get('id') === id);
  if (!entry) throw new UsageError(`${file}: no key with id "${id}"`);
  return entry;
}

