// npm run client:create -- --name N --grant-types G[,G...] [--user EMAIL] [--scope "S ..."] [--jwks-uri URL]
// [--redirect-uri URI ...]: registers a client on the operator's word (a machine client, a browser client, or an
// enterprise app with the grant type urn:ietf:params:oauth:grant-type:jwt-bearer, a service that exchanges tokens with
// urn:ietf:params:oauth:grant-type:token-exchange), with the same environment as
// `npm start`, and prints it as one JSON object (the last line). Bad input: a one-line message on stderr and a
// non-zero exit.
import { parseArgs } from 'node:util';
import { readConfig } from '../config';
import { openAppDatabase } from '../db/open';
import { createOperatorClient, OperatorClientInputError, readOperatorClientInput } from '../operator-clients';

const USAGE =
  'Usage: npm run client:create -- --name N --grant-types G[,G...] [--user EMAIL] [--scope "S ..."] ' +
  '[--jwks-uri URL] [--redirect-uri URI ...]';

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        name: { type: 'string' },
        'grant-types': { type: 'string' },
        user: { type: 'string' },
        scope: { type: 'string' },
        'jwks-uri': { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(`${(error as Error).message.replace(/\.?$/, '.')} ${USAGE}`);
    return 2;
  }
  const input = {
    name: values.name,
    grantTypes: values['grant-types'],
    user: values.user,
    scope: values.scope,
    jwksUri: values['jwks-uri'],
    redirectUris: values['redirect-uri'],
  };
  try {
    // Checked before the database is opened (or created): a typo leaves no trace.
    readOperatorClientInput(input);
  } catch (error) {
    if (!(error instanceof OperatorClientInputError)) throw error;
    console.error(error.message);
    return 1;
  }
  const { db, store, close, description } = await openAppDatabase(readConfig());
  try {
    const client = await createOperatorClient(db, store, input);
    console.log(
      `Registered client "${values.name!.trim()}" in ${description}` +
        (client.client_secret ? ': its secret is shown once, below; only its hash is kept.' : '.'),
    );
    console.log(JSON.stringify(client));
    return 0;
  } catch (error) {
    if (error instanceof OperatorClientInputError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    await close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // One line, as every other refusal (a driver's message may span several).
    console.error(`Cannot create the client: ${String((error as Error)?.message ?? error).split('\n')[0]}`);
    process.exitCode = 1;
  },
);
