// `check` against a hostile server on loopback: each field the server controls (its metadata's values, its headers)
// carries terminal control sequences, and what the command writes to stdout holds none of them. Security round four:
// a server's `issuer` erased the FAIL line, printed a fake "ok" line and set the window title. The contract (the
// reference app's): `check` never prints a control character it received from the server it checks (C0, DEL, C1).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli } from '../../lib/check/cli';

/** What the server answers, given its own origin; each case changes one field of a correct deployment's answers. */
interface Answers {
  status: number;
  location?: string;
  cors: string;
  prm: Record<string, unknown>;
  asm: Record<string, unknown>;
}

const correct = (origin: string): Answers => ({
  status: 401,
  cors: '*',
  prm: { resource: `${origin}/mcp`, authorization_servers: [origin] },
  asm: {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
  },
});

/** The server on 127.0.0.1 (no other address, no name to look up), answering what `hostile` makes of `correct`. */
async function serve(hostile: (answers: Answers) => Answers): Promise<{ url: string; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const answers = hostile(correct(origin));
  server.on('request', (req, res) => {
    // Header values go out as Latin-1: a C1 control (U+0080-U+009F) reaches the client as it was sent.
    res.setHeader('Access-Control-Allow-Origin', answers.cors);
    if (req.method === 'POST' && req.url === '/mcp') {
      res.statusCode = answers.status;
      if (answers.location) res.setHeader('Location', answers.location);
      res.setHeader(
        'WWW-Authenticate',
        `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      );
      return void res.end();
    }
    const body = {
      '/.well-known/oauth-protected-resource/mcp': answers.prm,
      '/.well-known/oauth-authorization-server': answers.asm,
    }[req.url ?? ''];
    if (!body) return void res.writeHead(404).end();
    res.setHeader('Content-Type', 'application/json');
    // A Buffer, not a string: Node writes the headers in the body's encoding, and UTF-8 would make U+009D two bytes.
    res.end(Buffer.from(JSON.stringify(body)));
  });
  return { url: `${origin}/mcp`, server };
}

/** Runs the command as the bin does (its default writer: stdout) and returns the exit code and what it wrote. */
async function runCheck(url: string): Promise<{ code: number; printed: string }> {
  const chunks: string[] = [];
  const write = jest
    .spyOn(process.stdout, 'write')
    .mockImplementation((chunk: string | Uint8Array) =>
      Boolean(chunks.push(Buffer.from(chunk).toString('utf8'))),
    );
  try {
    const code = await runCli(['check', url], undefined, { timeoutMs: 5000 });
    return { code, printed: chunks.join('') };
  } finally {
    write.mockRestore();
  }
}

/** C0 but the line feed that ends each line, DEL, C1, and the bidi controls that reorder a line (UAX #9). */
const UNPRINTABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** The longest line of our own text with two capped values in it is about 350 characters. */
const LONGEST_LINE = 500;

let running: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => running?.close(resolve) ?? resolve(undefined));
  running = undefined;
});

test.each([
  [
    'an issuer that erases the FAIL line and prints a fake ok line (CR, CSI 2K, CSI 1A)',
    (a: Answers) => ({
      ...a,
      asm: { ...a.asm, issuer: '\r\u001b[2K\u001b[1Aok   An MCP client can connect.' },
    }),
    '\\x0d\\x1b[2K\\x1b[1Aok   An MCP client can connect.',
  ],
  [
    'an issuer that sets the window title (OSC 0 ended by BEL), thousands of characters long',
    (a: Answers) => ({ ...a, asm: { ...a.asm, issuer: `\u001b]0;pwned\u0007${'x'.repeat(5000)}` } }),
    '\\x1b]0;pwned\\x07',
  ],
  [
    'an issuer that deletes what came before it (DEL, NUL)',
    (a: Answers) => ({ ...a, asm: { ...a.asm, issuer: 'https://as.example/\u007f\u007f\u0000' } }),
    'https://as.example/\\x7f\\x7f\\x00',
  ],
  [
    'a resource that reorders its line (RLO, LRI)',
    (a: Answers) => ({ ...a, prm: { ...a.prm, resource: 'http://evil.example/mcp\u202etxt.exe\u2066' } }),
    'http://evil.example/mcp\\u202etxt.exe\\u2066',
  ],
  [
    'a resource on a host thousands of characters long, that would bury the other findings',
    (a: Answers) => ({ ...a, prm: { ...a.prm, resource: `http://${'a'.repeat(5000)}.example/mcp` } }),
    `${'a'.repeat(180)}…`,
  ],
  [
    'a redirect whose Location holds an 8-bit CSI clearing the screen',
    (a: Answers) => ({ ...a, status: 302, location: '/elsewhere\u009b2J\u009b1A' }),
    '/elsewhere\\x9b2J\\x9b1A',
  ],
  [
    'an Access-Control-Allow-Origin holding an 8-bit OSC',
    (a: Answers) => ({ ...a, cors: '\u009d0;pwned\u009c' }),
    '\\x9d0;pwned\\x9c',
  ],
])('%s: printed escaped and capped, and the check fails', async (_attack, hostile, shown) => {
  const { url, server } = await serve(hostile);
  running = server;
  const { code, printed } = await runCheck(url);
  expect(code).toBe(1);
  expect(printed).not.toMatch(UNPRINTABLE);
  expect(printed).toContain(shown);
  const lines = printed.trimEnd().split('\n');
  expect(lines.filter((line) => line.length > LONGEST_LINE)).toEqual([]);
  expect(lines.at(-1)).toMatch(/^\d+ problems?: an MCP client cannot connect\.$/);
});
