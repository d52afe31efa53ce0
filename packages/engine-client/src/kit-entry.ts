// `@conch/engine-client/kit`: the plumbing every engine is built on, for writing another one: event fan-out with
// listener isolation, the turn runner (busy, seq check, per-chat queue, the turn's stream), turn-end bookkeeping,
// the answer builder. A new engine is a turn body on these plus a passing engine contract suite. The chat
// reducer and `nextSeq` are in the root entry. Checked against api-surface/kit.txt, documented in docs/api.md.
export type { ErrorHandler } from "./errors.js";
export type { TranscriptSize } from "./events.js";
export {
  type Answer,
  createAnswer,
  createFanOut,
  createTurnRunner,
  createTurnStream,
  endTurn,
  type FanOut,
  type FollowedTurnBody,
  failTurn,
  type OpenedTurn,
  openTurn,
  startTurn,
  type TreePlace,
  type Turn,
  type TurnBody,
  type TurnBook,
  type TurnEndOptions,
  type TurnRunner,
  type TurnStreamWriter,
} from "./kit/index.js";
// For writing a chat store of one's own (the ChatStore interface itself is in the root entry): `readChatWith` is
// the one rule of what a chat read holds (the branch's tree, leaf, kept part and page), on the store's two steps.
export { type ChatReadSteps, readChatWith } from "./transcript/chat-reading.js";
export type { ChatReading, ReadChatOptions, ReadTranscriptOptions } from "./transcript/chat-store.js";
