/**
 * Test kit for the gateway integration suites, one import for every section:
 *   temp-files.ts         temporary directories and files
 *   keys-files.ts         keys files (hashes only), gateway configs, listings files, key values, secrets
 *   gateways.ts           the data service and gateways as real processes; a Stack of them
 *   http-send.ts          a small HTTP client (`send`, `getWithKey`)
 *   answer-conformance.ts every public answer checked against openapi/openapi.yaml
 *   expectations.ts       assertions for the contract's answers and for secrets kept out of logs
 *   timing.ts             `eventually`, load-scaled budgets, baselines, minute windows
 *   key-propagation.ts    `seenByAll`: a key change seen by every instance
 *   local-network.ts      stub servers, refused ports, IPv6 loopback probe
 * Redis-backed stacks are in redis-stack.ts; an in-process gateway with memory twins in in-process.ts.
 *
 * Key values live only in memory here: the keys file holds their SHA-256 (hex), never a value.
 */
export { ERROR_CATALOGUE, type ErrorCode } from '../../gateway/errors';
export * from './temp-files';
export * from './keys-files';
export * from './gateways';
export * from './http-send';
export { checkAnswersOf } from './answer-conformance';
export * from './expectations';
export * from './timing';
export * from './key-propagation';
export * from './local-network';
