// Every client fixture is complete: each quirk the matrix drives has a public source, and the shapes are usable.
import { CLIENTS } from './fixtures';

const SOURCED = ['identification', 'redirect', 'authMethod', 'resource', 'scopeOnRefresh', 'refreshSharing'];

describe('client fixtures', () => {
  test('ids are unique and listed in the documented order', () => {
    const ids = CLIENTS.map((client) => client.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([
      'claude-code',
      'claude-ai',
      'chatgpt',
      'codex',
      'vscode',
      'cursor',
      'copilot-cli',
      'gemini-cli',
      'opencode',
      'goose',
      'open-webui',
      'mcp-inspector',
    ]);
  });

  describe.each(CLIENTS.map((client) => [client.id, client] as const))('%s', (_id, client) => {
    test.each(SOURCED)('names a source for %s', (field) => {
      expect(client.sources[field]).toBeDefined();
    });

    test('every source has a reference and says something', () => {
      for (const [key, source] of Object.entries(client.sources)) {
        expect({ key, ref: source.ref.trim() }).not.toEqual({ key, ref: '' });
        expect({ key, says: source.says.trim() }).not.toEqual({ key, says: '' });
      }
    });

    test('a client built on an SDK names where it is shown to run it', () => {
      if (!client.builtOn) return;
      expect(client.builtOn.source.ref.trim()).not.toBe('');
      expect(client.builtOn.source.says.trim()).not.toBe('');
    });

    test('its identification lists redirect URIs', () => {
      const shape =
        client.identification.kind === 'metadata-document'
          ? client.identification.document
          : client.identification.body;
      expect(Array.isArray(shape.redirect_uris)).toBe(true);
      expect((shape.redirect_uris as unknown[]).length).toBeGreaterThan(0);
    });

    test('a document holds no secret, and its client_id, when given, is an https URL', () => {
      if (client.identification.kind !== 'metadata-document') return;
      const { document } = client.identification;
      expect(document).not.toHaveProperty('client_secret');
      if (document.client_id !== undefined) expect(String(document.client_id)).toMatch(/^https:\/\/[^/]+\/./);
    });

    test('its redirect URI for a port is a URL, and has the table row it needs', () => {
      expect(() => new URL(client.redirect.uri(50123))).not.toThrow();
      expect(client.needs.length).toBeGreaterThan(0);
      expect(client.recipe.trim()).not.toBe('');
    });
  });
});
