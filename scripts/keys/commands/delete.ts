import { changeState, FILE_OPTION } from '../file-target';
import type { Command } from '../command';

export const deleteKey: Command = {
  name: 'delete',
  synopsis: 'ID [--file FILE]',
  summary: 'removes a revoked key for good, which frees its id',
  details: 'Only a revoked key can be deleted (revoke it first). Its counters go with it.',
  options: FILE_OPTION,
  positionals: [1, 1],
  run: (ctx) =>
    changeState(ctx, 'delete', async (admin, id) => {
      await admin.delete(id);
      ctx.out(`deleted key ${id}\n`);
    }),
};
