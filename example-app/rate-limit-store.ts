// Rate limits shared by every instance: one Redis client, one rate-limit-redis store per limit.
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import type { RateLimitName, RateLimitStore } from '../lib';

export interface SharedRateLimits {
  store: (name: RateLimitName) => RateLimitStore;
  /** Resolves when Redis answers a PING (readiness). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

export async function connectRateLimitStore(redisUrl: string, prefix: string): Promise<SharedRateLimits> {
  const client = createClient({ url: redisUrl });
  client.on('error', (error) => console.error('Redis:', error.message));
  await client.connect();
  return {
    store: (name) =>
      new RedisStore({
        prefix: `${prefix}${name}:`,
        sendCommand: (...args: string[]) => client.sendCommand(args),
      }),
    ping: () => client.ping(),
    close: async () => {
      await client.quit();
    },
  };
}
