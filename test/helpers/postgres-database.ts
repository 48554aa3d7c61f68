// A fresh PostgreSQL database for one test file, dropped afterwards: instances of the app share it as they would
// share a production database.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DATABASE_URL } from './services';

export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mcp_oauth_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(DATABASE_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const cleanup = new Client({ connectionString: DATABASE_URL });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}
