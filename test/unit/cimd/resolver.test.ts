// The document resolver over a fake fetcher and a fake clock: what a caller is told for each way a fetch fails (the
// network's behaviour never, the document's content always), which failures are remembered and for how long, and
// that each failure is reported once, with its detail.
import { generateKeyPairSync } from 'node:crypto';
import { OAuthError } from '../../../lib/errors';
import { createClientDocumentResolver, type FetchFailureReport } from '../../../lib/cimd/resolver';
import { FAILURE_CACHE_MS } from '../../../lib/outbound/cache-policy';
import { FetchRefusedError, type FetchFailure, type SafeFetcher } from '../../../lib/outbound/safe-fetch';
import { createFakeClock, SECOND } from '../../helpers/clock';
import { clientRecord } from '../../../lib/testing/fixtures';

const URL_ID = 'https://app.example/oauth/client.json';
const GENERIC = "The client's metadata document could not be fetched.";

function setUp(answer: (url: string) => Promise<unknown>) {
  const clock = createFakeClock(1_000_000);
  const calls: string[] = [];
  const reports: FetchFailureReport[] = [];
  const fetcher: SafeFetcher = {
    getJson: async (url) => {
      calls.push(url);
      return { body: await answer(url), cacheControl: undefined };
    },
  };
  const resolver = createClientDocumentResolver({
    settings: { enabled: true, minCacheMs: 300 * SECOND, maxCacheMs: 86_400 * SECOND, maxBytes: 5120 },
    fetcher,
    scopeCatalogue: new Set(['notes:read']),
    now: clock.now,
    onFailed: (failure) => void reports.push(failure),
  });
  return { clock, calls, reports, resolver };
}

const refused = (reason: FetchFailure, message: string) => () =>
  Promise.reject(new FetchRefusedError(reason, message));

