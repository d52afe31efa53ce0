// Makes sure Debian's Chromium is at /usr/bin/chromium before the real-browser tests run.
// Playwright cannot download its own browser on these machines, so the tests drive the system one.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

if (existsSync(chromiumPath)) process.exit(0);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const prefix = isRoot ? [] : ["sudo", "-n"];
console.error(`[ensure-chromium] ${chromiumPath} is missing; installing Debian's chromium with apt-get…`);
try {
  const run = (args) =>
    execFileSync(prefix[0] ?? args[0], [...prefix.slice(1), ...(prefix.length ? args : args.slice(1))], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  run(["apt-get", "update"]);
  run(["apt-get", "install", "-y", "chromium"]);
} catch (error) {
  console.error(
    `[ensure-chromium] Could not install chromium (${error instanceof Error ? error.message : String(error)}).\n` +
      "Install it yourself (Debian/Ubuntu: `sudo apt-get install -y chromium`) or point CHROMIUM_PATH at a Chromium binary.",
  );
  process.exit(1);
}
if (!existsSync(chromiumPath)) {
  console.error(`[ensure-chromium] apt-get finished but ${chromiumPath} is still missing.`);
  process.exit(1);
}
