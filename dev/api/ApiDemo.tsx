import {
  type ApiEngine,
  createApiEngine,
  createIndexedDbChatStore,
  createProvider,
  type IndexedDbChatStore,
  type ModelInfo,
  type ProviderAdapter,
  ProviderCallError,
} from "@conch/engine-client";
import { useContextUsage, useConversation } from "@conch/nacre";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { App } from "../App.js";
import { RefusalSwitch } from "./RefusalSwitch.js";
import { type ApiPageSetup, providerPath } from "./setup.js";

const numbers = new Intl.NumberFormat("en");

/** What this page keeps in localStorage beside the chats in IndexedDB (per setup; never a key). */
interface Kept {
  model?: string;
  openChatId?: string;
}

function readKept(key: string): Kept {
  try {
    const value = JSON.parse(localStorage.getItem(key) ?? "{}") as unknown;
    return typeof value === "object" && value !== null ? (value as Kept) : {};
  } catch {
    return {};
  }
}

function writeKept(key: string, patch: Kept): void {
  localStorage.setItem(key, JSON.stringify({ ...readKept(key), ...patch }));
}

/** The model to open with: the one chosen last time, else NACRE_MODEL / the setup's, else the first ready one. */
function chooseModel(models: readonly ModelInfo[], setup: ApiPageSetup, saved: string | undefined): ModelInfo | null {
  const byId = (id: string | undefined) => (id ? models.find((model) => model.id === id) : undefined);
  return byId(saved) ?? byId(setup.model) ?? models.find((model) => model.ready) ?? models[0] ?? null;
}

function describeError(error: unknown): string {
  if (ProviderCallError.isInstance(error)) {
    const said = error.problem.providerMessage;
    return `${error.problem.title}${said ? `: ${said}` : ""}`;
  }
  return error instanceof Error ? error.message : String(error);
}

type Loading =
  | { readonly status: "loading" }
  | { readonly status: "failed"; readonly error: string }
  | { readonly status: "ready"; readonly models: readonly ModelInfo[] };

/** The side panel's own lines: where the provider is, and the engine's estimate of the next request. */
function SetupPanel({ setup }: { setup: ApiPageSetup }) {
  const usage = useContextUsage();
  return (
    <>
      <section aria-labelledby="estimate-heading" className="demo-setup">
        <h2 id="estimate-heading">Next request</h2>
        {usage ? (
          <dl>
            <dt>Estimate × factor</dt>
            <dd>
              {numbers.format(usage.usedTokens)} tokens (× {usage.factor.toFixed(2)})
            </dd>
            <dt>Budget for the chat</dt>
            <dd>{numbers.format(usage.budget)} tokens</dd>
            <dt>Window</dt>
            <dd>{numbers.format(usage.window)} tokens</dd>
          </dl>
        ) : (
          <p>Not known yet.</p>
        )}
      </section>
      <section aria-labelledby="provider-heading" className="demo-setup">
        <h2 id="provider-heading">Provider</h2>
        <p>
          {setup.providerName}, reached through this dev server at <code>{providerPath}</code> (it forwards to{" "}
          <code>{setup.target}</code>
          {setup.hasKey ? " and adds the key there; the key never reaches this page" : ""}).
        </p>
        {setup.fake ? <FakeProviderNotes setup={setup} /> : null}
      </section>
    </>
  );
}

function FakeProviderNotes({ setup }: { setup: ApiPageSetup }) {
  const fake = setup.fake;
  const conversation = useConversation();
  const sent = useMemo(
    () =>
      new Set(
        conversation.messages
          .filter((message) => message.role === "user")
          .map((message) =>
            message.parts
              .map((part) => (part.type === "text" ? part.text : ""))
              .join("")
              .replace(/\s+/g, " ")
              .trim(),
          ),
      ),
    [conversation.messages],
  );
  if (!fake) return null;
  const turns = fake.transcript?.turns ?? [];
  const next = turns.findIndex((turn) => !sent.has(turn.replace(/\s+/g, " ").trim()));
  return (
    <>
      <ul className="demo-models">
        {fake.models.map((model) => (
          <li key={model.id}>
            {model.displayName}: {numbers.format(model.window)} tokens
            {model.id === fake.summariserModel ? ", writes the summaries" : ""}
          </li>
        ))}
      </ul>
      <p>It counts every request with a real tokenizer (o200k) and refuses what does not fit, in OpenRouter's words.</p>
      {fake.transcript ? (
        <>
          <p>
            A turn of a real chat gets its recorded reply; anything else, the model reads back. Try the turns of “
            {fake.transcript.title}” ({fake.transcript.source}, {fake.transcript.licence}):
          </p>
          <button
            type="button"
            className="demo-next-turn"
            disabled={next === -1 || !conversation.canSend}
            onClick={() => {
              const text = turns[next];
              if (text !== undefined) void conversation.send(text);
            }}
          >
            {next === -1 ? "Every recorded turn is sent" : `Send recorded turn ${next + 1} of ${turns.length}`}
          </button>
        </>
      ) : (
        <p>The model reads your messages back.</p>
      )}
    </>
  );
}

