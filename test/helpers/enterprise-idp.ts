// A toy enterprise IdP for the jwt-bearer grant's tests: its RFC 8414 metadata and JWKS served over https on
// loopback (the document server, with the test CA), and ID-JAGs (draft-ietf-oauth-identity-assertion-authz-grant
// §3.1) minted with a key whose JWK it publishes. Claims and header are overridable one by one, to forge each fault.
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from './document-server';
import { testCa } from './test-ca';

/**
 * The router's fetch settings (clientMetadataDocuments) under which it reaches these IdPs: loopback allowed, the test
 * CA trusted, every name resolved to loopback. 1500 ms gives room for a first fetch under a full npm test (undici
 * loaded, the test CA's context made, a TLS handshake, then discovery and the key set): at 400 ms a file's first
 * grant failed now and then on a busy machine.
 */
export const idpFetchSettings = () => ({
  allowLoopback: true,
  ca: testCa().caPem,
  resolveHost: resolveToLoopback,
  timeoutMs: 1500,
});

export interface EnterpriseIdp {
  server: DocumentServer;
  /** https://localhost:PORT: its issuer identifier. */
  issuer: string;
  jwksPath: string;
  /** An ID-JAG for `claims` (merged over valid ones), signed with the published key unless `sign` says otherwise. */
  mint(claims: Record<string, unknown>, options?: MintOptions): string;
  /** Publishes another key (a rotation); returns its kid. */
  rotate(): string;
  stop(): Promise<void>;
}

interface MintOptions {
  header?: Record<string, unknown>;
  /** Sign with this key (and kid) instead of the published one. */
  key?: { privateKey: KeyObject; kid: string };
  /** Leave claims out entirely (undefined in `claims` leaves them out too). */
  omit?: string[];
}

const newKey = (kid: string) => {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid,
    privateKey: pair.privateKey,
    jwk: { ...pair.publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'ES256' },
  };
};

export async function startEnterpriseIdp(): Promise<EnterpriseIdp> {
  const server = await startDocumentServer();
  const issuer = server.url('', 'localhost');
  const jwksPath = '/jwks';
  const keys = [newKey('idp-1')];
  const publish = () => server.json(jwksPath, { keys: keys.map((key) => key.jwk) });
  server.json('/.well-known/oauth-authorization-server', {
    issuer,
    token_endpoint: `${issuer}/token`,
    jwks_uri: server.url(jwksPath, 'localhost'),
  });
  publish();
  return {
    server,
    issuer,
    jwksPath,
    mint(claims, { header = {}, key, omit = [] } = {}) {
      const signing = key ?? keys[keys.length - 1]!;
      const payload: Record<string, unknown> = { iss: issuer, jti: randomUUID(), ...claims };
      for (const name of omit) delete payload[name];
      for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
      return jwt.sign(payload, signing.privateKey, {
        algorithm: 'ES256',
        // An iat left out with undefined stays out: jsonwebtoken would otherwise add its own.
        noTimestamp: 'iat' in claims && claims.iat === undefined,
        header: { alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: signing.kid, ...header } as jwt.JwtHeader,
      });
    },
    rotate() {
      const key = newKey(`idp-${keys.length + 1}`);
      keys.push(key);
      publish();
      return key.kid;
    },
    stop: () => server.stop(),
  };
}

/** A key nobody published, to sign a forgery with. */
export const strayKey = (kid: string) => {
  const { privateKey } = newKey(kid);
  return { privateKey, kid };
};

/**
 * The ID-JAG `idp` issues for the user with `email`, to the app at `base` and its client `clientId`, for the app's
 * /mcp (draft-ietf-oauth-identity-assertion-authz-grant §3.1's claims), valid for two minutes.
 */
export function idJagFor(
  idp: EnterpriseIdp,
  { base, clientId, email }: { base: string; clientId: string; email: string },
  claims: Record<string, unknown> = {},
): string {
  const now = Math.floor(Date.now() / 1000);
  return idp.mint({
    sub: `idp-user-${randomUUID()}`,
    email,
    email_verified: true,
    aud: base,
    client_id: clientId,
    resource: `${base}/mcp`,
    iat: now,
    exp: now + 120,
    ...claims,
  });
}
