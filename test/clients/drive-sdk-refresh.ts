// Refreshes done by the MCP TypeScript SDK itself, round after round, the way the client shares its refresh token:
// the app's clock moves past the access token's expiry (the old token is checked to be refused), then a tool call
// through the SDK, whose transport meets the 401 and refreshes with the refresh token its provider holds. Each
// refresh is checked on the wire: one refresh_token grant with the token held before, answered 200 with the refresh
// token the provider holds after, rotated, and no new authorization asked of the user.
// - single: one process;
// - shared-between-processes: processes A and B start from one stored token, each with its own provider; A
//   refreshes, then B later (PROCESS_B_LAG) from its own copy of the token A already used, and A once more after.
import { MINUTE, SECOND } from '../helpers/clock';
import { step } from './drive';
import { mcpAccepts } from './drive-mcp';
import { PROCESS_B_LAG, type RefreshReport } from './drive-refresh';
import type { SdkConnection } from './drive-sdk';
import { heldTokens, lastAnswer, type SdkProcess } from './drive-sdk-process';
import type { Matrix } from './drive-types';

export async function sdkRefreshRounds(
  matrix: Matrix,
  connection: SdkConnection,
  rounds = 3,
): Promise<RefreshReport> {
  const { profile, tool } = connection;
  const report: RefreshReport = { refreshes: 0, toolCalls: 0, log: [] };
  const at = (name: string) => `${profile.id}: ${name}`;

  /** Moves the app's clock past the expiry of the processes' access tokens, and checks /mcp now refuses them. */
  const expire = async (label: string, processes: SdkProcess[]) => {
    const held = processes.map(heldTokens);
    // The verifier allows 5 s of clock skew.
    matrix.clock.advance(Math.max(...held.map((tokens) => tokens.expiresIn)) * SECOND + 6 * SECOND);
    await step(at(`${label}: the access token expires`), async () => {
      for (const tokens of held) {
        if (await mcpAccepts(matrix.mcpUrl, tokens.accessToken)) {
          throw new Error('/mcp still takes the access token after its expiry: no refresh would be needed');
        }
      }
    });
  };

  /** A tool call through `process`'s SDK, which must refresh on the way: checked on the wire and in the provider. */
  const refreshAndCall = async (label: string, process: SdkProcess) => {
    const before = heldTokens(process);
    const sentBefore = process.sent.length;
    const askedBefore = process.state.authorizationUrls.length;
    await step(at(`${label}: tool call ${tool} through the SDK`), async () => {
      try {
        await connection.callTool(process);
      } catch (error) {
        throw new Error(`${(error as Error).message} (${lastAnswer(process, sentBefore)})`);
      }
    });
    await step(at(`${label}: the SDK's refresh`), async () => {
      if (process.state.authorizationUrls.length !== askedBefore) {
        throw new Error(`the SDK sent the user to authorize again (${lastAnswer(process, sentBefore)})`);
      }
      const refreshes = process.sent
        .slice(sentBefore)
        .filter((request) => request.form?.get('grant_type') === 'refresh_token');
      if (refreshes.length !== 1) {
        throw new Error(`${refreshes.length} refresh requests, not 1 (${lastAnswer(process, sentBefore)})`);
      }
      const [refresh] = refreshes;
      if (refresh!.form!.get('refresh_token') !== before.refreshToken) {
        throw new Error('the SDK refreshed with another refresh token than the one its provider held');
      }
      const after = heldTokens(process);
      if (refresh!.status !== 200 || refresh!.answer?.refresh_token !== after.refreshToken) {
        throw new Error(
          `the provider holds a refresh token the token endpoint did not answer (${lastAnswer(process, sentBefore)})`,
        );
      }
      if (after.refreshToken === before.refreshToken) throw new Error('the refresh token was not rotated');
    });
    report.refreshes += 1;
    report.toolCalls += 1;
    report.log.push(`${label}: ok`);
  };

  switch (profile.refreshSharing) {
    case 'single': {
      for (let round = 1; round <= rounds; round += 1) {
        await expire(`refresh ${round}`, [connection.process]);
        await refreshAndCall(`refresh ${round}`, connection.process);
      }
      break;
    }

    case 'shared-between-processes': {
      // Both processes loaded the same stored token; each refreshes from the copy its own provider holds.
      const a = connection.process;
      const b = connection.fork(a);
      for (let round = 1; round <= rounds; round += 1) {
        await expire(`refresh ${round}`, [a, b]);
        await refreshAndCall(`refresh ${round}, process A`, a);
        const lag = PROCESS_B_LAG[(round - 1) % PROCESS_B_LAG.length]!;
        matrix.clock.advance(lag);
        await refreshAndCall(
          `refresh ${round}, process B (${lag / MINUTE} min after A, from its own copy of the old token)`,
          b,
        );
      }
      // A is not cut off by B's late refresh (more than an hour after A's): A refreshes once more from its copy.
      await expire(`refresh ${rounds + 1}`, [a, b]);
      await refreshAndCall(`refresh ${rounds + 1}, process A (after B's late refresh)`, a);
      break;
    }

    case 'parallel-egress':
      throw new Error(
        at('parallel-egress refreshes are not driven through the SDK (no SDK client records them)'),
      );
  }
  return report;
}
