import {
  type AppendMessage,
  type AssistantRuntime,
  ExportedMessageRepository,
  type ExternalStoreAdapter,
  MessageNotSentError,
  type ThreadMessage,
  type ThreadMessageLike,
  useExternalStoreRuntime,
} from "@assistant-ui/react";
import type { ConversationMessage, ConversationStore, PicturePart, ToolResultPart } from "@conch/engine-client";
import { useMemo, useRef, useState } from "react";
import { parseComposerCommand } from "../composer.js";
import {
  type ConversationTarget,
  useConversation,
  useConversationStore,
  useStreamingMessage,
} from "../conversation.js";
import {
  type NacreMessageCustom,
  seqOfThreadMessageId,
  threadMessageId,
  toBranchableThreadMessages,
  toThreadMessages,
} from "./convert.js";

/** The person's words and pictures of a message assistant-ui's composer made. */
function inputOf(message: AppendMessage): { text: string; attachments: PicturePart[] } {
  const texts: string[] = [];
  const attachments: PicturePart[] = [];
  const parts = [...message.content, ...(message.attachments ?? []).flatMap((attachment) => attachment.content)];
  for (const part of parts) {
    if (part.type === "text") texts.push(part.text);
    else if (part.type === "image") attachments.push(pictureOf(part.image, part.filename ?? "picture"));
  }
  return { text: texts.join("\n\n"), attachments };
}

function pictureOf(image: string, name: string): PicturePart {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(image);
  if (data) return { type: "picture", name, mediaType: data[1] as string, data: data[2] as string };
  return { type: "picture", name, mediaType: "image/*", url: image };
}

/** Our messages are converted already; one function, so that assistant-ui's per-message cache holds. */
const asIs = (message: ThreadMessageLike): ThreadMessageLike => message;

function resultText(result: unknown): string {
  return typeof result === "string" ? result : JSON.stringify(result ?? null);
}

/** A version the person chose in the BranchPicker, while the engine makes its branch active. */
interface ChosenVersion {
  /** The chat's store it was chosen in. */
  readonly store: ConversationStore;
  /** The chosen version's seq. */
  readonly seq: number;
  /** The seq of the version shown in its place until then. */
  readonly shownSeq: number;
}

/** The shown version, marked while the engine switches to the one chosen instead. */
function switchingFrom(message: ThreadMessageLike, chosenSeq: number): ThreadMessageLike {
  const custom = message.metadata?.custom as unknown as NacreMessageCustom;
  const marked: NacreMessageCustom = { ...custom, nacreSwitchingTo: chosenSeq };
  return { ...message, metadata: { ...message.metadata, custom: { ...marked } } };
}

type VersionsByParent = ReadonlyMap<string | null, readonly number[]>;

/**
 * The versions logged under each thread parent so far, with what `logged` adds: assistant-ui orders a parent's
 * versions as they first come, and while a new answer streams the engine's branch briefly lacks the one it
 * replaces; remembered, it stays first, so ‹ n / m › counts in seq order as the engine does. The same map when
 * nothing is new.
 */
function rememberVersions(
  previous: VersionsByParent,
  logged: readonly ThreadMessageLike[],
  messages: readonly ConversationMessage[],
): VersionsByParent {
  const siblings = new Map(messages.map((message) => [message.seq, message.siblings?.seqs ?? []]));
  let byParent: Map<string | null, readonly number[]> | null = null;
  let parentId: string | null = null;
  // Logged messages only: a streamed one may yet be refused.
  for (const message of logged) {
    const seq = message.id === undefined ? null : seqOfThreadMessageId(message.id);
    if (seq !== null) {
      const known = (byParent ?? previous).get(parentId) ?? [];
      const versions = [...new Set([...known, ...(siblings.get(seq) ?? []), seq])].sort((a, b) => a - b);
      if (versions.length !== known.length) {
        byParent ??= new Map(previous);
        byParent.set(parentId, versions);
      }
    }
    parentId = message.id ?? null;
  }
  return byParent ?? previous;
}

const noVersions: VersionsByParent = new Map();

/**
 * {@link rememberVersions} as state derived while rendering (React's pattern for state that follows a prop):
 * a render thrown away, or rendered twice under StrictMode, changes nothing that stays. Forgotten for another
 * store (another chat).
 */
