// Headless Chromium through playwright-core, with the flags this machine needs (no network beyond loopback).
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Browser tests run wherever Chromium is installed, and always in CI (where .ci/run installs it). */
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!browserAvailable) {
  console.warn(
    `Browser tests skipped: no Chromium at ${CHROMIUM}. Install it with: apt-get install -y chromium`,
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
