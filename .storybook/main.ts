import type { StorybookConfig } from "@storybook/react-vite";

const config: StorybookConfig = {
  stories: ["../stories/**/*.stories.@(ts|tsx)"],
  addons: ["@storybook/addon-docs", "@storybook/addon-a11y", "@storybook/addon-vitest"],
  framework: { name: "@storybook/react-vite", options: { strictMode: true } },
  core: { disableTelemetry: true },
  async viteFinal(config) {
    const { mergeConfig, defaultClientConditions } = await import("vite");
    return mergeConfig(config, {
      resolve: { conditions: ["source", ...defaultClientConditions] },
      // Pre-bundle Nacre's dependencies at start: found mid-run, they make Vite reload and the first run fail.
      optimizeDeps: {
        include: [
          "react",
          "react/jsx-runtime",
          "react/jsx-dev-runtime",
          "react-dom",
          "react-dom/client",
          "@conch/engine-client > eventsource-parser",
          "@conch/engine-client > zod",
          "@conch/nacre > cmdk",
          "@conch/nacre > @radix-ui/react-collapsible",
          "@conch/nacre > @radix-ui/react-slot",
          "@conch/nacre > @tanstack/react-query",
        ],
      },
      build: {
        rolldownOptions: {
          onwarn(warning: { code?: string }, warn: (warning: { code?: string }) => void) {
            if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
          },
        },
      },
    });
  },
};
export default config;
