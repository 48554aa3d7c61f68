// Rate limits shared by every instance: one Redis client, one rate-limit-redis store per limit. At start, a Redis
// that cannot be reached within a few seconds stops the app with one clear line (serving with per-instance limits
// instead would quietly multiply them by the number of instances). While running, a lost Redis makes the limits fail
// open (the OAuth endpoints keep answering, and the library logs it); commands fail at once instead of queueing, and
// the client reconnects by itself.
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import type { RateLimitName, RateLimitStore } from 'express-mcp-oauth';
import { ConfigError } from './config';

interface SharedRateLimits {
  store: (name: RateLimitName) => RateLimitStore;
  /** Resolves when Redis answers a PING (readiness). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 5000;

/** The URL without its password, for messages. */
const redacted = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');

/** Redis-backed rate limits (loaded with require() only when REDIS_URL is set). @public */
export async function connectRateLimitStore(redisUrl: string, prefix: string): Promise<SharedRateLimits> {
  let lastError: Error | undefined;
  let connected = false;
  const client = createClient({
    url: redisUrl,
    // A command while disconnected fails at once (the limits then fail open) instead of waiting in a queue.
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2000) },
  });
  client.on('error', (error: Error) => {
    // Reported once per outage, not on every reconnection attempt.
    if (connected) console.warn(`Redis connection lost (${error.message}); reconnecting.`);
    connected = false;
    lastError = error;
  });
  client.on('ready', () => {
    if (lastError) console.warn('Redis connection restored.');
    connected = true;
    lastError = undefined;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), START_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    client.destroy();
    const reason = lastError?.message || (error as Error).message;
    throw new ConfigError(
      `Redis at ${redacted(redisUrl)} cannot be reached (${reason}): start it, or unset REDIS_URL to count rate limits in memory.`,
    );
  } finally {
    clearTimeout(timer);
  }
  return {
    store: (name) =>
      new RedisStore({
        prefix: `${prefix}${name}:`,
        sendCommand: (...args: string[]) => client.sendCommand(args),
      }),
    ping: () => client.ping(),
    close: async () => {
      if (client.isOpen) await client.quit();
    },
  };
}
