// axe-core in a Chromium tab: injected through the DevTools protocol (page.evaluate), which the pages' strict CSP does
// not govern, then run with every rule it runs by default (WCAG 2.x A and AA, and its best practices).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(join(dirname(require.resolve('axe-core')), 'axe.min.js'), 'utf8');

export interface Violation {
  rule: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string; html: string; summary: string }>;
}

/** axe's violations on the page as it is now, each with the elements at fault. */
export async function axeViolations(page: Page): Promise<Violation[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((results) =>
    results.violations.map((v) => ({
      rule: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(' '), html: n.html, summary: n.failureSummary })),
    })))`);
}

/** Violations as a reader wants them in a failed test: rule, why, and each element. */
export const readable = (violations: Violation[]) =>
  violations.map(
    (v) =>
      `${v.rule} (${v.impact}): ${v.help}\n` +
      v.nodes.map((n) => `  ${n.target}: ${n.html}\n    ${n.summary.replace(/\n/g, '\n    ')}`).join('\n'),
  );
