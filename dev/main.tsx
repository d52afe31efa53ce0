import "@conch/nacre/nacre.css";
import "./demo.css";
import transcript from "virtual:demo-transcript";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { MockDemo } from "./MockDemo.js";

const root = document.getElementById("root");
if (!root) throw new Error("The page has no #root element");
createRoot(root).render(
  <StrictMode>
    <MockDemo transcript={transcript} />
  </StrictMode>,
);
