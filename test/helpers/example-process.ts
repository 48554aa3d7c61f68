// One of examples/ as a process, started as its README says (`node <script>`, from `dir`), resolved once it prints
// "MCP server at"; rejected with its stderr if it exits first.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export async function runExample(
  dir: string,
  script: string,
  env: Record<string, string>,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(dir, script)], { cwd: dir, env: { ...process.env, ...env } });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on(
      'line',
      (line) => line.includes('MCP server at') && resolve(),
    );
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${output}`)));
  });
  return child;
}
