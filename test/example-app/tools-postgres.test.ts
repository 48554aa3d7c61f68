// The reference app's tools on PostgreSQL (DATABASE_URL): the same calls as on SQLite, the same answers.
import { createUser } from '../../example-app/users';
import { TOOLS_BY_NAME } from '../../example-app/mcp/tools';
import { ALL_SCOPES, snapshot, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { waitUntil } from '../helpers/wait';
import { cases, type Result } from './tool-cases';

describeWith('the tools on PostgreSQL', { postgres: true }, () => {
  let app: RunningExampleApp;
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startExampleApp({ DATABASE_URL: database.url });
  });
  afterAll(async () => {
    await app?.stop();
    await database?.drop();
  });

  // One app for the whole table, in order: each case was written so that the earlier ones do not disturb it.
  test.each(cases)('$tool succeeds and refuses bad input', async ({ tool, args, check, bad }) => {
    const client = await app.connect(ALL_SCOPES);
    if (tool === 'get_document' || tool === 'render_document')
      await client.callTool({ name: 'generate_document', arguments: { template_id: 1, invoice_id: 1 } });
    const result = (await client.callTool({ name: tool, arguments: args })) as Result;
    expect(result.isError).toBeFalsy();
    check(result.structuredContent!);
    const before = await snapshot(app);
    expect(((await client.callTool({ name: tool, arguments: bad })) as Result).isError).toBe(true);
    expect(await snapshot(app)).toBe(before);
  });

  test('a write outside the token’s scopes is refused and changes nothing', async () => {
    const limited = await app.connect(
      ALL_SCOPES.filter((scope) => scope !== TOOLS_BY_NAME.get('create_client')!.scopes[0]),
    );
    const before = await snapshot(app);
    await expect(
      limited.callTool({ name: 'create_client', arguments: { name: 'Nope' } }),
    ).rejects.toMatchObject({ code: 403 });
    expect(await snapshot(app)).toBe(before);
  });

  test('companies stay apart', async () => {
    const stranger = await createUser(app.db, {
      email: 'stranger@example.com',
      password: 'another long password',
    });
    const client = await app.connect(ALL_SCOPES, stranger);
    const result = (await client.callTool({ name: 'get_invoice', arguments: { invoice_id: 1 } })) as Result;
    expect(result.content[0]!.text).toBe('No invoice or quote with id 1 in your company.');
  });

  test('connections ended by the database server are replaced; the app keeps serving', async () => {
    const client = await app.connect(ALL_SCOPES);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      // Without a listener on the pool, pg's report of a broken idle connection would crash this process.
      const ended = await database.endConnections();
      expect(ended).toBeGreaterThan(0);
      // Each idle connection hears of its end on its own; a query sent before that would still fail.
      await waitUntil(() => warn.mock.calls.length >= ended);
      expect(String(warn.mock.calls[0]![0])).toMatch(
        /PostgreSQL connection lost while idle: terminating connection/,
      );
    } finally {
      warn.mockRestore();
    }
    const result = (await client.callTool({ name: 'get_invoice', arguments: { invoice_id: 1 } })) as Result;
    expect(result.isError).toBeFalsy();
  });
});
