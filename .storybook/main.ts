import type { StorybookConfig } from "@storybook/react-vite";
import { prebundledDeps } from "./prebundled-deps.js";

const config: StorybookConfig = {
  stories: ["../stories/**/*.stories.@(ts|tsx)"],
  addons: ["@storybook/addon-docs", "@storybook/addon-a11y", "@storybook/addon-vitest"],
  framework: { name: "@storybook/react-vite", options: { strictMode: true } },
  core: { disableTelemetry: true },
  async viteFinal(config) {
    const { mergeConfig, defaultClientConditions } = await import("vite");
    return mergeConfig(config, {
      resolve: { conditions: ["source", ...defaultClientConditions] },
      optimizeDeps: { include: [...prebundledDeps] },
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
