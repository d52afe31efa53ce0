"use client";
// assistant-ui on a Nacre conversation: the runtime, and the parts that render our rows inside its thread.
// The meter needs no bridge: `ContextMeter.Root` from `@conch/nacre` works anywhere inside the provider.
export { type NacreMessageCustom, seqOfThreadMessageId, threadMessageId, toThreadMessages } from "./convert.js";
export { NacreSummaryDivider, NacreTurnProblem, useNacreMessageSeq } from "./parts.js";
export { useNacreRuntime } from "./runtime.js";
