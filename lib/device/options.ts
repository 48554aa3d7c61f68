// The deviceAuthorization option (RFC 8628): off unless asked for, parsed once, failing fast with a message that
// says how to fix it.

/** The device authorization grant's settings, for clients with no browser at hand (a CLI on a remote box, CI). */
export interface DeviceAuthorizationOptions {
  /** How long a device code and its user code live, in seconds: 60 to 900. Default 600. */
  expiresIn?: number;
  /** How long the device waits between polls, in seconds (RFC 8628 §3.2): 1 to 60. Default 5. */
  interval?: number;
}

/** The settings as the router uses them. */
export interface DeviceAuthorizationConfig {
  expiresIn: number;
  interval: number;
}

/** The device-code grant's URN (RFC 8628 §3.4), the grant type clients register and send. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export function parseDeviceAuthorization(
  given: DeviceAuthorizationOptions | boolean | undefined,
  fail: (message: string) => never,
): DeviceAuthorizationConfig | undefined {
  if (given === undefined || given === false) return undefined;
  const options = given === true ? {} : given;
  if (typeof options !== 'object' || options === null)
    fail('deviceAuthorization must be true, false or { expiresIn, interval }.');
  const expiresIn = options.expiresIn ?? 600;
  const interval = options.interval ?? 5;
  // The contract of the reference app says at most 900 s; RFC 8628 §3.2 leaves it to the server.
  if (!Number.isInteger(expiresIn) || expiresIn < 60 || expiresIn > 900)
    fail('deviceAuthorization.expiresIn must be a whole number of seconds from 60 to 900.');
  if (!Number.isInteger(interval) || interval < 1 || interval > 60)
    fail('deviceAuthorization.interval must be a whole number of seconds from 1 to 60.');
  return { expiresIn, interval };
}
