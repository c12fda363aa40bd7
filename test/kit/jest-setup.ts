/**
 * Runs before every test file (jest.config.js, setupFilesAfterEnv): the default time a test or hook
 * may take is the 30 s of an idle machine scaled by the load measured now (test/kit/timing.ts), so
 * a busy machine slows the suite down instead of failing it. A test that names its own timeout
 * keeps it.
 */
import { budget } from './timing';

jest.setTimeout(budget(30_000));