function useRememberedVersions(
  store: ConversationStore,
  branches: boolean,
  logged: readonly ThreadMessageLike[],
  messages: readonly ConversationMessage[],
): VersionsByParent {
  const [remembered, setRemembered] = useState(() => ({
    store,
    branches,
    logged,
    byParent: branches ? rememberVersions(noVersions, logged, messages) : noVersions,
  }));
  if (remembered.store === store && remembered.branches === branches && remembered.logged === logged) {
    return remembered.byParent;
  }
  const previous = remembered.store === store && remembered.branches === branches ? remembered.byParent : noVersions;
  const byParent = branches ? rememberVersions(previous, logged, messages) : noVersions;
  setRemembered({ store, branches, logged, byParent });
  return byParent;
}

/**
 * An assistant-ui runtime over the chat of the `ConversationProvider` above (or the one named): pass it to
 * `<AssistantRuntimeProvider runtime={…}>`. The thread shows the whole log, each message's seq kept
 * (`metadata.custom.nacreSeq`, id `nacre-<seq>`); the composer sends, or folds on `/compact [what to keep]`;
 * the stop button aborts; tool results go back through `sendToolResults` once every call of the message has
 * one. On an engine that declares `branches`, Edit makes a new version of the person's message (`edit`), Reload
 * another answer (`regenerate`), and assistant-ui's BranchPicker counts every version the engine keeps, after a
 * reload too, and moves between them (`selectBranch`: the engine's active branch follows; the version shown stays,
 * marked `nacreSwitchingTo`, until the chosen one has arrived). Without `branches`, and delete everywhere, they are not
 * offered: each would cut or reorder an append-only log.
 */
