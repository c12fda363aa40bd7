import { changeState, FILE_OPTION } from '../file-target';
import { printJson, type Command } from '../command';

export const settle: Command = {
  name: 'settle',
  synopsis: 'ID [--file FILE]',
  summary: 'resumes a paused key',
  options: FILE_OPTION,
  positionals: [1, 1],
  run: (ctx) => changeState(ctx, 'settle', async (admin, id) => printJson(ctx, await admin.settle(id))),
};
