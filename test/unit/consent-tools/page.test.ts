// What the consent page lists under each scope (consent-tools/page.ts): a tool under the first scope it needs, only
// when every scope it needs is asked for or allowed before, with the asked scopes' checkboxes it depends on.
import { consentScopes } from '../../../lib/consent-tools/page';
import type { ConsentTool } from '../../../lib/consent-tools/registry';

const tool = (name: string, scopes: string[]): ConsentTool => ({
  name,
  title: name.toUpperCase(),
  readOnly: false,
  scopes,
});
const TOOLS = [
  tool('read', ['a:read']),
  tool('write', ['a:write', 'a:read']),
  tool('cross', ['a:write', 'b:read']),
  tool('untouched', ['c:read']),
];
const DESCRIPTIONS = { 'a:read': 'Read A', 'a:write': 'Write A', 'b:read': 'Read B' };

/** Each listed scope as `scope: tool(needs) ...`. */
function summary(asked: string[], before: string[]) {
  const { scopes, allowedScopes } = consentScopes(asked, before, DESCRIPTIONS, TOOLS);
  const line = (list: typeof scopes) =>
    list.map((scope) =>
      `${scope.name}: ${scope.tools.map((t) => `${t.name}(${t.needs.join(',')})`).join(' ')}`.trim(),
    );
  return { asked: line(scopes), allowed: line(allowedScopes) };
}

test.each([
  {
    why: 'each tool under its first scope; the checkboxes it needs',
    asked: ['a:read', 'a:write'],
    before: [],
    expected: { asked: ['a:read: read(0)', 'a:write: write(1,0)'], allowed: [] },
  },
  {
    why: 'a tool whose scopes are not all reachable is not listed',
    asked: ['a:write'],
    before: [],
    expected: { asked: ['a:write:'], allowed: [] },
  },
  {
    why: 'a scope allowed before makes its tools reachable, and hides nothing itself',
    asked: ['a:write'],
    before: ['a:read'],
    expected: { asked: ['a:write: write(0)'], allowed: ['a:read: read()'] },
  },
  {
    why: 'a tool listed under a kept scope still follows the new checkbox it needs',
    asked: ['b:read'],
    before: ['a:write'],
    expected: { asked: ['b:read:'], allowed: ['a:write: cross(0)'] },
  },
])('$why', ({ asked, before, expected }) => {
  expect(summary(asked, before)).toEqual(expected);
});

test('descriptions: the catalogue’s, own properties only; else the scope’s name', () => {
  const { scopes } = consentScopes(['a:read', 'constructor'], [], DESCRIPTIONS, []);
  expect(scopes.map((scope) => scope.description)).toEqual(['Read A', 'constructor']);
});
