import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ChatDemo } from "./ChatDemo.js";
import { createDemoEngine, demoChatId } from "./demo-script.js";

const engine = createDemoEngine();
const root = document.getElementById("root");
if (!root) throw new Error("The page has no #root element");
createRoot(root).render(
  <StrictMode>
    <ChatDemo engine={engine} chatId={demoChatId} />
  </StrictMode>,
);
