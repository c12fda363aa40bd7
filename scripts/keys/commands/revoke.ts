import { changeState, FILE_OPTION } from '../file-target';
import { printJson, type Command } from '../command';

export const revoke: Command = {
  name: 'revoke',
  synopsis: 'ID [--file FILE]',
  summary: 'revokes a key for good (its holder gets 401)',
  options: FILE_OPTION,
  positionals: [1, 1],
  run: (ctx) => changeState(ctx, 'revoke', async (admin, id) => printJson(ctx, await admin.revoke(id))),
};
