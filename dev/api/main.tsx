import "@conch/nacre/nacre.css";
import "../demo.css";
import "./api.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ApiDemo } from "./ApiDemo.js";
import { type ApiPageSetup, setupPath } from "./setup.js";

const element = document.getElementById("root");
if (!element) throw new Error("The page has no #root element");
const root = createRoot(element);
try {
  const response = await fetch(setupPath);
  if (!response.ok) throw new Error(`${setupPath} answered HTTP ${response.status}`);
  const setup = (await response.json()) as ApiPageSetup;
  root.render(
    <StrictMode>
      <ApiDemo setup={setup} />
    </StrictMode>,
  );
} catch (error) {
  root.render(
    <p className="demo-loading" role="alert">
      The dev server did not say which provider to use ({String(error)}). Start this page with `pnpm dev`.
    </p>,
  );
}
