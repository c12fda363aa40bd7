import type { Command } from '../command';
import { account } from './account';
import { add } from './add';
import { audit } from './audit';
import { completion } from './completion';
import { create } from './create';
import { deleteKey } from './delete';
import { exportFile } from './export';
import { generate } from './generate';
import { hash } from './hash';
import { importFile } from './import';
import { list } from './list';
import { pause } from './pause';
import { report } from './report';
import { approve, decline, requests } from './requests';
import { revoke } from './revoke';
import { roll } from './roll';
import { set } from './set';
import { settle } from './settle';
import { show } from './show';
import { usage } from './usage';
import { validate } from './validate';
import { webhooks } from './webhooks';

/**
 * Every command of the keys CLI, in the order `keys help` lists them. A new command is one file in
 * this folder and one line here (keep one line per command so parallel additions merge cleanly).
 */
export const COMMANDS: readonly Command[] = [
  create,
  list,
  show,
  usage,
  report,
  set,
  pause,
  settle,
  revoke,
  deleteKey,
  roll,
  importFile,
  exportFile,
  audit,
  webhooks,
  account,
  requests,
  approve,
  decline,
  validate,
  add,
  generate,
  hash,
  completion,
];