describe('client document resolver', () => {
  // Every way the network or another host can fail: the caller hears the same sentence, the report the rest.
  test.each([
    ['refused_address', 'the host a.example resolves to 10.0.0.1, a private address, which is never fetched'],
    ['unresolvable', 'the host a.example could not be resolved (getaddrinfo ENOTFOUND a.example)'],
    ['timeout', 'it did not answer within 5000 ms'],
    ['network', 'it could not be fetched (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:8443)'],
    ['http_status', 'it answered HTTP 401 instead of 200'],
    ['content_type', 'its content type is "text/html" instead of application/json'],
    ['too_large', 'it is 90000 bytes, more than the 5120 allowed'],
  ] as Array<[FetchFailure, string]>)(
    'a %s failure is answered generically and reported in full',
    async (reason, detail) => {
      const { resolver, reports } = setUp(refused(reason, detail));
      const error = await resolver.findClient(URL_ID).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAuthError);
      expect((error as OAuthError).toJSON()).toEqual({ error: 'invalid_client', error_description: GENERIC });
      expect(reports).toEqual([{ clientId: URL_ID, reason, detail: `${URL_ID}: ${detail}` }]);
    },
  );

  test('a busy server is temporarily_unavailable with Retry-After, and not remembered against the URL', async () => {
    let busy = true;
    const { resolver, calls } = setUp((url) =>
      busy
        ? refused('busy', 'too many fetches are waiting already')()
        : Promise.resolve({ client_id: url, client_name: 'App', redirect_uris: ['https://app.example/cb'] }),
    );
    const error = (await resolver.findClient(URL_ID).catch((e: unknown) => e)) as OAuthError;
    expect(error.code).toBe('temporarily_unavailable');
    expect(error.status).toBe(503);
    expect(error.headers['Retry-After']).toBe('5');
    busy = false;
    expect((await resolver.findClient(URL_ID)).clientName).toBe('App');
    expect(calls).toHaveLength(2);
  });

  test('a failure is remembered for 30 s, reported once, then fetched again', async () => {
    const { resolver, calls, reports, clock } = setUp(refused('timeout', 'it did not answer within 5000 ms'));
    const first = await resolver.findClient(URL_ID).catch((e: unknown) => e);
    clock.advance(FAILURE_CACHE_MS - 1);
    const again = await resolver.findClient(URL_ID).catch((e: unknown) => e);
    // The remembered failure itself: the same error underneath, not a new fetch that failed alike.
    expect((again as Error).cause).toBe((first as Error).cause);
    expect(calls).toHaveLength(1);
    expect(reports).toHaveLength(1);
    clock.advance(1);
    await resolver.findClient(URL_ID).catch(() => undefined);
    expect(calls).toHaveLength(2);
    expect(reports).toHaveLength(2);
  });

  test('an invalid document is explained, remembered and reported as invalid_document', async () => {
    const { resolver, calls, reports } = setUp(async () => ({ client_id: URL_ID, client_name: 'App' }));
    for (let i = 0; i < 3; i += 1) {
      await expect(resolver.findClient(URL_ID)).rejects.toMatchObject({
        code: 'invalid_client',
        description: expect.stringMatching(/is not valid: redirect_uris is required/),
      });
    }
    expect(calls).toHaveLength(1);
    expect(reports).toEqual([
      { clientId: URL_ID, reason: 'invalid_document', detail: expect.stringContaining('redirect_uris') },
    ]);
  });

  test('a jwks_uri that cannot be fetched is answered generically, reported under the client', async () => {
    const { resolver, reports } = setUp(refused('refused_address', 'the host keys.example resolves to ::1'));
    const client = clientRecord({
      tokenEndpointAuthMethod: 'private_key_jwt',
      metadata: { jwks_uri: 'https://keys.example/jwks.json' },
    });
    await expect(resolver.clientKeys(client)).rejects.toMatchObject({
      code: 'invalid_client',
      description: "The client's key set (jwks_uri) could not be fetched.",
    });
    expect(reports).toEqual([
      {
        clientId: client.clientId,
        reason: 'refused_address',
        detail: 'https://keys.example/jwks.json: the host keys.example resolves to ::1',
      },
    ]);
  });

  // An unknown kid (anyone can send one) reads a jwks_uri again: a refetch that failed for a moment, perhaps while a
  // stranger held every fetch slot, used to drop the client's working key set, and the remembered failure kept the
  // client from authenticating for 30 s. Only a host saying the key set is gone, or serving an invalid one, drops it.
  describe('a refetch that fails while a copy is within its lifetime', () => {
    const jwks = {
      keys: [
        {
          ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
          kid: 'k1',
        },
      ],
    };
    const client = clientRecord({
      tokenEndpointAuthMethod: 'private_key_jwt',
      metadata: { jwks_uri: 'https://keys.example/jwks.json' },
    });
    const status = (code: number) => () =>
      Promise.reject(new FetchRefusedError('http_status', `it answered HTTP ${code} instead of 200`, code));

    test.each([
      ['a timeout', 'kept', refused('timeout', 'it did not answer within 5000 ms')],
      ['a refused connection', 'kept', refused('network', 'it could not be fetched (ECONNREFUSED)')],
      ['a name that no longer resolves', 'kept', refused('unresolvable', 'getaddrinfo ENOTFOUND')],
      ['no fetch slot', 'kept', refused('busy', 'too many fetches are waiting already')],
      ['a 503', 'kept', status(503)],
      ['a 404 (withdrawn)', 'dropped', status(404)],
      ['a 410 (withdrawn)', 'dropped', status(410)],
      ['an invalid key set', 'dropped', async () => ({ keys: [] })],
      ['a body that is not JSON', 'dropped', refused('invalid_json', 'it is not valid JSON')],
    ] as Array<[string, 'kept' | 'dropped', () => Promise<unknown>]>)(
      '%s: the last good key set is %s',
      async (_name, outcome, failing) => {
        let answer: () => Promise<unknown> = async () => jwks;
        const { resolver, clock, calls } = setUp(() => answer());
        const [key] = await resolver.clientKeys(client);
        clock.advance(11 * SECOND);
        answer = failing;
        await expect(resolver.clientKeys(client, { refetch: true })).rejects.toBeInstanceOf(OAuthError);
        const after = resolver.clientKeys(client);
        if (outcome === 'kept') await expect(after).resolves.toEqual([key]);
        else await expect(after).rejects.toMatchObject({ code: 'invalid_client' });
        expect(calls).toHaveLength(2);
      },
    );

    test('a copy kept past a failure is served until its own lifetime ends, and never after', async () => {
      let answer: () => Promise<unknown> = async () => jwks;
      const { resolver, clock, calls } = setUp(() => answer());
      const [key] = await resolver.clientKeys(client);
      clock.advance(11 * SECOND);
      answer = refused('timeout', 'it did not answer within 5000 ms');
      await expect(resolver.clientKeys(client, { refetch: true })).rejects.toMatchObject({
        code: 'invalid_client',
      });
      // Within the remembered failure, even a refetch gets the copy, and nothing is fetched.
      await expect(resolver.clientKeys(client, { refetch: true })).resolves.toEqual([key]);
      expect(calls).toHaveLength(2);
      // The copy's lifetime (300 s, the floor: no Cache-Control) ends; the failure is fetched again and is the answer.
      clock.advance(300 * SECOND - 11 * SECOND);
      await expect(resolver.clientKeys(client)).rejects.toMatchObject({ code: 'invalid_client' });
      expect(calls).toHaveLength(3);
    });
  });

  test('a failure that is not the fetch (a bug) goes on as it is, unreported', async () => {
    const bug = new TypeError('boom');
    const { resolver, reports } = setUp(() => Promise.reject(bug));
    await expect(resolver.findClient(URL_ID)).rejects.toBe(bug);
    expect(reports).toEqual([]);
  });
});
