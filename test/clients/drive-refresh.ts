// Refreshes the way each client keeps and shares its refresh token (ClientProfile.refreshSharing), round after
// round: the app's clock moves past the access token's expiry before each round, so the refresh is needed (the old
// access token is checked to be refused), and every access token a refresh returns is used for a tool call.
// - single: one holder, a plain chain;
// - shared-between-processes: processes A and B start from one stored token; A refreshes, then B refreshes later
//   (minutes, and in the last round more than an hour) from its own in-memory copy of the token A already used,
//   and A refreshes once more after that;
// - parallel-egress: two refreshes of one token at the same moment; both answers must work, and the next round
//   starts from one answer, then from the other.
import { MINUTE, SECOND } from '../helpers/clock';
import { step } from './drive';
import type { Connection, Matrix, Tokens } from './drive-types';
import type { ClientProfile } from './profile';

export interface RefreshReport {
  refreshes: number;
  toolCalls: number;
  /** What happened, one line per refresh ("refresh 2, process A: ok") and where a racing round went on from. */
  log: string[];
}

/** How long after A process B refreshes, round by round. */
export const PROCESS_B_LAG = [5 * MINUTE, 20 * MINUTE, 70 * MINUTE];

/** The sharing, in words, for a test's name. */
export function sharingInWords(profile: ClientProfile): string {
  switch (profile.refreshSharing) {
    case 'single':
      return 'single: a plain chain';
    case 'shared-between-processes':
      return `shared between processes: A and B from one stored token, B ${PROCESS_B_LAG.map((lag) => lag / MINUTE).join(', ')} min after A`;
    case 'parallel-egress':
      return 'parallel egress: two refreshes of one token at once, the next from either answer';
  }
}

export async function refreshRounds(
  matrix: Matrix,
  connection: Connection,
  rounds = 3,
): Promise<RefreshReport> {
  const { profile } = connection;
  const report: RefreshReport = { refreshes: 0, toolCalls: 0, log: [] };
  const at = (name: string) => `${profile.id}: ${name}`;

  /** Moves the app's clock past the expiry of `holders`' access tokens, and checks /mcp now refuses them. */
  const expire = async (label: string, holders: Tokens[]) => {
    const longest = Math.max(...holders.map((tokens) => tokens.expiresIn));
    // The verifier allows 5 s of clock skew.
    matrix.clock.advance(longest * SECOND + 6 * SECOND);
    await step(at(`${label}: the access token expires`), async () => {
      for (const tokens of holders) {
        if (await connection.accepts(tokens.accessToken)) {
          throw new Error('/mcp still takes the access token after its expiry: no refresh would be needed');
        }
      }
    });
  };

  /** One refresh of `from` by `label`, then a tool call with the new access token. */
  const refreshAndCall = async (label: string, from: Tokens, round: number): Promise<Tokens> => {
    const tokens = await step(at(label), () => connection.refresh(from.refreshToken, round));
    report.refreshes += 1;
    if (tokens.refreshToken === from.refreshToken) {
      throw new Error(at(`${label}: the refresh token was not rotated`));
    }
    await step(at(`${label}: tool call ${connection.tool}`), () => connection.callTool(tokens.accessToken));
    report.toolCalls += 1;
    report.log.push(`${label}: ok`);
    return tokens;
  };

  switch (profile.refreshSharing) {
    case 'single': {
      let held = connection.tokens;
      for (let round = 1; round <= rounds; round += 1) {
        await expire(`refresh ${round}`, [held]);
        held = await refreshAndCall(`refresh ${round}`, held, round);
      }
      break;
    }

    case 'shared-between-processes': {
      // Both processes loaded the same stored token; each refreshes from the copy it has in memory.
      let a = connection.tokens;
      let b = connection.tokens;
      for (let round = 1; round <= rounds; round += 1) {
        await expire(`refresh ${round}`, [a, b]);
        const copyOfB = b;
        a = await refreshAndCall(`refresh ${round}, process A`, a, round);
        const lag = PROCESS_B_LAG[(round - 1) % PROCESS_B_LAG.length]!;
        matrix.clock.advance(lag);
        b = await refreshAndCall(
          `refresh ${round}, process B (${lag / MINUTE} min after A, from its own copy of the old token)`,
          copyOfB,
          round,
        );
      }
      // A is not cut off by B's late refresh (more than an hour after A's): A refreshes once more from its copy.
      await expire(`refresh ${rounds + 1}`, [a, b]);
      await refreshAndCall(`refresh ${rounds + 1}, process A (after B's late refresh)`, a, rounds + 1);
      break;
    }

    case 'parallel-egress': {
      let stored = connection.tokens;
      for (let round = 1; round <= rounds; round += 1) {
        await expire(`refresh ${round}`, [stored]);
        const from = stored;
        const raced = await Promise.allSettled(
          [1, 2].map((egress) =>
            refreshAndCall(`refresh ${round}, egress ${egress} (racing egress ${3 - egress})`, from, round),
          ),
        );
        const failed = raced.flatMap((outcome) =>
          outcome.status === 'rejected' ? [(outcome.reason as Error).message] : [],
        );
        if (failed.length) throw new Error(failed.join('\n'));
        const answers = raced.map((outcome) => (outcome as PromiseFulfilledResult<Tokens>).value);
        // Whichever answer was stored last: the second egress's, then the first's, then the second's.
        stored = answers[round % 2 === 1 ? 1 : 0]!;
        if (round < rounds) {
          report.log.push(`refresh ${round + 1} starts from egress ${round % 2 === 1 ? 2 : 1}'s answer`);
        }
      }
      break;
    }
  }
  return report;
}
