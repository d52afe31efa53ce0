export { type ApiEngine, type ApiEngineOptions, createApiEngine } from "./api-engine.js";
export { buildHandoff, type Handoff, handoffChars } from "./handoff.js";
