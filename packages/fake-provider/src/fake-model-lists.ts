import { type FakeDialect, type FakeModel, type FakeOpenAIRow, unknownModelBody } from "./fake-provider-dialects.js";
import type { FakeRecordedRequest } from "./fake-provider-types.js";
import { numberField } from "./fake-request-reading.js";

// The model lists each dialect and row answers with, shaped as that company's.

/** The `created` time every listed model and streamed chunk carries. */
export const created = 1_735_000_000;

function windowOf(model: FakeModel): number | null {
  return model.window ?? null;
}
function advertisedOf(model: FakeModel): number | null {
  return model.advertisedWindow ?? model.window ?? null;
}

/** The `/models` body of an OpenAI-style row, shaped as that company's. */
export function openAIModelList(row: FakeOpenAIRow, models: readonly FakeModel[]): unknown {
  const plain = (model: FakeModel) => ({ id: model.id, object: "model", created, owned_by: row });
  switch (row) {
    case "openai":
    case "xai":
    case "zhipu":
    case "lmstudio":
      return { object: "list", data: models.map(plain) };
    case "deepseek":
      return { object: "list", data: models.map((model) => ({ id: model.id, object: "model", owned_by: "deepseek" })) };
    case "groq":
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          active: true,
          context_window: windowOf(model),
          public_apps: null,
          max_completion_tokens: 8192,
        })),
      };
    case "together":
      return models.map((model) => ({
        ...plain(model),
        type: "chat",
        running: false,
        display_name: model.displayName ?? model.id,
        context_length: windowOf(model),
      }));
    case "mistral":
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          owned_by: "mistralai",
          capabilities: { completion_chat: true, completion_fim: false, function_calling: true, vision: false },
          name: model.id,
          description: model.displayName ?? model.id,
          max_context_length: windowOf(model),
          aliases: [],
          type: "base",
        })),
      };
    case "openrouter":
      return {
        data: models.map((model) => ({
          id: model.id,
          name: model.displayName ?? model.id,
          created,
          context_length: advertisedOf(model),
          top_provider: { context_length: windowOf(model), max_completion_tokens: null, is_moderated: false },
        })),
      };
    case "vllm":
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          owned_by: "vllm",
          root: model.id,
          parent: null,
          max_model_len: windowOf(model),
        })),
      };
    case "llama.cpp":
      // The older shape without meta.n_ctx: the window must come from /props, never n_ctx_train.
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          owned_by: "llamacpp",
          meta: { vocab_type: 2, n_vocab: 128256, n_ctx_train: advertisedOf(model), n_embd: 4096 },
        })),
      };
    default:
      return row satisfies never;
  }
}

/** llama.cpp `/props`: the per-slot `n_ctx`; in router mode (several models) a bare `/props` says 0. */
export function llamaCppProps(models: readonly FakeModel[], modelId: string | null): unknown {
  const model = modelId === null ? (models.length === 1 ? models[0] : undefined) : models.find((m) => m.id === modelId);
  return {
    default_generation_settings: { params: { temperature: 0.8 }, n_ctx: model?.window ?? 0 },
    total_slots: 1,
    model_alias: model?.id ?? "",
  };
}

/** LM Studio `/api/v1/models` (0.4+): the loaded instance's window and the most it could load. */
export function lmStudioV1List(models: readonly FakeModel[]): unknown {
  return {
    models: models.map((model) => ({
      type: "llm",
      publisher: "fake",
      key: model.id,
      display_name: model.displayName ?? model.id,
      architecture: "llama",
      max_context_length: advertisedOf(model),
      loaded_instances: model.loaded === false ? [] : [{ id: model.id, config: { context_length: windowOf(model) } }],
      format: "gguf",
    })),
  };
}

/** LM Studio `/api/v0/models` (0.3.6+). */
export function lmStudioV0List(models: readonly FakeModel[]): unknown {
  return {
    object: "list",
    data: models.map((model) => ({
      id: model.id,
      object: "model",
      type: "llm",
      publisher: "fake",
      state: model.loaded === false ? "not-loaded" : "loaded",
      max_context_length: advertisedOf(model),
      ...(model.loaded !== false && { loaded_context_length: windowOf(model) }),
    })),
  };
}

