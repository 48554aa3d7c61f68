// npm run user:create -- --email E --password P [--name N] [--company C] [--admin]: adds a user to the database at
// DATABASE_PATH (or DATABASE_URL), with a company of demo data; --admin makes them an administrator (/admin). Exits non-zero with a clear message on bad input or a taken email.
import { parseArgs } from 'node:util';
import { readConfig } from '../config';
import { openAppDatabase } from '../db/open';
import { createUser, UserInputError } from '../users';

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        email: { type: 'string' },
        password: { type: 'string' },
        name: { type: 'string' },
        company: { type: 'string' },
        admin: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(
      `${(error as Error).message}\nUsage: npm run user:create -- --email E --password P [--name N] [--company C] [--admin]`,
    );
    return 2;
  }
  if (!values.email) {
    console.error(
      'An email is required.\nUsage: npm run user:create -- --email E --password P [--name N] [--company C] [--admin]',
    );
    return 2;
  }
  const { db, close, description } = await openAppDatabase(readConfig());
  try {
    const { email, password, name, company, admin } = values as Record<string, string | undefined> & {
      admin?: boolean;
    };
    const user = await createUser(db, { email, password, name, company, admin: admin === true });
    console.log(
      `Created ${admin ? 'administrator' : 'user'} ${user.email} (id ${user.id}) with demo data, in ${description}.`,
    );
    return 0;
  } catch (error) {
    if (error instanceof UserInputError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    await close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`Cannot create the user: ${(error as Error)?.message ?? error}`);
    process.exitCode = 1;
  },
);
