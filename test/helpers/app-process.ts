// The reference app as a real process (dist/example-app/server.js), as deployed: started with an environment,
// resolved once it says it is listening, rejected with its stderr if it exits first.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

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
