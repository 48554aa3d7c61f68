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
  expect(warn.mock.calls[0]![0]).toMatch(
    /no `secret` given.*restart.*taken for reuse and its grant revoked.*openssl rand -base64 32/s,
  );
});

test.each([
  ['a string', 's'.repeat(32)],
  ['a Buffer', Buffer.alloc(32, 7)],
])('a router given a secret (%s) says nothing', (_name, secret) => {
  const { createOAuthRouter } = freshRouterModule();
  createOAuthRouter(createMemoryStore(), createJwtSigner(), { ...OPTIONS, secret });
  expect(warn).not.toHaveBeenCalled();
});
