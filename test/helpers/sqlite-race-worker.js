// A worker thread that opens its own connection to a SQLite store and, once every racer is ready, fires its
// calls: real concurrency between connections, which a single thread cannot produce with a synchronous driver.
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const ts = require('typescript');

// Load the library's TypeScript sources directly, so the race runs the code under test, not a build of it.
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
    fileName: filename,
  });
  module._compile(outputText, filename);
};

const { createSqliteStore } = require('../../lib/store/sqlite.ts');
const store = createSqliteStore(workerData.path, {
  now: () => workerData.now,
  groupCommit: workerData.groupCommit,
});
const signal = new Int32Array(workerData.signal);
Atomics.add(signal, 1, 1);
Atomics.notify(signal, 1);
Atomics.wait(signal, 0, 0);
// Every call is fired before any is awaited: with group commit, one worker's calls share a transaction too.
const settled = workerData.calls.map(async ({ method, args }) => {
  try {
    return await store[method](...args);
  } catch (error) {
    return { error: String(error && error.message) };
  }
});
Promise.all(settled).then((results) => {
  store.close();
  parentPort.postMessage(results);
});
