import "@conch/nacre/nacre.css";
import "./chat.css";
import { createRemoteEngine } from "@conch/engine-client/remote";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";

// The engine runs on the server (server.ts); this page holds no key and talks only to /api/engine.
const engine = await createRemoteEngine({ baseURL: "/api/engine" });
const chatId = new URLSearchParams(location.search).get("chat") ?? "assistant-ui-example";

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <App engine={engine} chatId={chatId} />
  </StrictMode>,
);
