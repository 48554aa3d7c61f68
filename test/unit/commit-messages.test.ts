// The commit-message rule .ci/run checks (scripts/commit-messages.cjs): each way a message breaks it, and a real
// repository whose one bad commit among good ones is found.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { problemsOf, checkRange } = require('../../scripts/commit-messages.cjs') as {
  problemsOf(message: string): string[];
  checkRange(range: string, cwd: string): Array<{ subject: string; problems: string[] }>;
};

const GOOD = 'Bind ID-JAG users to their IdP\n\nAn IdP could name any user by email; now only its own.\n';

test('a short imperative subject, a blank line and a body keep the rule', () => {
  expect(problemsOf(GOOD)).toEqual([]);
  expect(problemsOf(`${'A'.repeat(72)}\n\nWhy.`)).toEqual([]);
});

test.each([
  ['a subject of 73 characters', `${'A'.repeat(73)}\n\nWhy.`, /73 characters/],
  ['no body', 'Bind ID-JAG users to their IdP\n', /no body/],
  ['a body of trailers alone', 'Bind users\n\nCo-authored-by: someone <a@b.c>\n', /no body/],
  ['no blank second line', 'Bind users\nWhy, on the next line.\n', /second line/],
  ['a subject in the past tense', 'Added a check\n\nWhy.', /instruction/],
  ['a subject in the third person', 'Fixes the check\n\nWhy.', /instruction/],
  ['a gerund', 'Renaming the handler\n\nWhy.', /instruction/],
  ['a subject that ends with a full stop', 'Bind users.\n\nWhy.', /punctuation/],
  ['an empty message', '', /empty/],
])('%s breaks it', (_name, message, problem) => {
  expect(problemsOf(message).join('; ')).toMatch(problem);
});

test('in a real repository, the one bad commit among good ones is found', () => {
  const dir = mkdtempSync(join(tmpdir(), 'commit-messages-'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
  try {
    git('init', '-q');
    const commit = (message: string) => {
      writeFileSync(join(dir, 'file'), message);
      git('add', 'file');
      git('commit', '-q', '-m', message);
    };
    commit('Start\n\nThe baseline.');
    const baseline = git('rev-parse', 'HEAD').trim();
    commit(GOOD);
    commit('Updated everything in one very long subject line that goes on and on past the limit');
    commit('Keep the rule again\n\nA good one after the bad one.');
    expect(checkRange(`${baseline}..HEAD`, dir)).toEqual([
      {
        id: expect.any(String),
        subject: 'Updated everything in one very long subject line that goes on and on past the limit',
        problems: [
          expect.stringMatching(/characters/),
          expect.stringMatching(/instruction/),
          expect.stringMatching(/no body/),
        ],
      },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