/** Anthropic `GET /v1/models`. */
export function anthropicModelList(models: readonly FakeModel[]): unknown {
  return {
    data: models.map((model) => ({
      type: "model",
      id: model.id,
      display_name: model.displayName ?? model.id,
      created_at: "2025-10-01T00:00:00Z",
      max_input_tokens: windowOf(model),
      max_tokens: 64000,
    })),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  };
}

/** Gemini `GET /v1beta/models`. */
export function googleModelList(models: readonly FakeModel[]): unknown {
  return {
    models: models.map((model) => ({
      name: `models/${model.id}`,
      version: "001",
      displayName: model.displayName ?? model.id,
      inputTokenLimit: windowOf(model),
      outputTokenLimit: 65536,
      supportedGenerationMethods: ["generateContent", "countTokens"],
    })),
  };
}

/** Ollama `GET /api/tags`. */
export function ollamaTags(models: readonly FakeModel[]): unknown {
  return {
    models: models.map((model) => ({
      name: model.id,
      model: model.id,
      modified_at: "2025-10-01T00:00:00Z",
      size: 4_920_000_000,
      digest: "0".repeat(64),
      details: { format: "gguf", family: "llama", parameter_size: "8B", quantization_level: "Q4_K_M" },
    })),
  };
}

/** Ollama `POST /api/show`: what the model could read (its trained window). */
export function ollamaShow(model: FakeModel): unknown {
  return {
    details: { format: "gguf", family: "llama", parameter_size: "8B" },
    model_info: {
      "general.architecture": "llama",
      "general.parameter_count": 8_030_261_248,
      "llama.context_length": advertisedOf(model),
    },
    capabilities: ["completion", "tools"],
  };
}

/** What a model-list route answers: the status and the body. */
export interface ModelsAnswer {
  readonly status: number;
  readonly body: string | object;
}

/** The answer of a model-list route (`models`, llama.cpp `props`, LM Studio's lists, Ollama `show` and `ps`). */
export function modelsResponse(input: {
  readonly route: string;
  readonly dialect: FakeDialect;
  readonly row: FakeOpenAIRow;
  readonly models: readonly FakeModel[];
  readonly lmStudioRestVersion: "v1" | "v0" | "none";
  readonly url: URL;
  readonly body: unknown;
  readonly requests: readonly FakeRecordedRequest[];
}): ModelsAnswer {
  const { dialect, row, models, lmStudioRestVersion, url, body } = input;
  switch (input.route) {
    case "models":
      switch (dialect) {
        case "openai":
          return { status: 200, body: openAIModelList(row, models) as object };
        case "anthropic":
          return { status: 200, body: anthropicModelList(models) as object };
        case "google":
          return { status: 200, body: googleModelList(models) as object };
        case "ollama":
          return { status: 200, body: ollamaTags(models) as object };
        default:
          return dialect satisfies never;
      }
    case "props":
      return { status: 200, body: llamaCppProps(models, url.searchParams.get("model")) as object };
    case "lm-v1":
      return lmStudioRestVersion === "v1"
        ? { status: 200, body: lmStudioV1List(models) as object }
        : { status: 404, body: { error: "Unexpected endpoint or method. (GET /api/v1/models)" } };
    case "lm-v0":
      return lmStudioRestVersion !== "none"
        ? { status: 200, body: lmStudioV0List(models) as object }
        : { status: 404, body: { error: "Unexpected endpoint or method. (GET /api/v0/models)" } };
    case "show": {
      const name = typeof body === "object" && body !== null ? (body as { model?: unknown; name?: unknown }) : {};
      const id = String(name.model ?? name.name ?? "");
      const model = models.find((item) => item.id === id);
      return model
        ? { status: 200, body: ollamaShow(model) as object }
        : { status: 404, body: unknownModelBody("ollama", id) };
    }
    case "ps": {
      const lastWindows = new Map<string, number>();
      for (const recorded of input.requests) {
        const numCtx = numberField(
          (recorded.body as { options?: { num_ctx?: unknown } } | undefined)?.options?.num_ctx,
        );
        if (recorded.kind === "chat" && recorded.model && numCtx !== undefined) lastWindows.set(recorded.model, numCtx);
      }
      return {
        status: 200,
        body: {
          models: [...lastWindows].map(([name, contextLength]) => ({
            name,
            model: name,
            context_length: contextLength,
          })),
        },
      };
    }
    default:
      return { status: 404, body: { error: `Unknown route ${input.route}` } };
  }
}