export function useNacreRuntime(target?: ConversationTarget): AssistantRuntime {
  const conversation = useConversation(target);
  const store = useConversationStore(target);
  const streaming = useStreamingMessage(target);
  // The log's thread messages change with the log, not per streamed delta: only the last one is new then, and
  // assistant-ui keeps the others' conversions (same objects, same converter).
  const logged = useMemo(
    () => toThreadMessages(conversation.messages, { firstKeptSeq: conversation.firstKeptSeq, streaming: null }),
    [conversation.messages, conversation.firstKeptSeq],
  );
  const lastSeq = conversation.messages.at(-1)?.seq ?? -1;
  const messages = useMemo(
    () =>
      streaming && streaming.seq > lastSeq
        ? [...logged, ...toThreadMessages([], { firstKeptSeq: null, streaming })]
        : logged,
    [logged, lastSeq, streaming],
  );
  // With versions, assistant-ui gets the tree (every version beside the shown one), so its BranchPicker counts
  // them after a reload too; each message converted once, so a streamed delta re-renders only the last one. A
  // cache keyed by the message objects: the same input gives the same output, so a render thrown away leaves it true.
  const converted = useRef(new WeakMap<ThreadMessageLike, Map<string | null, ThreadMessage>>());
  const branches = conversation.edit !== undefined && conversation.regenerate !== undefined;
  const versionsByParent = useRememberedVersions(store, branches, logged, conversation.messages);
  // The version chosen in the BranchPicker, until the engine has made its branch active.
  const [chosenVersion, setChosen] = useState<ChosenVersion | null>(null);
  const chosen = chosenVersion?.store === store ? chosenVersion : null;
  const switching = useRef<Promise<void>>(Promise.resolve());
  const messageRepository = useMemo(() => {
    if (!branches) return undefined;
    // The other versions are empty messages (the engine gives their seqs, not their words), so a chosen one is
    // never shown before it has arrived: until then the shown version stays, marked, and the head stays on it.
    // A new repository object makes assistant-ui take that head again, which its switchToBranch moved to the
    // empty version. (Knowing every version's words first would take a read of each branch from the engine.)
    const shown = chosen
      ? messages.map((message) =>
          message.id === threadMessageId(chosen.shownSeq) ? switchingFrom(message, chosen.seq) : message,
        )
      : messages;
    const items = toBranchableThreadMessages(shown, (seq, parentId) =>
      [...new Set([...(versionsByParent.get(parentId) ?? []), seq])].sort((a, b) => a - b),
    );
    return {
      headId: messages.at(-1)?.id ?? null,
      messages: items.map(({ message, parentId }) => {
        const byParent = converted.current.get(message) ?? new Map<string | null, ThreadMessage>();
        converted.current.set(message, byParent);
        let thread = byParent.get(parentId);
        if (!thread) {
          thread = ExportedMessageRepository.fromBranchableArray([{ message, parentId }]).messages[0]
            ?.message as ThreadMessage;
          byParent.set(parentId, thread);
        }
        return { message: thread, parentId };
      }),
    };
  }, [branches, messages, versionsByParent, chosen]);
  // Results handed in one by one, per assistant message, until each of its calls has one.
  const pendingResults = useRef(new Map<number, Map<string, ToolResultPart>>());

  // With the tree, no converter: assistant-ui then hands `setMessages` its own messages (ids kept); a converter
  // would hand back only the converted ones, which the tree has none of.
  return useExternalStoreRuntime<ThreadMessageLike>({
    ...(messageRepository ? { messageRepository } : { messages, convertMessage: asIs }),
    isLoading: conversation.isLoading,
    isRunning: conversation.status !== "ready",
    isSendDisabled: !conversation.canSend,
    onNew: async (message) => {
      const { text, attachments } = inputOf(message);
      const command = parseComposerCommand(text);
      if (command) {
        // Thrown errors of this kind hand the draft back to the composer: nothing the person typed is lost.
        if (!conversation.compact || conversation.compactUnavailable !== null) throw new MessageNotSentError();
        await conversation.compact(command.keep);
        return;
      }
      if (!conversation.canSend || (!text.trim() && attachments.length === 0)) throw new MessageNotSentError();
      await conversation.send(text, attachments.length > 0 ? { attachments } : {});
    },
    onCancel: async () => conversation.abort(),
    ...(conversation.edit && conversation.regenerate
      ? {
          onEdit: async (message: AppendMessage) => {
            const seq = message.sourceId === null ? null : seqOfThreadMessageId(message.sourceId);
            const { text, attachments } = inputOf(message);
            if (seq === null || !conversation.canSend || (!text.trim() && attachments.length === 0)) {
              throw new MessageNotSentError();
            }
            await store.edit(seq, text, attachments.length > 0 ? { attachments } : {});
          },
          onReload: async (parentId: string | null) => {
            const seq = parentId === null ? null : seqOfThreadMessageId(parentId);
            if (seq !== null) await store.regenerate(seq);
          },
          // assistant-ui's BranchPicker hands back the branch chosen: the engine makes it active (the first message
          // not on the branch shown names it) and the thread reads it back.
          setMessages: (branch: readonly (ThreadMessageLike | ThreadMessage)[]) => {
            const shown = new Set(conversation.messages.map((message) => message.seq));
            for (const [index, message] of branch.entries()) {
              const seq = message.id === undefined ? null : seqOfThreadMessageId(message.id);
              if (seq === null || shown.has(seq)) continue;
              // The branches share what comes before: the version shown in its place is at the same index.
              const shownId = messages[index]?.id;
              const shownSeq = shownId === undefined ? null : seqOfThreadMessageId(shownId);
              const choice: ChosenVersion = { store, seq, shownSeq: shownSeq ?? seq };
              setChosen(choice);
              // One switch at a time, in the order chosen: the engine's active branch ends on the last choice.
              switching.current = switching.current
                .then(() => store.selectBranch(seq))
                .then(
                  () => undefined,
                  () => undefined,
                )
                .finally(() => setChosen((current) => (current === choice ? null : current)));
              return;
            }
          },
        }
      : {}),
    onAddToolResult: async ({ messageId, toolCallId, toolName, result, isError }) => {
      const seq = seqOfThreadMessageId(messageId);
      const message = conversation.messages.find((candidate) => candidate.seq === seq);
      if (seq === null || !message) return;
      const answered = new Set(
        conversation.messages.flatMap((candidate) =>
          candidate.role === "tool" && candidate.seq > seq
            ? candidate.parts.flatMap((part) => (part.type === "tool-result" ? [part.callId] : []))
            : [],
        ),
      );
      const open = message.parts.flatMap((part) =>
        part.type === "tool-call" && !answered.has(part.id) ? [part.id] : [],
      );
      const pending = pendingResults.current.get(seq) ?? new Map<string, ToolResultPart>();
      pendingResults.current.set(seq, pending);
      pending.set(toolCallId, {
        type: "tool-result",
        callId: toolCallId,
        name: toolName,
        text: resultText(result),
        ...(isError ? { isError: true } : {}),
      });
      if (!open.every((id) => pending.has(id))) return;
      pendingResults.current.delete(seq);
      await conversation.sendToolResults(open.map((id) => pending.get(id) as ToolResultPart));
    },
  } as ExternalStoreAdapter<ThreadMessageLike>);
}
