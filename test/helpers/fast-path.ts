// The OAuth router's fast path under the suites written for the router: a test file that calls runThroughFastPath()
// before requiring them has every supertest request to a mountTestApp app served by http.createServer(
// fastPath(oauth, app)) instead of the app, and can count how many the fast path took and how many it left to Express.
import type { RequestListener } from 'node:http';
import type { Express } from 'express';
import type { OAuthRouter } from '../../lib/router';
import { fastPath } from '../../lib/experimental';

interface FastPathState {
  listeners: WeakMap<object, RequestListener>;
  /** Requests that reached the listener; those the fast path handed on to Express. */
  counts: { requests: number; toExpress: number };
}

const KEY = Symbol.for('express-mcp-oauth.test.fastPath');
// Per test file: Jest gives each file its own global object, so a file that turns this on affects no other.
const state = () => (globalThis as { [KEY]?: FastPathState })[KEY];

/** Turns the fast path on for this test file's apps (call before requiring the suites). */
export function runThroughFastPath(): FastPathState['counts'] {
  const fresh: FastPathState = { listeners: new WeakMap(), counts: { requests: 0, toExpress: 0 } };
  (globalThis as { [KEY]?: FastPathState })[KEY] = fresh;
  return fresh.counts;
}

/** Called by mountTestApp: with the fast path on, the listener supertest is given instead of `app`. */
export function registerFastPath(app: Express, oauth: OAuthRouter): void {
  const current = state();
  if (!current) return;
  const { counts } = current;
  const toExpress = Object.assign(
    ((req, res) => {
      counts.toExpress += 1;
      app(req, res);
    }) as RequestListener,
    // The app's settings (trust proxy), as the fast path reads them from an Express app.
    { get: (setting: string) => app.get(setting) },
  );
  const fast = fastPath(oauth, toExpress);
  current.listeners.set(app, (req, res) => {
    counts.requests += 1;
    fast(req, res);
  });
}

/** supertest, with each app that has a fast path replaced by it (jest.mock('supertest', ...) in the test file). * @public
 */
export function fastSupertest(): unknown {
  const actual = jest.requireActual('supertest') as ((app: unknown) => unknown) & {
    agent: (app: unknown) => unknown;
  };
  const swap = (app: unknown) => (app && state()?.listeners.get(app as object)) ?? app;
  return Object.assign((app: unknown) => actual(swap(app)), actual, {
    agent: (app: unknown) => actual.agent(swap(app)),
  });
}
