// test:fast only (jest.fast.config.js; CI never uses this file). It marks the run as the edit loop, and the helpers
// of test/helpers/edit-loop.ts then: keep the HTTP tests' SQLite stores in memory rather than in a temp file each
// (createTestServer; the SQLite store's file handling stays in the loop through its contract suite), and skip the
// tests that wait on real time (stallTest). `npm test` runs every test, on files and with every stall.
process.env.TEST_FAST_LOOP = '1';
// The framing property (test/mcp/framing.property.test.ts) at half its runs, on the same seeds: the first 60
// framings of each case, enough that every path still serves some (the file's last tests check that). A count set
// in the shell wins: `FRAMING_RUNS=500 npm run test:fast` searches deeper.
process.env.FRAMING_RUNS ??= '60';
