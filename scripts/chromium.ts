// Debian's Chromium as the real-browser runs drive it: Vitest's browser projects, the e2e tests and the UI bench.
// (scripts/ensure-chromium.mjs, plain Node, keeps its own copy of the path.)

/** The binary: `CHROMIUM_PATH`, else Debian's Chromium (which `pnpm test` installs when it is missing). */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Headless-friendly flags, without background network calls (the machine's network is closed). */
export const chromiumArgs: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
