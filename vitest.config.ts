import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defaultClientConditions, defaultServerConditions } from "vite";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import type { BrowserProviderOption } from "vitest/node";
import { prebundledDeps } from "./.storybook/prebundled-deps.js";
import { chromiumArgs, chromiumPath } from "./scripts/chromium.js";

/**
 * Whether this run may include the Storybook project. Its plugin costs about 4 s at every start (Storybook's
 * presets and story index) even when no story runs, so a run that names only other projects (`--project nacre`)
 * or only test files outside stories/ (`vitest run packages/…/x.test.ts`) leaves it out. Any other run (no
 * filter, a name filter, `--project storybook`) keeps it.
 */
function mayRunStories(argv: readonly string[]): boolean {
  const projects = argv.flatMap((arg, index) =>
    arg === "--project" ? [argv[index + 1] ?? ""] : arg.startsWith("--project=") ? [arg.slice(10)] : [],
  );
  if (projects.length > 0) return projects.some((name) => /storybook|[*?]/.test(name));
  const paths = argv.filter(
    (arg) => /\.(test|test-d|stories)\.[cm]?[jt]sx?$/.test(arg) || /^(packages|e2e|scripts)\//.test(arg),
  );
  return paths.length === 0 || paths.some((path) => /(^|\/)(stories|\.storybook)(\/|$)|\.stories\./.test(path));
}

/**
 * Playwright on Debian's Chromium; a new one (and a new `args` array, which Playwright may push to) per project.
 * `@vitest/browser-playwright` (Playwright and Vitest's browser server, about 0.5 s to import) loads only when a
 * browser project starts, not at every run's config load: a one-file Node or jsdom run never pays for it.
 */
const chromiumProvider = (): BrowserProviderOption => {
  const options = { launchOptions: { executablePath: chromiumPath, args: ["--headless", ...chromiumArgs] } };
  let loaded: BrowserProviderOption | undefined;
  return {
    name: "playwright",
    supportedBrowser: ["chromium"],
    options,
    async serverFactory(serverOptions) {
      const { playwright } = await import("@vitest/browser-playwright");
      loaded = playwright(options);
      return loaded.serverFactory(serverOptions);
    },
    providerFactory(project) {
      if (!loaded) throw new Error("The Playwright provider was asked for before its browser server started.");
      return loaded.providerFactory(project);
    },
  };
};

/** The stories in Chromium, through Storybook's Vitest plugin (imported only for a run that may include them). */
const storybookProject = (): TestProjectInlineConfiguration => ({
  plugins: [
    import("@storybook/addon-vitest/vitest-plugin").then(({ storybookTest }) =>
      storybookTest({ configDir: fileURLToPath(new URL("./.storybook", import.meta.url)) }),
    ),
  ],
  resolve: { conditions: ["source", ...defaultClientConditions] },
  test: {
    name: "storybook",
    // A whole-chat story plays a dozen turns, then the a11y check reads the page: 12 to 14 s on a busy machine, past
    // the browser default (15 s) on a loaded one. Its steps wait on conditions; the story as a whole may take long.
    testTimeout: 60_000,
    browser: {
      enabled: true,
      headless: true,
      instances: [{ browser: "chromium" }],
      provider: chromiumProvider(),
    },
  },
});

/**
 * How the Node and jsdom projects run their files: one worker thread per project run (a thread starts faster than
 * a forked process) that keeps its modules and its environment from file to file, instead of a fresh process, a
 * fresh jsdom and fresh imports of React, zod and the AI SDK for every file. Their tests leave no global state
 * behind (they pass with the files in any order: `--sequence.shuffle.files`), and `vitest.setup.ts` unmounts what a
 * file rendered. On this 2-core machine that cut the nacre project from 92 s of CPU to 24 s.
 */
const sharedWorker = { pool: "threads", isolate: false } as const;

export default defineConfig({
  plugins: [react()],
  resolve: { conditions: ["source", ...defaultClientConditions] },
  ssr: { resolve: { conditions: ["source", ...defaultServerConditions] } },
  test: {
    // The JSON report is what `.ci/run` reads for its closing `N passed, N failed` line.
    reporters: ["default", ["json", { outputFile: ".vitest-reports/results.json" }]],
    // Node would resolve the AI SDK's eventsource-parser by its `source` condition (TypeScript): Vite reads it.
    server: { deps: { inline: [/[\\/]node_modules[\\/](ai|ai6|@ai-sdk[\\/][^\\/]+)[\\/]/] } },
    projects: [
      {
        extends: true,
        test: {
          name: "engine-client",
          environment: "node",
          ...sharedWorker,
          include: ["packages/engine-client/src/**/*.test.ts"],
          // The Postgres store's tests run in the "postgres" project, which starts the server they need.
          exclude: ["**/*.browser.test.*", "**/node_modules/**", "packages/engine-client/src/postgres/**"],
          testTimeout: 30_000,
          benchmark: { include: ["packages/engine-client/src/**/*.bench.ts"] },
        },
      },
      {
        extends: true,
        test: {
          name: "fake-provider",
          environment: "node",
          ...sharedWorker,
          include: ["packages/fake-provider/src/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          // The type tests (`*.test-d.ts`) alone, in one tsc run: `pnpm test` runs them, `pnpm test:unit` leaves
          // them to `pnpm typecheck` (a project's own `typecheck.enabled` outranks the command line's).
          name: "types",
          typecheck: {
            enabled: true,
            only: true,
            include: ["packages/*/src/**/*.test-d.{ts,tsx}"],
            tsconfig: "./tsconfig.check.json",
          },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          environment: "node",
          include: ["packages/engine-client/src/postgres/**/*.test.ts"],
          // Starts a throwaway Postgres (installing Debian's when missing) unless DATABASE_URL is given, and makes
          // the empty PGlite cluster the tests copy.
          globalSetup: [
            "./scripts/ensure-postgres.mjs",
            "./packages/engine-client/src/postgres/testing/pglite-template.ts",
          ],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "scripts",
          environment: "node",
          include: ["scripts/**/*.test.ts"],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "nacre",
          environment: "jsdom",
          ...sharedWorker,
          include: ["packages/nacre/src/**/*.test.{ts,tsx}"],
          exclude: ["**/*.browser.test.*", "**/node_modules/**"],
          setupFiles: ["./vitest.setup.ts"],
        },
      },
      {
        extends: true,
        optimizeDeps: { include: [...prebundledDeps, "@testing-library/react"] },
        test: {
          name: "browser",
          include: ["packages/*/src/**/*.browser.test.{ts,tsx}"],
          browser: {
            enabled: true,
            headless: true,
            instances: [{ browser: "chromium" }],
            provider: chromiumProvider(),
          },
        },
      },
      ...(mayRunStories(process.argv) ? [storybookProject()] : []),
      {
        extends: true,
        test: {
          // The engine, `pnpm serve` and `pnpm dev:local` against a real llama.cpp llama-server and a real model.
          // The globalSetup builds the server once per machine (or finds it cached) and fails the project when it
          // cannot: the suite never skips.
          name: "real-server",
          environment: "node",
          include: ["e2e/real-server/**/*.real-server.test.ts"],
          globalSetup: ["./e2e/real-server/global-setup.ts"],
          // One server at a time: each runs on one thread, and the machine has two cores.
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          environment: "node",
          include: ["e2e/**/*.e2e.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
