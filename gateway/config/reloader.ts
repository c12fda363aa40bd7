import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from './config-error';

/** Editors save in bursts (write, rename, chmod): changes within this window make one reload. */
const DEBOUNCE_MS = 150;

export interface Reloader {
  /** Reloads now (SIGHUP); during a reload, once more after it. */
  reload(reason: string): void;
  close(): void;
}

/** Applies a configuration read and checked: its swap is one synchronous step; what follows it may take turns. */
export type ApplyReload = () => void | Promise<void>;

/**
 * Watches configuration files and reloads on change or on demand. `load` reads and validates
 * everything (it may take its time off this thread: requests are served meanwhile) and returns a
 * function that applies it; only when it succeeds is the new configuration applied, in one
 * synchronous step between requests. A file that fails validation is refused with one log line
 * naming it, and the running configuration keeps serving. One reload at a time: a change or SIGHUP
 * during a reload makes one more reload after it.
 */
export function createReloader(files: readonly string[], load: () => ApplyReload | Promise<ApplyReload>, logger: Logger, onResult?: (applied: boolean) => void): Reloader {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let again: string | undefined;
  const run = async (reason: string): Promise<void> => {
    let apply: ApplyReload;
    try {
      apply = await load();
    } catch (err) {
      const message = err instanceof ConfigError ? err.message : (err as Error).message;
      logger.error({ reason }, `configuration refused, still serving the previous one: ${message}`);
      onResult?.(false);
      return;
    }
    await apply();
    logger.info({ reason }, 'configuration reloaded');
    onResult?.(true);
  };
  const reload = (reason: string): void => {
    if (running) {
      again = reason;
      return;
    }
    running = true;
    void run(reason)
      .catch((err: unknown) => logger.error({ reason, err }, 'configuration reload failed'))
      .finally(() => {
        running = false;
        const next = again;
        again = undefined;
        if (next !== undefined) reload(next);
      });
  };
  const schedule = (reason: string): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => reload(reason), DEBOUNCE_MS);
  };
  // Watch the directories, not the files: an editor's save-by-rename replaces the file's inode.
  const watchers: FSWatcher[] = [];
  const byDirectory = new Map<string, Set<string>>();
  for (const file of files) {
    const dir = path.dirname(path.resolve(file));
    if (!byDirectory.has(dir)) byDirectory.set(dir, new Set());
    byDirectory.get(dir)!.add(path.basename(file));
  }
  for (const [dir, names] of byDirectory) {
    try {
      const watcher = watch(dir, (_event, name) => {
        if (name && names.has(name.toString())) schedule(`${name.toString()} changed`);
      });
      watcher.on('error', (err) => logger.warn({ err: err.message, dir }, 'cannot watch configuration directory; SIGHUP still reloads'));
      watchers.push(watcher);
    } catch (err) {
      logger.warn({ err: (err as Error).message, dir }, 'cannot watch configuration directory; SIGHUP still reloads');
    }
  }
  return {
    reload,
    close() {
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
