// express-mcp-oauth/testing: what a store author needs to prove a store, under any test runner. Named re-exports only.

/**
 * Registers the store contract suite with your test runner: every atomicity, expiry and secrecy rule of
 * `OAuthStore`. `describeStoreContract({ name: 'Redis', factory, describe, test })` with jest's globals, or
 * node:test's `describe` and `test`; `without: ['createGrantWithClient']` for a store without that optional method
 * (its cases are then registered as skipped).
 */
export { describeStoreContract } from './store-contract';
/** The options of describeStoreContract, and the optional store methods its `without` may name. */
export type { StoreContractOptions } from './store-contract';
export type { OptionalCapability } from './contract-env';
/** What the suite asks of a store under test: the store, optional race/bytes/row hooks, and close. */
export type { StoreCall, StoreFactory, StoreHarness } from './harness';
/** A clock a test moves by hand, and time units in milliseconds. */
export { createFakeClock, DAY, HOUR, MINUTE, SECOND } from './clock';
/** The fake clock's shape. */
export type { FakeClock } from './clock';
/** Valid records (client, grant, code) and refresh tokens for store tests, overridable field by field. */
export { clientRecord, codeRecord, grantRecord, newRefreshToken, newSecret } from './fixtures';
/**
 * A host-name resolver and its answers: the `resolveHost` of the clientMetadataDocuments option, injectable so that
 * a test of the SSRF-safe fetcher's address checks never looks a name up.
 */
export type { ResolveHost, ResolvedAddress } from '../outbound/safe-fetch';
