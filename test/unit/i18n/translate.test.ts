// Messages to HTML: the catalogue's text is escaped and only **bold** and `code` become tags; values go in last,
// escaped, so an app's self-chosen name can add neither markup nor marks.
import { escapeHtml, renderMessage } from '../../../lib/i18n/translate';

test.each<[string, Record<string, unknown>, string]>([
  ['Sign in to {service}', { service: 'Notes' }, 'Sign in to Notes'],
  ['**{host}** wants access', { host: 'app.example' }, '<strong>app.example</strong> wants access'],
  ['at `{url}`', { url: 'https://a.example/x?y=1&z=2' }, 'at <code>https://a.example/x?y=1&amp;z=2</code>'],
  ['{name}', { name: '<script>alert(1)</script>' }, '&lt;script&gt;alert(1)&lt;/script&gt;'],
  ['{name}', { name: '**bold** and `code`' }, '**bold** and `code`'],
  ['{name}', { name: '{other}' }, '{other}'],
  ['<b>not markup</b> & "quotes"', {}, '&lt;b&gt;not markup&lt;/b&gt; &amp; &quot;quotes&quot;'],
  ['HTTP {status}', { status: 400 }, 'HTTP 400'],
  ['{missing} stays visible', {}, '{missing} stays visible'],
  ['{toString} is not a value', {}, '{toString} is not a value'],
  ["it's", {}, 'it&#39;s'],
])('%p with %p', (message, values, html) => {
  expect(renderMessage(message, values)).toBe(html);
});

test('escapeHtml escapes the five characters that matter in content and quoted attributes', () => {
  expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
});
