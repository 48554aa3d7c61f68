// Starting bench servers in their own processes (on their own core) and driving them with autocannon.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

export interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const TASKSET = existsSync('/usr/bin/taskset');
// BENCH_NODE_ARGS: more arguments for node in every server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (each server
// writes a V8 CPU profile there when it stops) or "--trace-gc" (with BENCH_SERVER_OUTPUT, a file for what they print
// on stdout).
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const OUTPUT = process.env.BENCH_SERVER_OUTPUT;

/** Starts bench/server.js in BENCH_MODE `mode`, pinned to core 0 when taskset is there. */
export async function startServer(mode: string, env: Record<string, string>): Promise<Server> {
  const script = join(__dirname, 'server.js');
  const node = [...NODE_ARGS, script];
  const command = TASKSET ? ['taskset', ['-c', '0', process.execPath, ...node]] : [process.execPath, node];
  // What a server prints on stdout (the reference app's JSON logs, a line or two per request) goes to /dev/null, as
  // to a log file: read here, it would cost the load side CPU in the target's rounds and not in the baseline's.
  const child = spawn(command[0] as string, command[1] as string[], {
    env: { ...process.env, ...env, BENCH_MODE: mode },
    stdio: ['ignore', OUTPUT ? 'pipe' : 'ignore', 'pipe'],
  });
  if (OUTPUT)
    createInterface({ input: child.stdout! }).on('line', (line) =>
      appendFileSync(OUTPUT, `${mode} ${child.pid}: ${line}\n`),
    );
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (line.startsWith('READY ')) return resolve(Number(line.slice(6)));
      if (stderr.length < 100_000) stderr += `${line}\n`;
    });
    child.once('exit', (code) => reject(new Error(`bench server ${mode} exited with ${code}: ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    stop: () =>
      new Promise((resolve) =>
        child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM')),
      ),
  };
}

export interface Measurement {
  opsPerSecond: number;
  p50: number;
  p99: number;
  /** Non-2xx answers, connection errors and timeouts. */
  errors: number;
  /** Connection errors and timeouts alone (a refusal the load asked for is not one). */
  failures: number;
}

export type RequestSpec = autocannon.Request;

/** 32 keep-alive connections for `seconds`. */
export async function measure(url: string, requests: RequestSpec[], seconds: number): Promise<Measurement> {
  const result = await autocannon({ url, connections: 32, pipelining: 1, duration: seconds, requests });
  return {
    opsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    failures: result.errors + result.timeouts,
  };
}

export interface Load {
  url: string;
  requests: RequestSpec[];
}

/**
 * The target and its baseline measured in alternation after a warm-up of both: baseline, target, baseline, ...,
 * baseline, one second each. On this shared machine the CPU a process gets drifts from second to second, so each
 * target round is compared with the mean of the two baseline rounds around it (which cancels a steady drift), and
 * the ratio is the median of those `rounds` ratios (which ignores a round hit by a burst of noise).
 */
export async function compare(
  target: Load,
  baseline: Load,
  rounds: number,
): Promise<{ target: Measurement; baseline: Measurement; ratio: number }> {
  await measure(baseline.url, baseline.requests, 2);
  await measure(target.url, target.requests, 2);
  const results: { target: Measurement[]; baseline: Measurement[] } = {
    target: [],
    baseline: [await measure(baseline.url, baseline.requests, 1)],
  };
  for (let round = 0; round < rounds; round += 1) {
    results.target.push(await measure(target.url, target.requests, 1));
    results.baseline.push(await measure(baseline.url, baseline.requests, 1));
  }
  const ratios = results.target
    .map((run, i) => {
      const around = (results.baseline[i]!.opsPerSecond + results.baseline[i + 1]!.opsPerSecond) / 2;
      return run.opsPerSecond / around;
    })
    .sort((a, b) => a - b);
  return {
    target: combine(results.target),
    baseline: combine(results.baseline),
    ratio: ratios[Math.floor(ratios.length / 2)]!,
  };
}

function combine(runs: Measurement[]): Measurement {
  const mean = (pick: (run: Measurement) => number) =>
    runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  return {
    opsPerSecond: mean((run) => run.opsPerSecond),
    p50: Math.round(mean((run) => run.p50) * 10) / 10,
    p99: Math.max(...runs.map((run) => run.p99)),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    failures: runs.reduce((sum, run) => sum + run.failures, 0),
  };
}

/** Resident memory of a process in MB, from /proc. */
export function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
