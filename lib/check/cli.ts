// `express-mcp-oauth check <mcp url>`: prints the deployment check's findings; exit code 0 when a client could
// connect, 1 when something would stop it, 2 for a wrong command line.
import { checkDeployment, type CheckOptions } from './deployment';

const USAGE =
  'Usage: express-mcp-oauth check <mcp url>   e.g. express-mcp-oauth check https://api.example.com/mcp';

/** Runs the command line; returns the exit code. `write` receives each line (default: stdout). */
export async function runCli(
  args: readonly string[],
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  options: CheckOptions = {},
): Promise<number> {
  if (args[0] !== 'check' || args.length !== 2) {
    write(USAGE);
    return 2;
  }
  const report = await checkDeployment(args[1]!, options);
  for (const finding of report.findings) {
    write(`${finding.ok ? 'ok  ' : 'FAIL'} ${finding.message}`);
    if (finding.fix) write(`     fix: ${finding.fix}`);
  }
  const problems = report.findings.filter((finding) => !finding.ok).length;
  write(
    report.ok
      ? 'An MCP client can connect.'
      : `${problems} problem${problems === 1 ? '' : 's'}: an MCP client cannot connect.`,
  );
  return report.ok ? 0 : 1;
}
