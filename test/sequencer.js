// The order test files start in. With two workers the run ends when the last long file ends, so the longest go first
// (the classic longest-first rule). Jest's own sequencer does that from the durations it cached
// on an earlier run; on a fresh clone it has none and goes by file size, which would start the store contract (a
// 500-byte file of racing workers) last. So files this list names count as long as measured here,
// until Jest has timed them itself; failed files still go first.
const Sequencer = require('@jest/test-sequencer').default;
const { relative } = require('node:path');

/** Seconds each took alone on the two-core CI machine (2026-11, under other load): the slow tail of `npm test`. */
const MEASURED_SECONDS = {
  'test/conformance/server-scenarios.test.ts': 60,
  'test/store-contract/sqlite.test.ts': 5,
  'test/example-app/upstream-sign-in.test.ts': 30,
  'test/flows/upstream-example.test.ts': 25,
  'test/example-app/processes.test.ts': 21,
  'test/package/pack.test.ts': 15,
  'test/conformance/authorization-server.test.ts': 14,
  'test/example-app/tools.test.ts': 13,
  'test/example-app/accessibility.test.ts': 14,
  'test/flows/fuzz.test.ts': 13,
  'test/http/client-metadata-documents.test.ts': 10,
  'test/example-app/crash.test.ts': 8,
  'test/example-app/multi-instance.test.ts': 8,
  'test/example-app/cimd-journey.test.ts': 5.5,
  'test/example-app/mcp-client-journey.test.ts': 5.5,
  'test/compat/module-matrix.test.ts': 5,
  'test/flows/browser-journey.test.ts': 4,
  'test/flows/upstream-sign-in.test.ts': 7,
  'test/flows/upstream-attacks.test.ts': 6,
  'test/example-app/audit.test.ts': 3.5,
  'test/example-app/screenshots.test.ts': 3.5,
  'test/store-contract/postgres.test.ts': 3.5,
  'test/unit/outbound/safe-fetch.test.ts': 3.5,
};

class LongestFirst extends Sequencer {
  sort(tests) {
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    const duration = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached;
      const listed = MEASURED_SECONDS[relative(test.context.config.rootDir, test.path).split('\\').join('/')];
      return listed === undefined ? undefined : listed * 1000;
    };
    for (const test of tests) test.duration = duration(test);
    return [...tests].sort((a, b) => {
      const failed = Number(this.hasFailed(b)) - Number(this.hasFailed(a));
      if (failed !== 0) return failed;
      // Known durations first, longest first; then the unknown, biggest file first (Jest's own guess).
      if ((a.duration == null) !== (b.duration == null)) return a.duration == null ? 1 : -1;
      if (a.duration != null) return b.duration - a.duration;
      return size(b) - size(a);
    });
  }
}

module.exports = LongestFirst;
