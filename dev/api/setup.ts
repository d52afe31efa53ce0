// What the dev server tells the page about the provider it proxies to (`GET /__nacre/setup`).
// Shared by the Node side (dev/api/plugin.ts) and the page; it never carries a key.

import type { ProviderId } from "@conch/engine-client";

/** A model of the fake provider, as the page describes it. */
export interface FakeModelSummary {
  readonly id: string;
  readonly displayName: string;
  readonly window: number;
}

/** A provider whose "too long" words the footer switch can replay. */
export interface RefusalWording {
  readonly provider: string;
  readonly name: string;
}

/** The real transcript whose turns the fake model answers with their recorded replies. */
export interface RecordedTranscript {
  readonly id: string;
  readonly title: string;
  readonly source: string;
  readonly licence: string;
  /** The person's side of each recorded turn, in order (what "Send the next turn" sends). */
  readonly turns: readonly string[];
}

/** The fake provider's part of the setup. */
export interface FakeSetup {
  readonly models: readonly FakeModelSummary[];
  readonly summariserModel: string;
  readonly refusalWordings: readonly RefusalWording[];
  readonly transcript: RecordedTranscript | null;
}

/** Which provider `pnpm dev` talks to. */
export interface ApiPageSetup {
  /** `fake`: the fake provider server started by the dev server; `own`: the provider named by NACRE_* variables. */
  readonly kind: "fake" | "own";
  /** The adapter row the page uses. */
  readonly provider: ProviderId;
  /** A name for people ("OpenRouter (fake, on this computer)"). */
  readonly providerName: string;
  /** Where the dev server forwards `/provider/*` (no credentials in it). */
  readonly target: string;
  /** What the page adds to `/provider` for the adapter's base URL (`/v1` for a local server forwarded at its root). */
  readonly apiPath?: string;
  /** Whether the dev server adds a key to the provider's requests (the key itself never leaves it). */
  readonly hasKey: boolean;
  /** Whether the provider runs on this computer (then only the chat's own model summarises). */
  readonly local: boolean;
  /** The chat's model to start with; default: the first listed. */
  readonly model?: string;
  /** The summariser's first choice; "" turns the row's own default off. */
  readonly cheapestModel?: string;
  readonly smallModel?: string;
  /** The IndexedDB database of this setup, so fake and real chats never mix. */
  readonly databaseName: string;
  readonly systemPrompt: string;
  readonly fake: FakeSetup | null;
}

/** Where the page reads its {@link ApiPageSetup}. */
export const setupPath = "/__nacre/setup";
/** The same-origin path the page reaches the provider through. */
export const providerPath = "/provider";
/** The footer switch: `GET` its state, `POST { count, provider }` to arm it. */
export const refusePath = "/__nacre/refuse";
/** `POST`: the fake model cuts its next reply short and ends it with `length`, as at its output limit. */
export const cutNextPath = "/__nacre/cut-next";
/** The last request a chat model received from the page (fake provider only). */
export const lastRequestPath = "/__nacre/last-request";

/** What `GET /__nacre/refuse` answers. */
export interface RefusalState {
  /** Chat requests still to be refused (0, 1 or 2). */
  readonly remaining: number;
  readonly provider: string;
}

/** What `GET /__nacre/last-request` answers: what the fake provider received last from a chat model's turn. */
export interface LastRequest {
  readonly model: string;
  readonly messages: number;
  /** Tokens of the prompt as the fake provider counted them (o200k). */
  readonly inputTokens: number;
  /** The summary framed in front of the first kept person's message, unframed; null when none rode along. */
  readonly summary: string | null;
}
