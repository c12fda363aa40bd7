import { statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from './config-error';

/**
 * A changed file is read once it has stayed unchanged this long: editors save in bursts (write,
 * rename, chmod), and a file written in place in parts must not be applied half-written.
 */
export const SETTLE_MS = 500;
/** The files are also looked at this often: a volume whose changes raise no event is still followed. */
const POLL_MS = 1000;

/**
 * What identifies a file's content without reading it: device, inode, size, modification and
 * change times of the file the path resolves to (through every symlink, so a Kubernetes volume's
 * `..data` swap changes it), or `missing`.
 */
function fingerprint(file: string): string {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return 'missing';
  }
}

export interface Reloader {
  /** Reloads now (SIGHUP); during a reload, once more after it. */
  reload(reason: string): void;
  close(): void;
}

/** Applies a configuration read and checked: its swap is one synchronous step; what follows it may take turns. */
export type ApplyReload = () => void | Promise<void>;

/**
 * Watches configuration files and reloads on change or on demand. A change is noticed by content
 * identity (fingerprint), not by event names, and applied once the file has settled (SETTLE_MS). `load` reads and validates
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
    timer = setTimeout(() => reload(reason), SETTLE_MS);
  };
  // Each event in a watched directory, whatever its name (a Kubernetes Secret or ConfigMap volume
  // swaps its `..data` symlink; the file's own name sees no event), and each poll compares the
  // files' fingerprints: a change (re)starts the settle timer.
  let seen = files.map(fingerprint);
  const look = (): void => {
    const now = files.map(fingerprint);
    const changed = files.filter((_f, i) => now[i] !== seen[i]);
    seen = now;
    if (changed.length) schedule(`${changed.map((f) => path.basename(f)).join(', ')} changed`);
  };
  const poll = setInterval(look, POLL_MS);
  poll.unref();
  // Watch the directories, not the files: an editor's save-by-rename replaces the file's inode.
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(files.map((file) => path.dirname(path.resolve(file))))) {
    try {
      const watcher = watch(dir, look);
      watcher.on('error', (err) => logger.warn({ err: err.message, dir }, 'cannot watch configuration directory; changes are still seen within a second'));
      watchers.push(watcher);
    } catch (err) {
      logger.warn({ err: (err as Error).message, dir }, 'cannot watch configuration directory; changes are still seen within a second');
    }
  }
  return {
    reload,
    close() {
      if (timer) clearTimeout(timer);
      clearInterval(poll);
      for (const w of watchers) w.close();
    },
  };
}
