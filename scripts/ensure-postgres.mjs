// A real Postgres for the tests: `DATABASE_URL` when it is given, else a throwaway cluster of Debian's
// `postgresql` (installed with apt-get when missing) in a temporary folder, on a free loopback port.
//
//   node scripts/ensure-postgres.mjs            prints the URL, keeps the server until Ctrl-C, then removes it
//   node scripts/ensure-postgres.mjs --install  only makes sure the server binaries are there
//
// It is also the Vitest globalSetup of the projects that need Postgres (vitest.config.ts): `setup` starts one
// server per run, shared by every project that lists it, hands its URL to the tests (`inject("databaseUrl")` and
// `DATABASE_URL`), and `teardown` stops and removes it after the last of them.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.mjs";

const tag = "[ensure-postgres]";
const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** The folder holding initdb, pg_ctl and postgres: `PG_BIN`, the newest of Debian's, or one on the PATH. */
export function findPostgresBin() {
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, "initdb")) ? process.env.PG_BIN : null;
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name) && existsSync(join(debian, name, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(debian, versions[0], "bin");
  }
  const found = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" });
  const path = found.status === 0 ? found.stdout.trim() : "";
  return path ? join(path, "..") : null;
}

/** Installs Debian's `postgresql` when no server binaries are found; returns their folder or throws. */
export function ensurePostgresInstalled() {
  const existing = findPostgresBin();
  if (existing) return existing;
  console.error(`${tag} no Postgres server found; installing Debian's postgresql with apt-get…`);
  const prefix = isRoot ? [] : ["sudo", "-n"];
  const run = (args) => {
    const [command, ...rest] = [...prefix, ...args];
    execFileSync(command, rest, {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  };
  try {
    run(["apt-get", "update"]);
    // Only the server: the package's own cluster is not used (ours is a throwaway one per run).
    run(["apt-get", "install", "-y", "--no-install-recommends", "postgresql"]);
  } catch (error) {
    throw new Error(
      `${tag} could not install postgresql (${error instanceof Error ? error.message : String(error)}). ` +
        "Install it yourself (Debian/Ubuntu: `sudo apt-get install -y postgresql`), point PG_BIN at its bin folder, " +
        "or set DATABASE_URL to a server the tests may use.",
    );
  }
  const installed = findPostgresBin();
  if (!installed) throw new Error(`${tag} apt-get finished but no initdb is to be found under /usr/lib/postgresql.`);
  return installed;
}

/** initdb refuses to run as root: root runs the server as the unprivileged `postgres` user the package made. */
function serverUser() {
  if (!isRoot) return null;
  const found = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (found.status !== 0 || gid.status !== 0) {
    throw new Error(`${tag} running as root, but there is no \`postgres\` user to run the server as.`);
  }
  return { name: "postgres", uid: Number(found.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function runAs(user, command, args) {
  const [file, argv] = user ? ["runuser", ["-u", user.name, "--", command, ...args]] : [command, args];
  const result = spawnSync(file, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (result.status !== 0) {
    throw new Error(`${tag} ${command} failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

// A process of its own that stops and removes the server when the process that started it is gone without
// calling stop (a test run killed, Ctrl-C on Vitest): no throwaway server outlives its run.
const watchdogSource = `
const [owner, runAsUser, pgCtl, dataDir, folder] = process.argv.slice(1);
const { spawnSync } = require("node:child_process");
const { rmSync } = require("node:fs");
setInterval(() => {
  try { process.kill(Number(owner), 0); return; } catch {}
  const args = [pgCtl, "-D", dataDir, "-m", "immediate", "-w", "stop"];
  if (runAsUser) spawnSync("runuser", ["-u", runAsUser, "--", ...args]); else spawnSync(args[0], args.slice(1));
  rmSync(folder, { recursive: true, force: true });
  process.exit(0);
}, 1000);
`;

function watchOwner(user, pgCtl, dataDir, folder) {
  const child = spawn(
    process.execPath,
    ["-e", watchdogSource, String(process.pid), user?.name ?? "", pgCtl, dataDir, folder],
    {
      detached: true,
      stdio: "ignore",
    },
  );
  child.unref();
  return child;
}

/**
 * Starts a throwaway cluster and resolves `{ url, stop }`; with `DATABASE_URL` set, resolves that URL and a
 * `stop` that does nothing. Tuned for tests (no fsync): it holds nothing that must survive a power cut.
 */
export async function startPostgres(options = {}) {
  const given = options.databaseUrl ?? process.env.DATABASE_URL;
  if (given) return { url: given, external: true, stop: async () => undefined };
  const bin = ensurePostgresInstalled();
  const user = serverUser();
  const folder = mkdtempSync(join(tmpdir(), "conch-pg-"));
  const dataDir = join(folder, "data");
  const password = randomBytes(12).toString("hex");
  const passwordFile = join(folder, "password");
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (user) {
    chownSync(folder, user.uid, user.gid);
    chownSync(passwordFile, user.uid, user.gid);
  }
  const removeFolder = () => rmSync(folder, { recursive: true, force: true });
  try {
    runAs(user, join(bin, "initdb"), [
      "-D",
      dataDir,
      "-U",
      "conch",
      `--pwfile=${passwordFile}`,
      "--auth-host=scram-sha-256",
      "--auth-local=peer",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
    ]);
  } catch (error) {
    removeFolder();
    throw error;
  }
  rmSync(passwordFile, { force: true });

  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const serverOptions = [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-k ${folder}`,
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=200",
    ].join(" ");
    try {
      runAs(user, join(bin, "pg_ctl"), [
        "-D",
        dataDir,
        "-o",
        serverOptions,
        "-l",
        join(folder, "server.log"),
        "-w",
        "-t",
        "60",
        "start",
      ]);
    } catch (error) {
      lastError = error; // most likely someone took the port in between: try another one
      continue;
    }
    const url = `postgres://conch:${password}@127.0.0.1:${port}/postgres`;
    const watchdog = watchOwner(user, join(bin, "pg_ctl"), dataDir, folder);
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      watchdog.kill();
      try {
        runAs(user, join(bin, "pg_ctl"), ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } finally {
        removeFolder();
      }
    };
    return { url, external: false, folder, stop };
  }
  removeFolder();
  throw lastError;
}

const shared = Symbol.for("conch.ensure-postgres.server");

/** Vitest globalSetup: one server for every project of the run that lists this file. */
export async function setup(project) {
  globalThis[shared] ??= { users: 0, server: null };
  const state = globalThis[shared];
  state.users += 1;
  state.server ??= startPostgres();
  const server = await state.server;
  process.env.DATABASE_URL = server.url;
  project.provide("databaseUrl", server.url);
}

export async function teardown() {
  const state = globalThis[shared];
  if (!state) return;
  state.users -= 1;
  if (state.users > 0 || !state.server) return;
  const server = await state.server;
  state.server = null;
  await server.stop();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv.includes("--install")) {
      if (!process.env.DATABASE_URL) ensurePostgresInstalled();
      process.exit(0);
    }
    const server = await startPostgres();
    console.log(server.url);
    if (server.external) process.exit(0);
    console.error(`${tag} throwaway server running; Ctrl-C stops and removes it.`);
    const shutdown = () => server.stop().finally(() => process.exit(0));
    process.on("SIGINT", shutdown);
    process.on("SIGTERM", shutdown);
    setInterval(() => undefined, 1 << 30);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
