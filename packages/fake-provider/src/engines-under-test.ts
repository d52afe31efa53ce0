import { apiEngineUnderTest } from "./api-engine-under-test.js";
import type { MakeEngine } from "./engine-contract.js";
import { mockEngineUnderTest } from "./mock-engine-under-test.js";

/**
 * Every engine a UI test runs on, by name: the mock, and the API engine over the fake provider (real HTTP).
 * `describe.each(enginesUnderTest)` runs a conversation test on each, so stories and users see the same thing.
 */
export const enginesUnderTest: ReadonlyArray<readonly [name: string, makeEngine: MakeEngine]> = [
  ["the mock engine", mockEngineUnderTest],
  ["the API engine over the fake provider", (turns, setup) => apiEngineUnderTest(turns, setup)],
];
