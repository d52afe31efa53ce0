export { type Answer, createAnswer } from "./answer.js";
export { createFanOut, type FanOut } from "./fan-out.js";
export { foldedMessageCount, hasSomethingToFold, newestTurnStart, reduceChat, upsertMessage } from "./reduce-chat.js";
export { endTurn, failTurn, startTurn, type TurnBook, type TurnEndOptions } from "./turn-book.js";
export { nextSeq, type OpenedTurn, openTurn, type TreePlace } from "./turn-open.js";
export { createTurnRunner, type FollowedTurnBody, type Turn, type TurnBody, type TurnRunner } from "./turn-runner.js";
export { createTurnStream, type TurnStreamWriter } from "./turn-stream.js";
