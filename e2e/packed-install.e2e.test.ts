import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, launchChromium, repoRoot } from "./helpers.js";

const run = promisify(execFile);
const slow = 600_000;

/** The published packages, packed as `pnpm publish` would. */
const packages = ["packages/engine-client", "packages/nacre"] as const;

/**
 * The examples, each installed from the tarballs as a user would. Adding one is one line here; it follows the
 * contract: `npm run build` builds its page, `npm start` serves it with the engine (env PORT, DATA_DIR,
 * OPENAI_BASE_URL, OPENAI_API_KEY, MODEL), and the page has a textbox named "Message" and a "Send" button.
 */
const examples = ["examples/assistant-ui-chat", "examples/ai-sdk-chat"] as const;

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly exports: Readonly<Record<string, string | Readonly<Record<string, string>>>>;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly publishConfig?: unknown;
}

interface Tarball {
  readonly file: string;
  readonly manifest: Manifest;
  readonly files: readonly string[];
}

async function pack(packageDir: string, destination: string): Promise<Tarball> {
  const before = new Set(await readdir(destination));
  // pnpm pack runs prepack (a clean build of dist) and writes `workspace:*` as the version it stands for.
  await run("pnpm", ["pack", "--pack-destination", destination], { cwd: join(repoRoot, packageDir), timeout: slow });
  const name = (await readdir(destination)).find((entry) => entry.endsWith(".tgz") && !before.has(entry));
  if (!name) throw new Error(`pnpm pack made no tarball for ${packageDir}`);
  const file = join(destination, name);
  const { stdout: list } = await run("tar", ["tzf", file]);
  const { stdout: manifest } = await run("tar", ["xzf", file, "-O", "package/package.json"]);
  return { file, manifest: JSON.parse(manifest) as Manifest, files: list.split("\n").filter(Boolean) };
}