/**
 * The demo page on the API engine: the provider's model list, one engine per chosen model (a switch makes a
 * new one over the same IndexedDB store, as a real app moves its chats), and the chats kept across reloads.
 */
export function ApiDemo({ setup }: { setup: ApiPageSetup }) {
  const keptKey = `${setup.databaseName}:page`;
  const [provider] = useState<ProviderAdapter>(() =>
    createProvider(setup.provider, {
      // The dev server forwards /provider to the provider (adding the key there).
      baseURL: new URL(`${providerPath}${setup.apiPath ?? ""}`, window.location.origin).href,
      // Set here: the page's own address is on this computer, the provider may not be.
      local: setup.local,
      ...(setup.cheapestModel !== undefined ? { cheapestModel: setup.cheapestModel } : {}),
      ...(setup.smallModel !== undefined ? { smallModel: setup.smallModel } : {}),
    }),
  );
  const [store] = useState<IndexedDbChatStore>(() => createIndexedDbChatStore({ databaseName: setup.databaseName }));
  const [loading, setLoading] = useState<Loading>({ status: "loading" });
  const [engine, setEngine] = useState<ApiEngine | null>(null);
  const generation = useRef(0);
  const [kept] = useState(() => readKept(keptKey));

  const makeEngine = useCallback(
    (model: string, models: readonly ModelInfo[]) => {
      generation.current += 1;
      return createApiEngine({
        provider,
        model,
        store,
        models,
        systemPrompt: setup.systemPrompt,
        id: `api-${generation.current}-${model}`,
        displayName: setup.providerName,
      });
    },
    [provider, store, setup],
  );

  useEffect(() => {
    const controller = new AbortController();
    provider
      .listModels({ abortSignal: controller.signal })
      .then((listed) => {
        if (controller.signal.aborted) return;
        const models =
          setup.model && !listed.some((model) => model.id === setup.model)
            ? [
                {
                  id: setup.model,
                  displayName: setup.model,
                  ready: true,
                  local: setup.local,
                  provider: setup.provider,
                },
                ...listed,
              ]
            : listed;
        const model = chooseModel(models, setup, kept.model);
        if (!model) {
          setLoading({ status: "failed", error: "The provider lists no models; name one with NACRE_MODEL." });
          return;
        }
        setEngine(makeEngine(model.id, models));
        setLoading({ status: "ready", models });
      })
      .catch((error: unknown) => {
        if (!controller.signal.aborted) setLoading({ status: "failed", error: describeError(error) });
      });
    return () => controller.abort();
  }, [provider, setup, kept.model, makeEngine]);

  const models = loading.status === "ready" ? loading.models : null;
  const switchModel = useCallback(
    async (model: ModelInfo) => {
      if (!models) return;
      writeKept(keptKey, { model: model.id });
      setEngine(makeEngine(model.id, models));
    },
    [models, keptKey, makeEngine],
  );
  const keepOpenChat = useCallback((openChatId: string) => writeKept(keptKey, { openChatId }), [keptKey]);

  if (loading.status === "loading") {
    return (
      <p className="demo-loading" role="status">
        Asking {setup.providerName} for its models…
      </p>
    );
  }
  if (loading.status === "failed" || !engine) {
    return (
      <div className="demo-loading" role="alert">
        <p>
          Could not start the chat on {setup.providerName} ({setup.target}).
        </p>
        <p>{loading.status === "failed" ? loading.error : "No engine."}</p>
        <p>Check NACRE_PROVIDER, NACRE_BASE_URL and NACRE_API_KEY where you started `pnpm dev`, then reload.</p>
      </div>
    );
  }
  return (
    <>
      <App
        engine={engine}
        models={loading.models}
        directory={store.directory}
        initialChatId={kept.openChatId ?? "first"}
        onOpenChatChange={keepOpenChat}
        onSwitchModel={switchModel}
        aside={<SetupPanel setup={setup} />}
      />
      {setup.fake ? (
        <RefusalSwitch engine={engine} wordings={setup.fake.refusalWordings} />
      ) : (
        <footer className="demo-footer">
          Your provider: {setup.providerName}.{" "}
          {setup.hasKey
            ? "The dev server adds its key (NACRE_API_KEY); the key never reaches this page."
            : "No key is sent (NACRE_API_KEY is not set)."}
        </footer>
      )}
    </>
  );
}
