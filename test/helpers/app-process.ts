// The reference app as a real process (dist/example-app/server.js), as deployed: started with an environment,
// resolved once it says it is listening, rejected with its stderr if it exits first.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = join(__dirname, '../..');

export function startInstance(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/example-app/server.js')], {
    env: { ...process.env, ...env, PORT: String(port) },
  });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => String(chunk).includes('MCP server on') && resolve(child));
    child.once('exit', (code) => reject(new Error(`instance on ${port} exited with ${code}: ${output}`)));
  });
}

/** How a command of the reference app ended: its exit code and what it printed. */
export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a compiled command of the reference app (`script`, a path) as a process with exactly `env`; never throws. */
export async function runCommand(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<CommandRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [script, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CommandRun;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