/** Every subpath a consumer imports from a manifest's `exports` (not the stylesheet or package.json). */
function codeEntries(manifest: Manifest): string[] {
  return Object.keys(manifest.exports)
    .filter((subpath) => !subpath.endsWith(".css") && subpath !== "./package.json")
    .map((subpath) => (subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`));
}

/** Every target of a manifest's `exports`, under every condition: each must be a file of the tarball. */
function exportTargets(manifest: Manifest): { readonly condition: string; readonly path: string }[] {
  return Object.values(manifest.exports).flatMap((target) =>
    typeof target === "string"
      ? [{ condition: "default", path: target }]
      : Object.entries(target).map(([condition, path]) => ({ condition, path })),
  );
}

describe("the packages as published: packed, installed outside the workspace, used", () => {
  let folder: string;
  let tarballs: Tarball[] = [];
  let fake: FakeProvider;
  let browser: Browser;
  const servers: ChildProcess[] = [];

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "nacre-packed-"));
    const tarballDir = join(folder, "tarballs");
    await mkdir(tarballDir);
    tarballs = [];
    for (const packageDir of packages) tarballs.push(await pack(packageDir, tarballDir));
    const fileSpec = (tarball: Tarball) => `file:${tarball.file}`;
    const ours = Object.fromEntries(tarballs.map((tarball) => [tarball.manifest.name, fileSpec(tarball)]));

    // A consumer of every entry, with every peer (optional ones too) at the version the workspace is tested on.
    const root = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as Manifest;
    const peers: Record<string, string> = {};
    for (const { manifest } of tarballs) {
      for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
        peers[name] = root.devDependencies?.[name] ?? range;
      }
    }
    const consumer = join(folder, "consumer");
    await mkdir(consumer);
    const entries = tarballs.flatMap(({ manifest }) => codeEntries(manifest));
    await writeFile(
      join(consumer, "package.json"),
      JSON.stringify({
        name: "consumer",
        private: true,
        type: "module",
        dependencies: { ...ours, ...peers },
        devDependencies: { typescript: root.devDependencies?.typescript, "@types/node": "20.19.43" },
      }),
    );
    await writeFile(
      join(consumer, "entries.ts"),
      entries.map((entry, index) => `export * as entry${index} from "${entry}";`).join("\n"),
    );
    await writeFile(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2023", "DOM", "DOM.Iterable"],
          jsx: "react-jsx",
          strict: true,
          noEmit: true,
          types: ["node"],
        },
        files: ["entries.ts"],
      }),
    );

    // Each example as a user has it: its own package.json, with our packages from the tarballs.
    const workspaces = ["consumer"];
    for (const example of examples) {
      const name = example.split("/").at(-1) as string;
      const target = join(folder, name);
      await cp(join(repoRoot, example), target, {
        recursive: true,
        filter: (source) => !/[/\\](node_modules|dist)$/.test(source),
      });
      const manifest = JSON.parse(await readFile(join(target, "package.json"), "utf8")) as Manifest;
      const dependencies = { ...manifest.dependencies };
      for (const name of Object.keys(ours)) if (dependencies[name]) dependencies[name] = ours[name] as string;
      await writeFile(join(target, "package.json"), JSON.stringify({ ...manifest, dependencies }, null, 2));
      workspaces.push(name);
    }
    // One npm install for all (npm workspaces); the overrides make @conch/nacre's own dependency on
    // @conch/engine-client the tarball too (it is not on the registry).
    await writeFile(
      join(folder, "package.json"),
      JSON.stringify({ name: "packed-install", private: true, workspaces, overrides: ours }),
    );
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: folder, timeout: slow });
  }, slow);

  afterAll(async () => {
    for (const server of servers) server.kill("SIGTERM");
    await browser?.close();
    await fake?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("should pack tarballs whose every export target is in them, with README and LICENSE, and no workspace: versions", () => {
    expect(tarballs.map((tarball) => tarball.manifest.name)).toEqual(["@conch/engine-client", "@conch/nacre"]);
    const engineClient = tarballs[0]?.manifest;
    for (const { manifest, files } of tarballs) {
      expect(JSON.stringify(manifest)).not.toContain("workspace:");
      // `publishConfig.exports` replaced the workspace's: no `source` condition pointing at a `src/` left behind.
      const targets = exportTargets(manifest);
      expect(targets.filter(({ condition }) => condition === "source")).toEqual([]);
      expect(targets.filter(({ path }) => !files.includes(`package/${path.slice(2)}`))).toEqual([]);
      expect(manifest.publishConfig).toBeUndefined();
      for (const file of ["CHANGELOG.md", "README.md", "LICENSE"]) expect(files).toContain(`package/${file}`);
      expect(files.filter((file) => /\.test\.|\.bench\./.test(file))).toEqual([]);
    }
    expect(tarballs[1]?.manifest.dependencies?.["@conch/engine-client"]).toBe(engineClient?.version);
  });

  it("should import every entry in Node and type-check a consumer of all of them (NodeNext)", {
    timeout: slow,
  }, async () => {
    const consumer = join(folder, "consumer");
    for (const { manifest } of tarballs) {
      for (const entry of codeEntries(manifest)) {
        const { stdout } = await run(
          process.execPath,
          ["--input-type=module", "-e", `const m = await import("${entry}"); console.log(Object.keys(m).length);`],
          { cwd: consumer },
        );
        expect(Number(stdout.trim()), entry).toBeGreaterThan(0);
      }
    }
    await run(process.execPath, [join(folder, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], {
      cwd: consumer,
      timeout: slow,
    });
  });

  describe.each(examples)("%s, installed from the tarballs", (example) => {
    const directory = () => join(folder, example.split("/").at(-1) as string);

    it("should type-check and build, with Nacre's stylesheet in the page", { timeout: slow }, async () => {
      await run(process.execPath, [join(folder, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], {
        cwd: directory(),
        timeout: slow,
      });
      await run("npm", ["run", "build"], { cwd: directory(), timeout: slow });
      const assets = join(directory(), "dist/assets");
      const styles = (await readdir(assets)).filter((file) => file.endsWith(".css"));
      const css = (await Promise.all(styles.map((file) => readFile(join(assets, file), "utf8")))).join("\n");
      expect(css).toContain("[data-nacre-summary-divider");
      expect(css).toContain("[data-nacre-turn-problem");
    });

    it("should answer a message in Chromium, with 0 page errors", { timeout: slow }, async () => {
      const apiKey = "sk-packed-0123456789-secret";
      fake ??= await startFakeProvider({ dialect: "openai", apiKey, reply: { text: "Hello from the tarballs." } });
      const port = await freePort();
      const server = spawn("npm", ["start"], {
        cwd: directory(),
        env: {
          ...process.env,
          PORT: String(port),
          DATA_DIR: join(directory(), ".chats"),
          OPENAI_BASE_URL: fake.baseURL,
          OPENAI_API_KEY: apiKey,
          MODEL: "fake-model",
        },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      servers.push(server);
      let output = "";
      server.stdout?.on("data", (chunk) => {
        output += String(chunk);
      });
      server.stderr?.on("data", (chunk) => {
        output += String(chunk);
      });
      const url = `http://127.0.0.1:${port}/`;
      await expect
        .poll(
          async () => {
            if (server.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
            return (await fetch(url).catch(() => null))?.status ?? 0;
          },
          { timeout: 120_000, interval: 250 },
        )
        .toBe(200);
      browser ??= await launchChromium();
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      try {
        await page.goto(url);
        await page.getByRole("textbox", { name: "Message" }).fill("Hi from a user's install");
        await page.getByRole("button", { name: "Send", exact: true }).click();
        await page.getByText("Hello from the tarballs.").waitFor({ timeout: 60_000 });
        // The person's message in the chat (the AI SDK example's chat list shows its first words too).
        await page.getByText("Hi from a user's install").and(page.locator(":not([data-nacre-chat-list] *)")).waitFor();
        const nacreRules = await page.evaluate(
          () =>
            [...document.styleSheets]
              .flatMap((sheet) => [...sheet.cssRules])
              .filter((rule) => rule.cssText.includes("data-nacre")).length,
        );
        expect(nacreRules).toBeGreaterThan(0);
        expect(pageErrors).toEqual([]);
      } finally {
        await page.close();
        // npm start's process group: npm, node and the server.
        if (server.pid) process.kill(-server.pid, "SIGTERM");
      }
    });
  });
});
