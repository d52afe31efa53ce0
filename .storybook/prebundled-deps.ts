/**
 * Dependencies Vite pre-bundles at start, for Storybook and the browser tests: found mid-run, they make Vite
 * reload and the first run fail.
 */
export const prebundledDeps: readonly string[] = [
  "react",
  "react/jsx-runtime",
  "react/jsx-dev-runtime",
  "react-dom",
  "react-dom/client",
  "@conch/engine-client > zod",
  "@conch/engine-client > eventsource-parser",
  "@conch/nacre > cmdk",
  "@conch/nacre > @radix-ui/react-collapsible",
  "@conch/nacre > @radix-ui/react-slot",
  "@conch/nacre > @tanstack/react-query",
  "@conch/nacre > react-markdown",
  "@conch/nacre > remark-gfm",
];
