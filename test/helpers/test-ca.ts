// A throwaway certificate authority made by the test run itself (openssl), and a server certificate it signed for
// the loopback names the tests use. Nothing here is trusted outside the process that asks for it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  /** The CA certificate (PEM): what a client must trust. */
  caPem: string;
  /** The same, as a file, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** The server's key and certificate (PEM), valid for the names below. */
  keyPem: string;
  certPem: string;
}

/** Host names the server certificate is valid for; tests point them at 127.0.0.1 through an injected resolver. */
export const TEST_HOSTS = ['localhost', 'claude.ai.test', 'chatgpt.com.test', 'vscode.dev.test', 'evil.test'];

let made: TestCa | undefined;

export function testCa(): TestCa {
  if (made) return made;
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-ca-'));
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=express-mcp-oauth test CA',
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.pem'),
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    path('server.key'),
    '-out',
    path('server.csr'),
  );
  const names = [...TEST_HOSTS.map((host) => `DNS:${host}`), 'IP:127.0.0.1', 'IP:::1'].join(',');
  writeFileSync(path('ext.cnf'), `subjectAltName=${names}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    path('server.csr'),
    '-CA',
    path('ca.pem'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    path('ext.cnf'),
    '-out',
    path('server.pem'),
  );
  made = {
    caPem: readFileSync(path('ca.pem'), 'utf8'),
    caFile: path('ca.pem'),
    keyPem: readFileSync(path('server.key'), 'utf8'),
    certPem: readFileSync(path('server.pem'), 'utf8'),
  };
  return made;
}
