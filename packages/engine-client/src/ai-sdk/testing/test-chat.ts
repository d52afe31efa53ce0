import { AbstractChat, type ChatInit, type ChatState, type ChatStatus } from "ai";
import { AbstractChat as AbstractChatOnAi6 } from "ai6";
import type { NacreUIMessage } from "../ui-message.js";

/** The state `useChat` keeps, as plain arrays: the SDK's own chat machinery runs over it, without React. */
class ArrayChatState implements ChatState<NacreUIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: NacreUIMessage[];
  constructor(messages: NacreUIMessage[]) {
    this.messages = messages;
  }
  pushMessage = (message: NacreUIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: NacreUIMessage) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** `useChat`'s chat (the SDK's AbstractChat) on plain state, for tests in Node. */
export class TestChat extends AbstractChat<NacreUIMessage> {
  constructor(init: ChatInit<NacreUIMessage>) {
    super({ ...init, state: new ArrayChatState(init.messages ?? []) });
  }
  get chatState(): ChatState<NacreUIMessage> {
    return this.state;
  }
}

/** The same on ai 6's AbstractChat (AI Elements still pins ai 6): the transport must serve both. */
export class TestChatOnAi6 extends (AbstractChatOnAi6 as unknown as typeof AbstractChat)<NacreUIMessage> {
  constructor(init: ChatInit<NacreUIMessage>) {
    super({ ...init, state: new ArrayChatState(init.messages ?? []) });
  }
  get chatState(): ChatState<NacreUIMessage> {
    return this.state;
  }
}

/** The text of a message's text parts. */
export function textOf(message: NacreUIMessage | undefined): string {
  return (message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
}
