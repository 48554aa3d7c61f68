// The store contract for device authorizations (RFC 8628): stored by the hashes of their two codes, decided once by
// the user, redeemed once by the device (with its grant's first refresh token, in the same step), purged once
// expired. Races run where the harness has several connections: two instances deciding or polling at once.
import type { DeviceAuthorizationRecord } from '../store/types';
import { MINUTE, SECOND } from './clock';
import { newGrant, outcomeOf, type ContractEnv } from './contract-env';
import { expect } from './expect';
import { newRefreshToken, newSecret } from './fixtures';

/** A pending device authorization of `clientId`, expiring in ten minutes. */
function deviceRecord(now: number, clientId: string): DeviceAuthorizationRecord {
  return {
    deviceCodeHash: newSecret().hash,
    userCodeHash: newSecret().hash,
    clientId,
    scopes: ['notes:read', 'notes:write'],
    resource: 'https://api.example/mcp',
    expiresAt: now + 10 * MINUTE,
    interval: 5,
    status: 'pending',
    userId: null,
    grantId: null,
  };
}

export function describeDeviceAuthorizationContract(env: ContractEnv): void {
  const { describe } = env;
  const test = env.testWith('saveDeviceAuthorization');

  /** A grant, and a pending device authorization of its client. */
  async function pending() {
    const grant = await newGrant(env);
    const device = deviceRecord(env.clock.now(), grant.clientId);
    await env.store.saveDeviceAuthorization!(device);
    return { grant, device };
  }

  describe('device authorizations', () => {
    test('a saved one is found by either code’s hash, as saved', async () => {
      const { device } = await pending();
      const { store } = env;
      expect(await store.findDeviceAuthorization!(device.deviceCodeHash, 'device_code')).toEqual(device);
      expect(await store.findDeviceAuthorization!(device.userCodeHash, 'user_code')).toEqual(device);
      // Each hash is looked up as what it is, never as the other code.
      expect(await store.findDeviceAuthorization!(device.userCodeHash, 'device_code')).toBeUndefined();
      expect(await store.findDeviceAuthorization!(device.deviceCodeHash, 'user_code')).toBeUndefined();
    });

    test('a code hash already taken, even by an expired one, is refused', async () => {
      const { device, grant } = await pending();
      const { store, clock } = env;
      clock.advance(11 * MINUTE);
      const sameUserCode = {
        ...deviceRecord(clock.now(), grant.clientId),
        userCodeHash: device.userCodeHash,
      };
      const sameDeviceCode = {
        ...deviceRecord(clock.now(), grant.clientId),
        deviceCodeHash: device.deviceCodeHash,
      };
      expect(await outcomeOf(() => store.saveDeviceAuthorization!(sameUserCode))).toBe('refused');
      expect(await outcomeOf(() => store.saveDeviceAuthorization!(sameDeviceCode))).toBe('refused');
    });

    test('a decision is taken once, while it is pending and unexpired', async () => {
      const { device, grant } = await pending();
      const { store, clock } = env;
      const approval = { approved: true, userId: grant.userId, grantId: grant.grantId };
      expect(await store.decideDeviceAuthorization!(device.deviceCodeHash, approval)).toBe(true);
      expect(
        await store.decideDeviceAuthorization!(device.deviceCodeHash, { ...approval, approved: false }),
      ).toBe(false);
      expect(await store.findDeviceAuthorization!(device.deviceCodeHash, 'device_code')).toEqual({
        ...device,
        status: 'approved',
        userId: grant.userId,
        grantId: grant.grantId,
      });
      const late = deviceRecord(clock.now(), grant.clientId);
      await store.saveDeviceAuthorization!(late);
      clock.advance(10 * MINUTE);
      expect(await store.decideDeviceAuthorization!(late.deviceCodeHash, approval)).toBe(false);
      // Expired, it is still found (the device is told expired_token), until the purge.
      expect(await store.findDeviceAuthorization!(late.deviceCodeHash, 'device_code')).toMatchObject({
        status: 'pending',
      });
    });

    test('a denial keeps who denied and no grant', async () => {
      const { device, grant } = await pending();
      const { store } = env;
      const denial = { approved: false, userId: grant.userId, grantId: grant.grantId };
      expect(await store.decideDeviceAuthorization!(device.deviceCodeHash, denial)).toBe(true);
      expect(await store.findDeviceAuthorization!(device.deviceCodeHash, 'device_code')).toMatchObject({
        status: 'denied',
        userId: grant.userId,
        grantId: null,
      });
      expect(await store.redeemDeviceAuthorization!(device.deviceCodeHash)).toEqual({
        status: 'not_redeemed',
      });
    });

    test('an approved one is redeemed once, with its grant’s first refresh token in the same step', async () => {
      const { device, grant } = await pending();
      const { store, clock } = env;
      expect(await store.redeemDeviceAuthorization!(device.deviceCodeHash)).toEqual({
        status: 'not_redeemed',
      });
      await store.decideDeviceAuthorization!(device.deviceCodeHash, {
        approved: true,
        userId: grant.userId,
        grantId: grant.grantId,
      });
      clock.advance(SECOND);
      const token = newRefreshToken(grant.grantId);
      const first = await store.redeemDeviceAuthorization!(device.deviceCodeHash, { key: token.hash });
      expect(first).toEqual({ status: 'redeemed', grant: { ...grant, lastUsedAt: clock.now() } });
      expect(await store.findRefreshToken(token.hash)).toMatchObject({
        token: { key: token.hash, grantId: grant.grantId, clientId: grant.clientId, parentKey: null },
      });
      expect(await store.redeemDeviceAuthorization!(device.deviceCodeHash, { key: token.hash })).toEqual({
        status: 'not_redeemed',
      });
      expect(await store.findDeviceAuthorization!(device.deviceCodeHash, 'device_code')).toMatchObject({
        status: 'redeemed',
      });
    });

    test('an approval whose grant was revoked since is redeemed with no grant and no token', async () => {
      const { device, grant } = await pending();
      const { store } = env;
      await store.decideDeviceAuthorization!(device.deviceCodeHash, {
        approved: true,
        userId: grant.userId,
        grantId: grant.grantId,
      });
      await store.revokeGrant(grant.grantId);
      const token = newRefreshToken(grant.grantId);
      expect(await store.redeemDeviceAuthorization!(device.deviceCodeHash, { key: token.hash })).toEqual({
        status: 'redeemed',
        grant: undefined,
      });
      expect(await store.findRefreshToken(token.hash)).toBeUndefined();
    });

    env.testWith('slowDownDeviceAuthorization')(
      'a slow-down raises the interval, never lowers it, and leaves the rest as it was',
      async () => {
        const { store } = env;
        const { device } = await pending();
        await store.slowDownDeviceAuthorization!(device.deviceCodeHash, 10);
        expect(await store.findDeviceAuthorization!(device.deviceCodeHash, 'device_code')).toEqual({
          ...device,
          interval: 10,
        });
        await store.slowDownDeviceAuthorization!(device.deviceCodeHash, 7);
        expect((await store.findDeviceAuthorization!(device.deviceCodeHash, 'device_code'))!.interval).toBe(
          10,
        );
        // Another's is not touched; an unknown one is no error.
        const other = await pending();
        expect(
          (await store.findDeviceAuthorization!(other.device.deviceCodeHash, 'device_code'))!.interval,
        ).toBe(5);
        await store.slowDownDeviceAuthorization!(newSecret().hash, 10);
      },
    );

    test('an approval past its expiry is not redeemed', async () => {
      const { device, grant } = await pending();
      const { store, clock } = env;
      await store.decideDeviceAuthorization!(device.deviceCodeHash, {
        approved: true,
        userId: grant.userId,
        grantId: grant.grantId,
      });
      clock.advance(10 * MINUTE);
      expect(await store.redeemDeviceAuthorization!(device.deviceCodeHash)).toEqual({
        status: 'not_redeemed',
      });
    });

    test('raced over many connections, one decision and one redemption win', async () => {
      const { device, grant } = await pending();
      const { clock } = env;
      const decisions = await env.race(
        Array.from({ length: 8 }, () => ({
          method: 'decideDeviceAuthorization' as const,
          args: [device.deviceCodeHash, { approved: true, userId: grant.userId, grantId: grant.grantId }],
        })),
      );
      expect(decisions.filter((won) => won === true)).toHaveLength(1);
      clock.advance(SECOND);
      const redemptions = (await env.race(
        Array.from({ length: 8 }, () => ({
          method: 'redeemDeviceAuthorization' as const,
          args: [device.deviceCodeHash, { key: newRefreshToken(grant.grantId).hash }],
        })),
      )) as Array<{ status: string }>;
      expect(redemptions.filter(({ status }) => status === 'redeemed')).toHaveLength(1);
    });

    test('the purge ends the grant of an approval never redeemed, and leaves a redeemed one’s', async () => {
      const { store, clock } = env;
      const unclaimed = await pending();
      const claimed = await pending();
      for (const { device, grant } of [unclaimed, claimed])
        await store.decideDeviceAuthorization!(device.deviceCodeHash, {
          approved: true,
          userId: grant.userId,
          grantId: grant.grantId,
        });
      await store.redeemDeviceAuthorization!(claimed.device.deviceCodeHash);
      clock.advance(11 * MINUTE);
      for (let removed = -1; removed !== 0;) removed = await store.purgeExpired(10);
      expect(await store.isGrantActive(unclaimed.grant.grantId)).toBe(false);
      expect(await store.isGrantActive(claimed.grant.grantId)).toBe(true);
    });

    test('expired ones are purged', async () => {
      const { device, grant } = await pending();
      const { store, clock } = env;
      clock.advance(5 * MINUTE);
      const live = deviceRecord(clock.now(), grant.clientId);
      await store.saveDeviceAuthorization!(live);
      clock.advance(6 * MINUTE);
      let total = 0;
      for (let removed = -1; removed !== 0;) total += removed = await store.purgeExpired(10);
      expect(total).toBe(1);
      expect(await store.findDeviceAuthorization!(device.deviceCodeHash, 'device_code')).toBeUndefined();
      expect(await store.findDeviceAuthorization!(live.deviceCodeHash, 'device_code')).toEqual(live);
    });
  });
}
