// One TLS secure context per set of trusted authorities in the process: made once, shared, bounded.
import tls from 'node:tls';
import { secureContextFor } from '../../../lib/outbound/secure-contexts';
import { testCa } from '../../helpers/test-ca';

afterEach(() => jest.restoreAllMocks());

// Distinct PEM strings are distinct keys; the cache never parses them, so they need not be certificates to be told
// apart (those that are made into contexts below are real).
describe('secureContextFor', () => {
  test('the same authorities give the same context, made once', () => {
    const { caPem } = testCa();
    const make = jest.spyOn(tls, 'createSecureContext');
    const first = secureContextFor([caPem]);
    expect(secureContextFor([caPem])).toBe(first);
    expect(secureContextFor([caPem].slice())).toBe(first);
    expect(make.mock.calls.length).toBeLessThanOrEqual(1);
  });

  test('other authorities, or none, give another context', () => {
    const { caPem } = testCa();
    const withCa = secureContextFor([caPem]);
    const withoutCa = secureContextFor(undefined);
    expect(withoutCa).not.toBe(withCa);
    expect(secureContextFor(undefined)).toBe(withoutCa);
    expect(secureContextFor([caPem, caPem])).not.toBe(withCa);
  });

  test('an empty list is not the default store: no `ca` is Node’s, which NODE_EXTRA_CA_CERTS extends', () => {
    const make = jest.spyOn(tls, 'createSecureContext');
    const empty = secureContextFor([]);
    expect(empty).not.toBe(secureContextFor(undefined));
    expect(secureContextFor([])).toBe(empty);
    expect(make.mock.calls.map(([options]) => options)).toContainEqual({ ca: [...tls.rootCertificates] });
  });

  test('two certificates in one string and the same two as a list are told apart (the key is the list)', () => {
    const { caPem } = testCa();
    expect(secureContextFor([`${caPem}\n${caPem}`])).not.toBe(secureContextFor([caPem, caPem]));
  });

  test('the roots are trusted besides `ca`, never replaced by it', () => {
    const { caPem } = testCa();
    const make = jest.spyOn(tls, 'createSecureContext');
    secureContextFor([caPem, caPem, caPem]);
    expect(make).toHaveBeenCalledWith({ ca: [...tls.rootCertificates, caPem, caPem, caPem] });
  });

  test('the one evicted is the one unused for longest, not the first made', () => {
    const { caPem } = testCa();
    const sets = Array.from({ length: 9 }, (_, index) => Array.from({ length: index + 20 }, () => caPem));
    const kept = secureContextFor(sets[0]);
    // Seven more fill the cache, sets[0] the oldest; using it again makes it the newest.
    for (const set of sets.slice(1, 8)) secureContextFor(set);
    expect(secureContextFor(sets[0])).toBe(kept);
    // A ninth evicts sets[1], unused for longest.
    secureContextFor(sets[8]);
    expect(secureContextFor(sets[0])).toBe(kept);
    const make = jest.spyOn(tls, 'createSecureContext');
    secureContextFor(sets[1]);
    expect(make).toHaveBeenCalledTimes(1);
  });

  test('no more than eight are kept: the oldest is made again when asked for after eight others', () => {
    const { caPem } = testCa();
    const sets = Array.from({ length: 9 }, (_, index) => Array.from({ length: index + 4 }, () => caPem));
    const first = secureContextFor(sets[0]);
    for (const set of sets.slice(1)) secureContextFor(set);
    const make = jest.spyOn(tls, 'createSecureContext');
    expect(secureContextFor(sets[8])).toBe(secureContextFor(sets[8]));
    expect(make).not.toHaveBeenCalled();
    expect(secureContextFor(sets[0])).not.toBe(first);
    expect(make).toHaveBeenCalledTimes(1);
  });
});
