import type { ModelInfo } from "@conch/engine-client";
import type { MockEngine } from "@conch/engine-client/mock";
import { useEffect, useState } from "react";
import { App } from "./App.js";
import { createDemoWorld, type DemoStep, type DemoWorld, demoChatId } from "./demo-script.js";
import type { DemoTranscript } from "./transcript-plugin.js";

const stepText: Record<DemoStep, string> = {
  fold: "a fold before the answer (the divider says “Summarising…”, then moves)",
  "quiet-retry": "a “too long” refusal healed by a quiet retry (see Health)",
  answer: "a plain answer",
  "too-long": "a “too long” problem card with one next step",
  "cut-off": "a reply cut off at the output limit, with Continue",
};

function NextStep({ world }: { world: DemoWorld }) {
  const [step, setStep] = useState(world.nextStep());
  useEffect(() => world.onStep(() => setStep(world.nextStep())), [world]);
  return (
    <section aria-labelledby="script-heading" className="demo-script">
      <h2 id="script-heading">Mock script</h2>
      <p>Your next message gets {stepText[step]}.</p>
    </section>
  );
}

/** The demo page on the scripted mock engine: a world of mock engines, one per model, that carry the chats. */
export function MockDemo({ transcript, delayMs }: { transcript: DemoTranscript | null; delayMs?: number }) {
  const [world] = useState(() => createDemoWorld({ transcript, ...(delayMs !== undefined ? { delayMs } : {}) }));
  const [engine, setEngine] = useState<MockEngine>(world.engine);
  const switchModel = async (model: ModelInfo, chatIds: readonly string[]) => {
    setEngine(await world.switchModel(engine, model, chatIds));
  };
  return (
    <App
      engine={engine}
      models={world.models}
      initialChatId={demoChatId}
      initialTitle={world.title}
      onSwitchModel={switchModel}
      aside={<NextStep world={world} />}
    />
  );
}
