import { isScalar, Pair, Scalar, YAMLSeq, type YAMLMap } from 'yaml';
import { UsageError, type CommandContext } from './command';

/** As gateway/keys/pause-reasons.ts (not imported: this file loads nothing of the gateway's runtime). */
const REASONS = ['leaked', 'operator', 'payment_dispute', 'unpaid_renewal'] as const;
type Reason = (typeof REASONS)[number];
const isReason = (v: unknown): v is Reason => typeof v === 'string' && (REASONS as readonly string[]).includes(v);

/** The entry's reasons, sorted: `pause_reasons`, else `pause_reason` as a set of one. */
function reasonsOf(entry: YAMLMap): Reason[] {
  const set = entry.get('pause_reasons');
  if (set instanceof YAMLSeq) return [...new Set(set.items.map((i) => (isScalar(i) ? i.value : i)).filter(isReason))].sort();
  const one = entry.get('pause_reason');
  return isReason(one) ? [one] : [];
}

/**
 * A state change written into a keys file (`keys pause|settle|revoke|delete --file FILE ID`), with
 * the same rules as the Redis store: pausing adds a reason, settling removes one (or every one but
 * `leaked`, which only a roll clears), and a change that changes nothing leaves the file as it is.
 * Loaded only when a command edits a file.
 */
export async function editState(ctx: CommandContext, file: string, command: 'pause' | 'settle' | 'revoke' | 'delete', reason?: string): Promise<void> {
  const { editKeysFile, entryById } = await import('./file-edit');
  const id = ctx.args[0]!;
  if (command === 'pause' && reason === undefined) throw new UsageError(`pause needs --reason (one of ${REASONS.join(', ')})`, 'pause');
  if (reason !== undefined && !isReason(reason)) throw new UsageError(`${command} --reason must be one of ${REASONS.join(', ')}, got "${reason}"`, command);
  let unchanged = false;
  editKeysFile(file, (_doc, keys) => {
    const entry = entryById(keys, id, file);
    const status = entry.get('status');
    if (status === 'revoked' && command !== 'revoke' && command !== 'delete') throw new UsageError(`${file}: key "${id}" is revoked; a revoked key cannot be ${command === 'pause' ? 'paused' : 'settled'}`);
    if (command === 'delete') {
      if (status !== 'revoked') throw new UsageError(`${file}: key "${id}" is ${String(status)}: only a revoked key can be deleted (revoke it first)`);
      const seq = _doc.get('keys', true) as { items: unknown[] };
      seq.items.splice(seq.items.indexOf(entry), 1);
      return;
    }
    if (command === 'revoke') return revokeEntry(entry);
    const before = reasonsOf(entry);
    const after = command === 'pause' ? [...new Set([...before, reason as Reason])].sort() : settled(file, id, before, reason as Reason | undefined);
    unchanged = after.length === before.length && after.every((r, i) => r === before[i]);
    if (!unchanged) writeReasons(entry, after);
  }, () => unchanged);
  if (unchanged) return ctx.out(`key ${id} in ${file} is already so: nothing changed\n`);
  ctx.out(`${command === 'delete' ? 'deleted' : `${command === 'settle' ? 'settled' : `${command}d`}`} key ${id} in ${file}\n`);
}

/** The reasons left after a settle; `leaked` is never settled (one line naming the roll). */
function settled(file: string, id: string, reasons: Reason[], reason: Reason | undefined): Reason[] {
  const roll = `${file}: key "${id}" is paused because its value leaked; a settle never clears that: roll the key to give it a new value`;
  if (reason === 'leaked') throw new UsageError(roll);
  const left = reasons.filter((r) => r === 'leaked' || (reason !== undefined && r !== reason));
  if (reason === undefined && left.includes('leaked')) throw new UsageError(`${roll} (to settle another reason, name it with --reason)`);
  return left;
}

/**
 * Writes the set with the status it means. One reason is written as `pause_reason` (the form every
 * release of the gateway reads) unless the entry already uses the list; several as `pause_reasons`.
 */
function writeReasons(entry: YAMLMap, reasons: Reason[]): void {
  if (!reasons.length) {
    entry.set('status', 'active');
    entry.delete('pause_reason');
    entry.delete('pause_reasons');
    return;
  }
  entry.set('status', 'paused');
  const asList = reasons.length > 1 || entry.has('pause_reasons');
  const field = asList ? 'pause_reasons' : 'pause_reason';
  entry.delete(asList ? 'pause_reason' : 'pause_reasons');
  const value = asList ? Object.assign(new YAMLSeq(), { items: reasons.map((r) => new Scalar(r)), flow: true }) : new Scalar(reasons[0]);
  if (entry.has(field)) return entry.set(field, value);
  // Right after the status it explains, as a person would write it.
  const at = entry.items.findIndex((pair) => isScalar(pair.key) && pair.key.value === 'status');
  entry.items.splice(at + 1, 0, new Pair(new Scalar(field), value));
}

function revokeEntry(entry: YAMLMap): void {
  entry.set('status', 'revoked');
  entry.delete('pause_reason');
  entry.delete('pause_reasons');
  // A revoked key has no value left that works, the previous one of a rotation included.
  entry.delete('previous_key_sha256');
  entry.delete('previous_key_expires_at');
}
