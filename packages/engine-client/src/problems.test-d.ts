import { describe, expectTypeOf, it } from "vitest";
import type { EngineEvent } from "./events.js";
import type { NextStep, TurnProblem, TurnProblemKind } from "./problems.js";

/** What a card would do per kind; the `satisfies never` line fails to compile when a kind is missing. */
function nextLabel(problem: TurnProblem): string {
  switch (problem.kind) {
    case "too-long":
      return problem.next.type === "switch-model" ? `Switch to ${problem.next.model.displayName}` : "New chat";
    case "auth":
    case "quota":
      return "Open settings";
    case "rate-limited":
      return problem.next.type === "retry-after" ? `Retry in ${problem.next.seconds}s` : "Retry";
    case "model-unavailable":
      return problem.next.type;
    case "offline":
    case "provider-error":
      return "Retry";
    case "refused":
      return problem.next.type;
    default:
      return problem satisfies never;
  }
}

describe("TurnProblem", () => {
  it("should be exhausted by a switch over its eight kinds", () => {
    expectTypeOf(nextLabel).returns.toEqualTypeOf<string>();
    expectTypeOf<TurnProblemKind>().toEqualTypeOf<
      "too-long" | "auth" | "rate-limited" | "quota" | "model-unavailable" | "offline" | "refused" | "provider-error"
    >();
  });

  it("should not be exhausted when a kind is left out", () => {
    function missingOffline(problem: TurnProblem): string {
      switch (problem.kind) {
        case "too-long":
        case "auth":
        case "quota":
        case "rate-limited":
        case "model-unavailable":
        case "provider-error":
        case "refused":
          return "handled";
        default:
          // @ts-expect-error: "offline" is not handled, so `problem` is not `never` here.
          return problem satisfies never;
      }
    }
    expectTypeOf(missingOffline).parameter(0).toEqualTypeOf<TurnProblem>();
  });

  it("should allow only the next steps that fit the kind", () => {
    expectTypeOf<Extract<TurnProblem, { kind: "too-long" }>["next"]["type"]>().toEqualTypeOf<
      "switch-model" | "new-chat"
    >();
    expectTypeOf<Extract<TurnProblem, { kind: "auth" }>["next"]>().toEqualTypeOf<
      Extract<NextStep, { type: "open-settings" }>
    >();
    // @ts-expect-error: an offline problem cannot suggest a new chat.
    const wrong: TurnProblem = { kind: "offline", title: "x", next: { type: "new-chat", message: "m" } };
    void wrong;
  });
});

describe("EngineEvent", () => {
  it("should be exhausted by a switch over its types", () => {
    function describeEvent(event: EngineEvent): string {
      switch (event.type) {
        case "turn-start":
        case "message-start":
        case "text-delta":
        case "thinking-delta":
        case "tool-call":
        case "message-end":
        case "usage":
        case "compacting":
        case "compacted":
        case "compaction-skipped":
        case "healed":
        case "health-note":
        case "turn-problem":
        case "turn-end":
          return event.type;
        default:
          return event satisfies never;
      }
    }
    expectTypeOf(describeEvent).returns.toBeString();
  });
});
