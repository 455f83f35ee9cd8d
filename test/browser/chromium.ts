// Real headless Chromium for the browser suite: Debian's `chromium` package driven by
// playwright-core (which never downloads a browser here: it is pointed at the installed one).
// Where Chromium is missing the suite is skipped with one line saying what to install, unless
// TAPEDECK_REQUIRE_BROWSER=1 (set by .ci/run), which turns the skip into a failure so CI cannot
// pass without running it.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

// TAPEDECK_CHROMIUM, when set, is the only candidate (also how to see the skip and the failure).
const CANDIDATES = process.env.TAPEDECK_CHROMIUM ? [process.env.TAPEDECK_CHROMIUM] : ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium executable, or undefined. */
export const chromiumPath: string | undefined = CANDIDATES.find((p) => existsSync(p));

/** Why the suite cannot run here, or undefined when it can. */
export function skipReason(): string | undefined {
  if (chromiumPath) return undefined;
  const why = `browser suite skipped: no Chromium at ${CANDIDATES.join(' or ')}; install it with \`apt-get install chromium\` (Debian) or set TAPEDECK_CHROMIUM`;
  if (process.env.TAPEDECK_REQUIRE_BROWSER === '1') throw new Error(`${why}. TAPEDECK_REQUIRE_BROWSER=1 forbids skipping it.`);
  return why;
}

// Flags for a quiet, self-contained run: no sandbox (containers run as root), no GPU, no
// network side traffic (QUIC, component updates, sync), nothing from a previous profile.
export const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A fresh headless Chromium with its own profile directory; close() removes both. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'tapedeck-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath!, headless: true, args: FLAGS });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
