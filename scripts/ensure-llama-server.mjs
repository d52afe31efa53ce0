// Builds llama.cpp's `llama-server` once per machine and prints its absolute path as the LAST line of stdout.
//
//   node scripts/ensure-llama-server.mjs        build when the cache has no binary for this source, flags and CPU
//
// The source is llama.cpp exactly as `node-llama-cpp@3.21.1` ships it (`llama/gitRelease.bundle`, a git bundle;
// `llama/llama.cpp.info.json` names its tag), fetched with `npm pack` into a cache folder outside the clone. It is
// never a workspace dependency: installing node-llama-cpp pulls every platform's prebuilt binaries (732 MB).
// Only the `llama-server` target is built, with Debian's cmake and g++ (installed with apt-get when missing, as
// ensure-chromium does for Chromium). The binary is statically linked against llama.cpp (one file suffices).
//
// Cache: `${NACRE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/nacre}/llama-server/`
//   source/node-llama-cpp-3.21.1/   the cloned bundle (kept: a rebuild with other flags needs no download)
//   bin/<key>/                      build/bin of one build; <key> = llama.cpp tag + hash(flags) + hash(CPU)
//   .lock                           held while fetching or building: a second process waits, then reuses
// Each build happens in a temporary folder and its bin folder is renamed into place, so a killed build never
// leaves a half-written binary where the next run would find it.
//
// LLAMA_SERVER_BIN=/path/to/llama-server skips all of this and prints that path (it must exist).
// Progress goes to stderr; stdout carries only the path.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { availableParallelism, homedir } from "node:os";
import { join } from "node:path";

const tag = "[ensure-llama-server]";
const NODE_LLAMA_CPP = "node-llama-cpp@3.21.1";

// The optimisation level, measured on this machine kind (2 cores, docs/real-server.md): compiling two of the
// largest C++ translation units took 9.3 / 10.9 / 14.5 s (common/chat.cpp) and 16.5 / 12.3 / 18.8 s
// (tools/server/server-context.cpp) at -O0 / -O1 / -O2, and CMake's Release is -O3. -O1 compiles about as fast as
// -O0 (less code to emit) and keeps ggml's SIMD loops fast; the 260K-parameter model's speed is bounded by
// per-token overhead, not arithmetic.
const OPTIMISATION = "-O1";

/** Every CMake option that shapes the binary; part of the cache key. */
const CMAKE_OPTIONS = [
  "-DCMAKE_BUILD_TYPE=Release",
  `-DCMAKE_C_FLAGS_RELEASE=${OPTIMISATION} -DNDEBUG`,
  `-DCMAKE_CXX_FLAGS_RELEASE=${OPTIMISATION} -DNDEBUG`,
  "-DBUILD_SHARED_LIBS=OFF",
  "-DLLAMA_BUILD_SERVER=ON",
  "-DLLAMA_BUILD_TESTS=OFF",
  "-DLLAMA_BUILD_EXAMPLES=OFF",
  // No HTTPS (the server listens on loopback; no OpenSSL headers needed) and no web UI: the prebuilt one would be
  // downloaded at configure time, and the tests talk to the API only. (LLAMA_CURL is gone at this tag.)
  "-DLLAMA_OPENSSL=OFF",
  "-DLLAMA_BUILD_UI=OFF",
  "-DLLAMA_USE_PREBUILT_UI=OFF",
];

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const log = (message) => console.error(`${tag} ${message}`);

function cacheRoot() {
  if (process.env.NACRE_CACHE_DIR) return process.env.NACRE_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "nacre");
}

const shortHash = (text) => createHash("sha256").update(text).digest("hex").slice(0, 12);

/** The CPU the binary is tuned for (ggml builds with -march=native): model name, architecture and SIMD flags. */
function cpuIdentity() {
  let model = "";
  let flags = "";
  try {
    const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
    model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? "";
    flags = /^(?:flags|Features)\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? "";
  } catch {
    // Not Linux: the architecture alone keys the cache.
  }
  const simd = flags
    .split(/\s+/)
    .filter((flag) => /^(sse|ssse|avx|fma|f16c|bmi|amx|vnni|neon|asimd|sve|fp16|dotprod|i8mm)/.test(flag))
    .sort()
    .join(" ");
  return `${process.arch} ${model} ${simd}`;
}

function run(command, args, options = {}) {
  execFileSync(command, args, { stdio: ["ignore", 2, 2], ...options });
}

function commandExists(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** Installs Debian's cmake, g++, git (and tar) when any is missing. */
function ensureToolchain() {
  const packages = { cmake: "cmake", "g++": "g++", make: "make", git: "git", tar: "tar" };
  const missing = Object.entries(packages)
    .filter(([command]) => !commandExists(command))
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  log(`missing ${missing.join(", ")}; installing with apt-get…`);
  const prefix = isRoot ? [] : ["sudo", "-n"];
  const apt = (args) => {
    const [command, ...rest] = [...prefix, "apt-get", ...args];
    run(command, rest, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  };
  try {
    apt(["update"]);
    apt(["install", "-y", "--no-install-recommends", ...missing]);
  } catch (error) {
    throw new Error(
      `${tag} could not install ${missing.join(", ")} (${error instanceof Error ? error.message : String(error)}). ` +
        `Install them yourself (Debian/Ubuntu: \`sudo apt-get install -y ${missing.join(" ")}\`), ` +
        "or point LLAMA_SERVER_BIN at a llama-server binary.",
    );
  }
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error?.code === "EPERM";
  }
}

/** Holds `.lock` (created exclusively, holding our pid) until `release`; waits for a live holder, takes over a dead one's. */
function acquireLock(lockPath) {
  let waitingSince = 0;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if (error?.code !== "EEXIST") throw error;
    }
    const holder = Number.parseInt(readFileSync(lockPath, { encoding: "utf8", flag: "a+" }), 10);
    if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
      log(`taking over the lock of process ${holder}, which is gone`);
      rmSync(lockPath, { force: true });
      continue;
    }
    if (!waitingSince) {
      waitingSince = Date.now();
      log(`another process (${Number.isNaN(holder) ? "starting" : holder}) is building; waiting for it…`);
    }
    sleep(1000);
  }
}

