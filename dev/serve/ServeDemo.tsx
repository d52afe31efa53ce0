// `pnpm serve`'s page: the demo chat of `pnpm dev`, with the engine on the server (`/api/engine`) and a remote
// engine here. The page holds no provider code and never sees the key.
import type { ModelInfo } from "@conch/engine-client";
import { createRemoteEngine, type RemoteEngine, RemoteEngineError } from "@conch/engine-client/remote";
import { useCallback, useEffect, useState } from "react";
import { App } from "../App.js";

const baseURL = "/api/engine";
const tokenKey = "nacre-serve:token";
const keptKey = "nacre-serve:page";

interface Kept {
  model?: string;
  openChatId?: string;
}

function readKept(): Kept {
  try {
    const value = JSON.parse(localStorage.getItem(keptKey) ?? "{}") as unknown;
    return typeof value === "object" && value !== null ? (value as Kept) : {};
  } catch {
    return {};
  }
}

function writeKept(patch: Kept): void {
  localStorage.setItem(keptKey, JSON.stringify({ ...readKept(), ...patch }));
}

type Loading =
  | { readonly status: "loading" }
  | { readonly status: "sign-in"; readonly refused: boolean }
  | { readonly status: "failed"; readonly error: string }
  | { readonly status: "ready"; readonly base: RemoteEngine; readonly models: readonly ModelInfo[] };

function SignIn({ refused, onToken }: { refused: boolean; onToken: (token: string) => void }) {
  const [token, setToken] = useState("");
  return (
    <form
      className="demo-loading"
      onSubmit={(event) => {
        event.preventDefault();
        onToken(token.trim());
      }}
    >
      <p>{refused ? "That token was refused." : "This server asks for a token (NACRE_SERVER_TOKENS)."}</p>
      <label>
        Token <input type="password" value={token} onChange={(event) => setToken(event.target.value)} />
      </label>{" "}
      <button type="submit">Sign in</button>
    </form>
  );
}

export function ServeDemo() {
  const [token, setToken] = useState(() => sessionStorage.getItem(tokenKey) ?? "");
  const [loading, setLoading] = useState<Loading>({ status: "loading" });
  const [engine, setEngine] = useState<RemoteEngine | null>(null);
  const [kept] = useState(readKept);

  useEffect(() => {
    let cancelled = false;
    (async () => {
      const base = await createRemoteEngine({
        baseURL,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      const models = await base.listModels();
      if (cancelled) return;
      const chosen = models.find((model) => model.id === kept.model);
      setEngine(chosen ? base.withModel(chosen.id) : base);
      setLoading({ status: "ready", base, models });
    })().catch((error: unknown) => {
      if (cancelled) return;
      if (RemoteEngineError.isInstance(error) && error.status === 401) {
        setLoading({ status: "sign-in", refused: token !== "" });
      } else setLoading({ status: "failed", error: error instanceof Error ? error.message : String(error) });
    });
    return () => {
      cancelled = true;
    };
  }, [token, kept.model]);

  const switchModel = useCallback(
    async (model: ModelInfo) => {
      if (loading.status !== "ready") return;
      writeKept({ model: model.id });
      setEngine(loading.base.withModel(model.id));
    },
    [loading],
  );
  const keepOpenChat = useCallback((openChatId: string) => writeKept({ openChatId }), []);

  if (loading.status === "loading") {
    return (
      <p className="demo-loading" role="status">
        Connecting to the engine server…
      </p>
    );
  }
  if (loading.status === "sign-in") {
    return (
      <SignIn
        refused={loading.refused}
        onToken={(next) => {
          sessionStorage.setItem(tokenKey, next);
          setToken(next);
        }}
      />
    );
  }
  if (loading.status === "failed" || !engine) {
    return (
      <div className="demo-loading" role="alert">
        <p>Could not reach the engine server at {baseURL}.</p>
        <p>{loading.status === "failed" ? loading.error : "No engine."}</p>
      </div>
    );
  }
  return (
    <>
      <App
        engine={engine}
        models={loading.models}
        directory={loading.base.directory}
        initialChatId={kept.openChatId ?? "first"}
        onOpenChatChange={keepOpenChat}
        onSwitchModel={switchModel}
        aside={
          <section aria-labelledby="server-heading" className="demo-setup">
            <h2 id="server-heading">Engine server</h2>
            <p>
              {engine.displayName}: the engine, the transcripts and the key live on the server; this page talks to{" "}
              <code>{baseURL}</code>.
            </p>
          </section>
        }
      />
      <footer className="demo-footer">Served by `pnpm serve`. The provider's key never reaches this page.</footer>
    </>
  );
}
