// Turns a message and its values into HTML: the message's text escaped, its **bold** and `code` marks made tags, then
// each {placeholder} replaced by its value, escaped. Values go in last, so a value (an app's self-chosen name) can
// neither add markup nor marks.

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe inside HTML content and quoted attributes. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** A message rendered to HTML with its values (missing ones are left as their placeholder, visibly). */
export function renderMessage(message: string, values: Readonly<Record<string, unknown>> = {}): string {
  const marked = escapeHtml(message)
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/`([^`]+)`/g, '<code>$1</code>');
  return marked.replace(/\{(\w+)\}/g, (placeholder, name: string) =>
    Object.hasOwn(values, name) ? escapeHtml(String(values[name])) : placeholder,
  );
}