/** The llama.cpp source from node-llama-cpp's bundle, cloned into the cache once. Returns its folder and tag. */
function ensureSource(root) {
  const sourceDir = join(root, "source", NODE_LLAMA_CPP.replace("@", "-"));
  const infoPath = join(sourceDir, ".nacre-llama.cpp.info.json");
  if (existsSync(infoPath)) return { sourceDir, info: JSON.parse(readFileSync(infoPath, "utf8")) };

  const scratch = join(root, `source.tmp-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  log(`fetching llama.cpp's source with \`npm pack ${NODE_LLAMA_CPP}\`…`);
  const packed = execFileSync("npm", ["pack", NODE_LLAMA_CPP, "--silent", "--pack-destination", scratch], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", 2],
  })
    .trim()
    .split("\n")
    .at(-1);
  run("tar", [
    "-xzf",
    join(scratch, packed),
    "-C",
    scratch,
    "package/llama/gitRelease.bundle",
    "package/llama/llama.cpp.info.json",
  ]);
  const info = JSON.parse(readFileSync(join(scratch, "package/llama/llama.cpp.info.json"), "utf8"));
  run("git", [
    "clone",
    "--quiet",
    "-c",
    "advice.detachedHead=false",
    join(scratch, "package/llama/gitRelease.bundle"),
    join(scratch, "src"),
  ]);
  writeFileSync(
    join(scratch, "src", ".nacre-llama.cpp.info.json"),
    `${JSON.stringify({ ...info, from: NODE_LLAMA_CPP }, null, 2)}\n`,
  );
  mkdirSync(join(root, "source"), { recursive: true });
  rmSync(sourceDir, { recursive: true, force: true });
  renameSync(join(scratch, "src"), sourceDir);
  rmSync(scratch, { recursive: true, force: true });
  return { sourceDir, info: JSON.parse(readFileSync(infoPath, "utf8")) };
}

function build(root, sourceDir, key, binDir) {
  // Only the lock's holder builds, so the folder is per key, not per process: a build that was killed (Ctrl-C,
  // a machine reboot) goes on from the objects it had compiled instead of starting again.
  const buildDir = join(root, `build.tmp-${key}`);
  const jobs = String(Number(process.env.NACRE_BUILD_JOBS) || availableParallelism());
  const started = Date.now();
  log(`configuring in ${buildDir}…`);
  run("cmake", ["-S", sourceDir, "-B", buildDir, ...CMAKE_OPTIONS]);
  log(`building llama-server with ${jobs} jobs (about 6 minutes on an idle 2-core machine, 40-60 under heavy load)…`);
  run("cmake", ["--build", buildDir, "--target", "llama-server", "-j", jobs]);
  const seconds = Math.round((Date.now() - started) / 1000);
  const stagedBin = join(root, "bin", `${key}.tmp-${process.pid}`);
  rmSync(stagedBin, { recursive: true, force: true });
  cpSync(join(buildDir, "bin"), stagedBin, { recursive: true });
  writeFileSync(
    join(stagedBin, "nacre-build.json"),
    `${JSON.stringify({ source: NODE_LLAMA_CPP, cmakeOptions: CMAKE_OPTIONS, cpu: cpuIdentity(), jobs, seconds, builtAt: new Date().toISOString() }, null, 2)}\n`,
  );
  rmSync(binDir, { recursive: true, force: true });
  renameSync(stagedBin, binDir);
  rmSync(buildDir, { recursive: true, force: true });
  log(`built in ${Math.floor(seconds / 60)} min ${seconds % 60} s`);
}

function main() {
  if (process.env.LLAMA_SERVER_BIN) {
    if (!existsSync(process.env.LLAMA_SERVER_BIN))
      throw new Error(`${tag} LLAMA_SERVER_BIN=${process.env.LLAMA_SERVER_BIN} does not exist.`);
    return process.env.LLAMA_SERVER_BIN;
  }
  const root = join(cacheRoot(), "llama-server");
  // The key needs no download: the source is pinned by the npm version, so the cached path is one stat away.
  const key = `${NODE_LLAMA_CPP.replace("@", "-")}-${shortHash(CMAKE_OPTIONS.join("\n"))}-${shortHash(cpuIdentity())}`;
  const binDir = join(root, "bin", key);
  const binary = join(binDir, "llama-server");
  if (existsSync(binary)) return binary;

  mkdirSync(root, { recursive: true });
  const release = acquireLock(join(root, ".lock"));
  try {
    if (existsSync(binary)) return binary; // built by the process we waited for
    ensureToolchain();
    const { sourceDir, info } = ensureSource(root);
    log(`llama.cpp ${info.tag} (from ${NODE_LLAMA_CPP}); no cached build for this source, flags and CPU`);
    build(root, sourceDir, key, binDir);
  } finally {
    release();
  }
  if (!existsSync(binary)) throw new Error(`${tag} the build finished but ${binary} is missing.`);
  return binary;
}

try {
  const binary = main();
  process.stdout.write(`${binary}\n`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
