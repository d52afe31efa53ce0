import "@conch/nacre/nacre.css";
import "../demo.css";
import "../api/api.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ServeDemo } from "./ServeDemo.js";

const element = document.getElementById("root");
if (!element) throw new Error("The page has no #root element");
createRoot(element).render(
  <StrictMode>
    <ServeDemo />
  </StrictMode>,
);
