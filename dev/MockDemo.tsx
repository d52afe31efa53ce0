import type { ModelInfo } from "@conch/engine-client";
import type { MockEngine } from "@conch/engine-client/mock";
import { useEffect, useState } from "react";
import { App } from "./App.js";
import { createDemoWorld, type DemoStep, type DemoWorld, demoChatId, demoSeed } from "./demo-script.js";
import { type MockChats, openMockChats } from "./mock-chats.js";
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

type Opened = { readonly world: DemoWorld; readonly chats: MockChats; readonly engine: MockEngine };

/**
 * The demo page on the scripted mock engine: a world of mock engines, one per model, that carry the chats; the
 * chats are kept in IndexedDB for the next load (`mock-chats.ts`).
 */
export function MockDemo({
  transcript,
  delayMs,
  databaseName = "nacre-mock-demo",
}: {
  transcript: DemoTranscript | null;
  delayMs?: number;
  /** The IndexedDB database of the chats (a story uses one of its own). Default `nacre-mock-demo`. */
  databaseName?: string;
}) {
  // Where the page keeps which chat was open, for the next load.
  const openChatKey = `${databaseName}:open-chat`;
  const [opened, setOpened] = useState<Opened | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let cancelled = false;
    const { seed, title } = demoSeed(transcript);
    openMockChats({ databaseName, demo: { chatId: demoChatId, seed, title } })
      .then((chats) => {
        if (cancelled) return;
        const world = createDemoWorld({
          transcript,
          chats: chats.seeds,
          ...(delayMs !== undefined ? { delayMs } : {}),
        });
        // Copies start before the page listens, so that a turn's chat is stored before the list reads it.
        setOpened({ world, chats, engine: chats.watch(world.engine) });
      })
      .catch((error: unknown) => {
        if (!cancelled) setFailed(error instanceof Error ? error.message : String(error));
      });
    return () => {
      cancelled = true;
    };
  }, [transcript, delayMs, databaseName]);

  if (failed !== null) {
    return (
      <p className="demo-loading" role="alert">
        Could not open the demo's chats: {failed}
      </p>
    );
  }
  if (!opened) {
    return (
      <p className="demo-loading" role="status">
        Opening the demo's chats…
      </p>
    );
  }
  const { world, chats, engine } = opened;
  const switchModel = async (model: ModelInfo, chatIds: readonly string[]) => {
    const next = await world.switchModel(engine, model, chatIds);
    setOpened({ world, chats, engine: chats.watch(next) });
  };
  return (
    <App
      engine={engine}
      models={world.models}
      directory={chats.directory}
      initialChatId={localStorage.getItem(openChatKey) ?? demoChatId}
      onOpenChatChange={(chatId) => localStorage.setItem(openChatKey, chatId)}
      onSwitchModel={switchModel}
      aside={<NextStep world={world} />}
    />
  );
}
