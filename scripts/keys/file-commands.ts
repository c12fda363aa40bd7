import { isScalar, Pair, Scalar, type YAMLMap } from 'yaml';
import { UsageError, type CommandContext } from './command';

/**
 * A state change written into a keys file (`keys pause|settle|revoke|delete --file FILE ID`), with
 * the same refusals as the Redis store. Loaded only when a command edits a file.
 */
export async function editState(ctx: CommandContext, file: string, command: 'pause' | 'settle' | 'revoke' | 'delete', reason?: string): Promise<void> {
  const { editKeysFile, entryById } = await import('./file-edit');
  const id = ctx.args[0]!;
  if (command === 'pause' && reason !== 'unpaid_renewal' && reason !== 'payment_dispute') {
    throw new UsageError(`pause needs --reason unpaid_renewal or payment_dispute${reason === undefined ? '' : `, got "${reason}"`}`, 'pause');
  }
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
    setState(entry, command, reason);
  });
  ctx.out(`${command === 'delete' ? 'deleted' : `${command === 'settle' ? 'settled' : `${command}d`}`} key ${id} in ${file}\n`);
}

function setState(entry: YAMLMap, command: 'pause' | 'settle' | 'revoke', reason: string | undefined): void {
  if (command === 'pause') {
    entry.set('status', 'paused');
    if (entry.has('pause_reason')) entry.set('pause_reason', reason);
    else {
      // Right after the status it explains, as a person would write it.
      const at = entry.items.findIndex((pair) => isScalar(pair.key) && pair.key.value === 'status');
      entry.items.splice(at + 1, 0, new Pair(new Scalar('pause_reason'), new Scalar(reason)));
    }
    return;
  }
  entry.set('status', command === 'settle' ? 'active' : 'revoked');
  entry.delete('pause_reason');
  if (command === 'revoke') {
    // A revoked key has no value left that works, the previous one of a rotation included.
    entry.delete('previous_key_sha256');
    entry.delete('previous_key_expires_at');
  }
}
