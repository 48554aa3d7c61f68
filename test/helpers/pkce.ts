// PKCE pairs for tests: a fresh verifier and its S256 challenge.
import { randomBytes, createHash } from 'node:crypto';

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
