// RSA key pairs for tests, each made once per checkout and kept in node_modules/.cache: a 2048-bit key takes
// 100-300 ms of CPU to generate, and the test files that need a handful paid for them again on every run. Each name
// is its own key (two names never share one), so a test that needs "a key nobody registered" still gets one, and
// what a test proves does not depend on a key being new: only on it being distinct from the others it uses.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CACHE = join(__dirname, '../../node_modules/.cache/test-rsa-keys');
const made = new Map<string, { privateKey: KeyObject; publicKey: KeyObject }>();

/** The RSA key pair called `name` (letters, digits and dashes), of `modulusLength` bits. */
export function rsaKeyPair(
  name: string,
  modulusLength = 2048,
): { privateKey: KeyObject; publicKey: KeyObject } {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`rsaKeyPair: "${name}" is not a key name (a-z, 0-9, -)`);
  const file = join(CACHE, `${name}-${modulusLength}.pem`);
  let pair = made.get(file);
  if (pair) return pair;
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(file, 'utf8'));
  } catch {
    privateKey = generateKeyPairSync('rsa', { modulusLength }).privateKey;
    // Written under a unique name, then renamed: two test files making the same key never read half a file. Where it
    // cannot be written (a read-only node_modules) the key is made again next time.
    const partial = `${file}.${process.pid}`;
    try {
      mkdirSync(CACHE, { recursive: true });
      writeFileSync(partial, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      renameSync(partial, file);
    } catch {
      // Not kept.
    }
  }
  pair = { privateKey, publicKey: createPublicKey(privateKey) };
  made.set(file, pair);
  return pair;
}
