import "@conch/nacre/nacre.css";
import type { Preview } from "@storybook/react-vite";
import { configure } from "storybook/test";

// Plays wait on conditions (findBy…, waitFor): a loaded machine can take longer than the default 1 s to render.
configure({ asyncUtilTimeout: 10_000 });

const preview: Preview = {
  parameters: {
    a11y: { test: "error" },
    layout: "padded",
  },
};
export default preview;
