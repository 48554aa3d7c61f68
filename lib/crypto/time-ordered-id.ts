// Grant ids are UUIDv7 (RFC 9562 §5.7): 48 bits of milliseconds, then 74 random bits. They are no secret (access
// tokens carry them), and ordering them by creation time keeps B-tree writes and lookups on recent pages: a code is
// exchanged seconds after its grant was made, so the grant, and the first refresh token keyed by its id, are found
// and written next to the newest rows instead of on a random page of the whole table.
import { randomFillSync } from 'node:crypto';

/** A new UUIDv7 for the time `now` (milliseconds since the epoch). */
export function timeOrderedId(now: number = Date.now()): string {
  const bytes = randomFillSync(Buffer.alloc(16));
  bytes.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
