// The SSRF-safe fetcher as the CIMD tests use it: loopback allowed, the test CA trusted, every name resolved to
// 127.0.0.1 unless a test injects another resolver; and spies that stop any socket from opening, to prove that a
// refused address is never connected to.
import net from 'node:net';
import tls from 'node:tls';
import { createSafeFetcher, type SafeFetchOptions, type SafeFetcher } from '../../lib/outbound/safe-fetch';
import { resolveToLoopback } from './document-server';
import { testCa } from './test-ca';

export function loopbackFetcher(options: Partial<SafeFetchOptions> = {}): SafeFetcher {
  return createSafeFetcher({
    allowLoopback: true,
    timeoutMs: 2000,
    ca: [testCa().caPem],
    resolveHost: resolveToLoopback,
    ...options,
  });
}

/**
 * Spies that replace the socket constructors outright: should a guard ever fail, the attempt is recorded and stopped
 * here, and no packet leaves for the refused address. Restore them with jest.restoreAllMocks().
 */
export function blockConnections(): jest.SpyInstance[] {
  const blocked = () => {
    throw new Error('a connection was attempted');
  };
  return [
    jest.spyOn(tls, 'connect').mockImplementation(blocked),
    jest.spyOn(net, 'connect').mockImplementation(blocked),
    jest.spyOn(net, 'createConnection').mockImplementation(blocked),
  ];
}
