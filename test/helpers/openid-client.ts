// Runs the openid-client journey (test/helpers/openid-client-driver.mjs) against a server, in its own process:
// openid-client is ESM-only and Jest runs CommonJS.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface OpenidClientJourney {
  clientId: string;
  authMethod: string;
  issuerInCallback: string;
  tokenType: string;
  scope: string;
  expiresIn: number;
  rotated: boolean;
  /** The last access token, issued before the revocation. */
  accessToken: string;
  refreshAfterRevocation: string;
  /** With `call-tool`: the text of the MCP tool whoami's answer (or the status and body of a failure). */
  toolCall?: string;
}

export async function runOpenidClientJourney(
  baseUrl: string,
  email: string,
  password: string,
  extraStep?: 'call-tool',
): Promise<OpenidClientJourney> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      join(__dirname, 'openid-client-driver.mjs'),
      baseUrl,
      email,
      password,
      ...(extraStep ? [extraStep] : []),
    ],
    {
      timeout: 30_000,
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!);
}
