import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "@conch/nacre/nacre.css";
import "./chat.css";
import { App } from "./App.js";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
