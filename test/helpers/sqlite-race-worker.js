// A worker thread that, for each race it is sent, opens its own connection to a SQLite store and, once every racer is
// ready, fires its calls: real concurrency between connections, which a single thread cannot produce with a
// synchronous driver.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { parentPort, threadId } = require('node:worker_threads');

// Load the library's TypeScript sources directly, so the race runs the code under test, not a build of it. Each
// file's JavaScript is kept on disk under the hash of what made it (TypeScript's version, the options below, the
// file's name and text): a race starts eight workers, and sixteen races each loading TypeScript (9 MB) and
// transpiling the store's imports again took 80 s of the edit loop's two cores. TypeScript is loaded only when a
// source changed; where the cache cannot be written (a read-only node_modules), each worker transpiles for itself.
const CACHE = path.join(__dirname, '../../node_modules/.cache/sqlite-race-worker');
const OPTIONS = { module: 'CommonJS', target: 'ES2022', esModuleInterop: true };
const MADE_BY = `${require('typescript/package.json').version} ${JSON.stringify(OPTIONS)}`;
let ts;
require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha256').update(MADE_BY).update('\0').update(filename).update('\0');
  const cached = path.join(CACHE, `${key.update(source).digest('hex')}.js`);
  let outputText;
  try {
    outputText = fs.readFileSync(cached, 'utf8');
  } catch {
    ts ??= require('typescript');
    ({ outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind[OPTIONS.module],
        target: ts.ScriptTarget[OPTIONS.target],
        esModuleInterop: OPTIONS.esModuleInterop,
      },
      fileName: filename,
    }));
    // Written under a unique name, then renamed: racing workers never read half a file.
    const partial = `${cached}.${process.pid}.${threadId}`;
    try {
      fs.mkdirSync(CACHE, { recursive: true });
      fs.writeFileSync(partial, outputText);
      fs.renameSync(partial, cached);
    } catch {
      // Not kept: the next worker transpiles again.
    }
  }
  module._compile(outputText, filename);
};

const { createSqliteStore } = require('../../lib/store/sqlite.ts');

// One race per message (the harness keeps its workers for a whole test file and races one at a time): a connection
// of its own to the race's database, ready, then every call at the starting gun.
parentPort.on('message', ({ path, now, calls, signal: shared, groupCommit }) => {
  const store = createSqliteStore(path, { now: () => now, groupCommit });
  // Ready, then blocked until the starting gun (signal[0]) fires: the message reaches the main thread meanwhile.
  const signal = new Int32Array(shared);
  parentPort.postMessage({ ready: true });
  Atomics.wait(signal, 0, 0);
  // Every call is fired before any is awaited: with group commit, one worker's calls share a transaction too.
  const settled = calls.map(async ({ method, args }) => {
    try {
      return await store[method](...args);
    } catch (error) {
      return { error: String(error && error.message) };
    }
  });
  Promise.all(settled).then((results) => {
    store.close();
    parentPort.postMessage({ results });
  });
});
