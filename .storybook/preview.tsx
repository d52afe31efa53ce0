import "@conch/nacre/nacre.css";
import type { Preview } from "@storybook/react-vite";

const preview: Preview = {
  parameters: {
    a11y: { test: "error" },
    layout: "padded",
  },
};
export default preview;
