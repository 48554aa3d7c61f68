// The commit-message rule, checked by .ci/run on every commit since the rule began: a subject of at most 72
// characters in the imperative, a blank line, then a body that says why. The history is how the next person learns
// the code; a subject that is a paragraph, or a change with no why, teaches nothing.
const { execFileSync } = require('node:child_process');

/** The last commit before the rule: what came before it is history as it was written. */
const BASELINE = 'f263631fab38235d0015f0183f5372903f69d7ab';
const MAX_SUBJECT = 72;
// Past tense, gerunds and third person at the start of a subject: a description of a change, not an instruction.
const NOT_IMPERATIVE =
  /^(Added|Adding|Adds|Changed|Changing|Changes|Fixed|Fixing|Fixes|Removed|Removing|Removes|Updated|Updating|Updates|Moved|Moving|Moves|Renamed|Renaming|Renames|Made|Making|Makes|Implemented|Implementing|Implements)\b/;

/** The problems of one commit message (empty when it keeps the rule). */
function problemsOf(message) {
  const lines = message.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
  const subject = lines[0] ?? '';
  const problems = [];
  if (!subject.trim()) problems.push('the subject is empty');
  if (subject.length > MAX_SUBJECT)
    problems.push(`the subject is ${subject.length} characters; keep it to ${MAX_SUBJECT}`);
  if (/[.:;,]$/.test(subject)) problems.push('the subject ends with punctuation');
  if (NOT_IMPERATIVE.test(subject))
    problems.push(`the subject starts "${subject.split(' ')[0]}"; write it as an instruction ("Add", "Fix")`);
  if (lines.length > 1 && lines[1].trim() !== '') problems.push('the second line is not blank');
  if (!lines.slice(2).some((line) => line.trim() && !/^[\w-]+: /.test(line)))
    problems.push('there is no body saying why');
  return problems;
}

/** The commits of `range` (git rev-list syntax), merges left out, each with its problems. */
function checkRange(range, cwd) {
  const git = (...args) => execFileSync('git', args, { cwd, encoding: 'utf8' });
  const ids = git('rev-list', '--no-merges', range).split('\n').filter(Boolean);
  return ids
    .map((id) => ({
      id,
      subject: git('log', '-1', '--format=%s', id).trim(),
      problems: problemsOf(git('log', '-1', '--format=%B', id)),
    }))
    .filter((commit) => commit.problems.length > 0);
}

module.exports = { BASELINE, MAX_SUBJECT, problemsOf, checkRange };

if (require.main === module) {
  const cwd = process.argv[2] ?? process.cwd();
  let range = `${BASELINE}..HEAD`;
  try {
    execFileSync('git', ['cat-file', '-e', `${BASELINE}^{commit}`], { cwd, stdio: 'ignore' });
  } catch {
    // A shallow clone without the baseline: the newest commit at least.
    console.warn(`commit-messages: ${BASELINE.slice(0, 7)} is not in this clone; checking HEAD alone.`);
    range = 'HEAD^!';
  }
  const bad = checkRange(range, cwd);
  for (const { id, subject, problems } of bad)
    console.error(`${id.slice(0, 7)} "${subject.slice(0, 80)}": ${problems.join('; ')}`);
  if (bad.length) {
    console.error(
      `\n${bad.length} commit message(s) break the rule: a subject of at most ${MAX_SUBJECT} characters in the imperative, a blank line, a body that says why (git commit --amend, or git rebase -i to reword).`,
    );
    process.exit(1);
  }
  console.log(`commit-messages: every commit since ${BASELINE.slice(0, 7)} keeps the rule.`);
}
