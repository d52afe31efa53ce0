import type { Engine } from "@conch/engine-client";
import { useCallback, useEffect, useState } from "react";
import { type RefusalState, type RefusalWording, refusePath } from "./setup.js";

const choices = [
  { count: 0, label: "Answer" },
  { count: 1, label: "Refuse once" },
  { count: 2, label: "Refuse twice" },
] as const;

function statusText(state: RefusalState, wordings: readonly RefusalWording[]): string {
  const name = wordings.find((wording) => wording.provider === state.provider)?.name ?? state.provider;
  switch (state.remaining) {
    case 0:
      return "The fake provider answers the next request.";
    case 1:
      return `The next request is refused as too long, in ${name}'s words; the engine retries once, quietly.`;
    default:
      return `The next two requests are refused as too long, in ${name}'s words: the quiet retry fails too, and the too-long card shows.`;
  }
}

async function call(init?: RequestInit): Promise<RefusalState> {
  const response = await fetch(refusePath, init);
  const body = (await response.json()) as RefusalState | { error: string };
  if (!response.ok || "error" in body) throw new Error("error" in body ? body.error : `HTTP ${response.status}`);
  return body;
}

/**
 * The footer switch of the fake provider: refuse the chat model's next request for length once (a quiet retry
 * heals it) or twice (the too-long card), in the words of a chosen provider. Summaries still get written.
 */
export function RefusalSwitch({ engine, wordings }: { engine: Engine; wordings: readonly RefusalWording[] }) {
  const [state, setState] = useState<RefusalState | null>(null);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(() => {
    call()
      .then((next) => {
        setState(next);
        setError(null);
      })
      .catch((reason: unknown) => setError(String(reason)));
  }, []);
  useEffect(() => refresh(), [refresh]);
  // Each turn may use a refusal up: read the switch again when one ends.
  useEffect(
    () =>
      engine.subscribe((event) => {
        if (event.type === "turn-end") refresh();
      }),
    [engine, refresh],
  );

  const arm = (count: number, provider: string) => {
    call({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ count, provider }) })
      .then((next) => {
        setState(next);
        setError(null);
      })
      .catch((reason: unknown) => setError(String(reason)));
  };

  const disabled = state === null || wordings.length === 0;
  return (
    <footer className="demo-footer">
      <fieldset disabled={disabled}>
        <legend>Next request to a chat model:</legend>
        {choices.map((choice) => (
          <label key={choice.count}>
            <input
              type="radio"
              name="refuse"
              value={choice.count}
              checked={state?.remaining === choice.count}
              onChange={() => state && arm(choice.count, state.provider)}
            />{" "}
            {choice.label}
          </label>
        ))}
        <label>
          in the words of{" "}
          <select value={state?.provider ?? ""} onChange={(event) => state && arm(state.remaining, event.target.value)}>
            {wordings.map((wording) => (
              <option key={wording.provider} value={wording.provider}>
                {wording.name}
              </option>
            ))}
          </select>
        </label>
      </fieldset>
      <output className="demo-footer-status" aria-live="polite">
        {error ??
          (wordings.length === 0
            ? "No refusal bodies (test-fixtures/refusals/bodies.json is missing)."
            : state
              ? statusText(state, wordings)
              : "")}
      </output>
    </footer>
  );
}
