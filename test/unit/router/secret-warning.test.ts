// Security round four: without `secret`, a restart (or another instance) turns a lost-answer retry into reuse and
// revokes the grant. The router says so once, at start, with the fix; never with a secret, never twice.
import { createJwtSigner } from '../../../lib/crypto/signer';
import { createMemoryStore } from '../../../lib/store/memory';

const OPTIONS = {
  issuer: 'https://api.example.com',
  scopes: { 'notes:read': 'Read your notes' },
  authenticateUser: () => null,
};

function freshRouterModule() {
  let module: typeof import('../../../lib/router') | undefined;
  jest.isolateModules(() => {
    module = require('../../../lib/router');
  });
  return module!;
}

let warn: jest.SpyInstance;
beforeEach(() => {
  warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
});
afterEach(() => warn.mockRestore());

test('a router without secret warns once per process, saying what happens and how to fix it', () => {
  const { createOAuthRouter } = freshRouterModule();
  createOAuthRouter(createMemoryStore(), createJwtSigner(), OPTIONS);
  createOAuthRouter(createMemoryStore(), createJwtSigner(), OPTIONS);
  expect(warn).toHaveBeenCalledTimes(1);
  expect(warn.mock.calls[0]).toEqual([
    'express-mcp-oauth: no `secret` given, so this process made a random one. After a restart, or on another ' +
      'instance, a refresh token presented again (a retry of a lost answer, a token shared by two processes) is ' +
      'taken for reuse and its grant revoked, and sign-in cookies stop working. Give every instance the same 32+ ' +
      'bytes, e.g. secret: process.env.OAUTH_SECRET (make one with `openssl rand -base64 32`).',
  ]);
});

test.each([
  ['a string', 's'.repeat(32)],
  ['a Buffer', Buffer.alloc(32, 7)],
])('a router given a secret (%s) says nothing', (_name, secret) => {
  const { createOAuthRouter } = freshRouterModule();
  createOAuthRouter(createMemoryStore(), createJwtSigner(), { ...OPTIONS, secret });
  expect(warn).not.toHaveBeenCalled();
});
