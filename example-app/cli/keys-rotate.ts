// `npm run keys:rotate`: makes a new signing key current, with the same environment as `npm start`. The JWKS
// publishes it at once; running instances sign with it within KEYS_REFRESH_SECONDS (60 s at most); the old key keeps
// verifying until every token it signed has expired, and is then deleted by a later rotation.
import { ConfigError, readConfig } from '../config';
import { openAppDatabase } from '../db/open';
import { createSecretSealer, loadSecretKey } from '../db/secret-key';
import { openSigner } from '../keys';

export async function rotateSigningKey(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const config = readConfig(env);
  if (config.signingKey)
    throw new ConfigError(
      'SIGNING_KEY is set, so the app signs with that one key: unset it to use the rotating key set in the database.',
    );
  const database = await openAppDatabase(config);
  try {
    const key = loadSecretKey(config);
    const signer = await openSigner(config, database.db, database.store, {
      key,
      sealer: createSecretSealer(key),
    });
    try {
      const before = signer.keys!().find((entry) => entry.state === 'current')?.kid;
      const kid = await signer.rotate!();
      const pruned = await signer.pruneKeys!();
      const retired = signer.keys!().find((entry) => entry.kid === before);
      const until = retired?.publishedUntil ? new Date(retired.publishedUntil).toISOString() : 'now';
      return (
        `Signing key ${kid} is current. ${before} is retired and verifies until ${until}.` +
        (pruned ? ` Deleted ${pruned} key(s) whose tokens have all expired.` : '')
      );
    } finally {
      signer.close!();
    }
  } finally {
    await database.close();
  }
}

if (require.main === module) {
  rotateSigningKey().then(
    (line) => console.log(line),
    (error: unknown) => {
      console.error(`Cannot rotate the signing key: ${(error as Error)?.message ?? String(error)}`);
      process.exit(1);
    },
  );
}
