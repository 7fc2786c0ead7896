/**
 * Headless chromium for a browser test: Debian's /usr/bin/chromium, driven by puppeteer-core
 * (no browser download), a fresh profile per test, closed and removed with the test. The
 * flags keep it off the network it cannot reach here (background networking, component
 * updates, sync) and off QUIC.
 *
 * Missing chromium fails the test under CI (any non-empty $CI); elsewhere the browser half is
 * passed with the reason printed, and the caller gets undefined.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import type { Test } from 'tap';

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM)
    ? undefined
    : `${CHROMIUM} is not installed (scripts/install-system-deps.sh installs it)`;
}

/** A browser for this test, closed with it; undefined (failed under CI, said elsewhere) without chromium. */
export async function chromium(t: Test): Promise<Browser | undefined> {
  const why = chromiumMissing();
  if (why) {
    if (process.env['CI']) t.fail(`CI needs the browser test: ${why}`);
    else {
      console.log(`# skipping the browser test: ${why}`);
      t.pass(`skipped: ${why}`);
    }
    return undefined;
  }
  const { default: puppeteer } = await import('puppeteer-core');
  const profile = mkdtempSync(join(tmpdir(), 'clibroker-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return browser;
}
