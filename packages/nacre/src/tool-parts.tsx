"use client";
import type { ToolCallPart, ToolResultPart } from "@conch/engine-client";
import * as Collapsible from "@radix-ui/react-collapsible";
import { forwardRef } from "react";
import { useNacreMessages } from "./conversation.js";

/** A result longer than this many lines or characters starts closed. */
const longLines = 12;
const longCharacters = 800;
/** The summary of a call's arguments on its closed line. */
const summaryLength = 96;
const valueLength = 40;

function clip(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/**
 * The arguments on one short line: `path: "src/a.ts", recursive: true` for a JSON object (each value cut
 * short), else the text itself cut short. Model-written, so it is only ever shown as text.
 */
export function summariseToolArguments(argumentsText: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsText);
  } catch {
    return clip(argumentsText, summaryLength);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return clip(JSON.stringify(parsed) ?? "", summaryLength);
  }
  const entries = Object.entries(parsed).map(
    ([key, value]) => `${key}: ${clip(JSON.stringify(value) ?? "", valueLength)}`,
  );
  return clip(entries.join(", "), summaryLength);
}

function prettyArguments(argumentsText: string): string {
  try {
    return JSON.stringify(JSON.parse(argumentsText), null, 2);
  } catch {
    return argumentsText;
  }
}

/** How big a tool's text is, for the closed line. */
export function textSize(text: string): { readonly lines: number; readonly characters: number } {
  if (text === "") return { lines: 0, characters: 0 };
  let lines = 1;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) lines += 1;
  if (text.endsWith("\n")) lines -= 1;
  return { lines, characters: text.length };
}

export interface ToolCallProps extends Omit<Collapsible.CollapsibleProps, "disabled"> {
  /** The call: its tool's name and the arguments as the model wrote them. */
  call: Pick<ToolCallPart, "name" | "arguments">;
}

/**
 * A tool call, closed to one line (its name and its arguments summarised); opens to the arguments in full.
 * Radix Collapsible: `open`/`defaultOpen`/`onOpenChange`. `data-nacre-tool-call`, `data-state`.
 */
export const ToolCall = forwardRef<HTMLDivElement, ToolCallProps>(function ToolCall({ call, children, ...props }, ref) {
  const messages = useNacreMessages();
  const summary = summariseToolArguments(call.arguments);
  return (
    <Collapsible.Root data-nacre-tool-call="" data-tool={call.name} {...props} ref={ref}>
      {children ?? (
        <>
          <Collapsible.Trigger data-nacre-tool-trigger="">
            <span data-nacre-tool-name="">{messages.toolCall({ name: call.name })}</span>
            {summary && summary !== "{}" ? (
              <span data-nacre-tool-summary="" dir="auto">
                {summary}
              </span>
            ) : null}
          </Collapsible.Trigger>
          <Collapsible.Content data-nacre-tool-content="">
            <pre data-nacre-tool-arguments="">{prettyArguments(call.arguments)}</pre>
          </Collapsible.Content>
        </>
      )}
    </Collapsible.Root>
  );
});
ToolCall.displayName = "ToolCall";

export interface ToolResultProps extends Omit<Collapsible.CollapsibleProps, "disabled"> {
  /** The result: its text, whether it is an error, and its tool's name when known. */
  result: Pick<ToolResultPart, "name" | "text" | "isError">;
}

/**
 * A tool's result, closed to one line (the tool, whether it failed, the result's size); opens to the text.
 * Long results (over 12 lines or 800 characters) start closed, short ones open, unless `defaultOpen`/`open`
 * say otherwise. `data-nacre-tool-result`, `data-state`, `data-long`, `data-error`.
 */
export const ToolResult = forwardRef<HTMLDivElement, ToolResultProps>(function ToolResult(
  { result, children, defaultOpen, ...props },
  ref,
) {
  const messages = useNacreMessages();
  const size = textSize(result.text);
  const long = size.lines > longLines || size.characters > longCharacters;
  return (
    <Collapsible.Root
      data-nacre-tool-result=""
      {...(long ? { "data-long": "" } : {})}
      {...(result.isError ? { "data-error": "" } : {})}
      defaultOpen={defaultOpen ?? !long}
      {...props}
      ref={ref}
    >
      {children ?? (
        <>
          <Collapsible.Trigger data-nacre-tool-trigger="">
            <span data-nacre-tool-name="">
              {messages.toolResult({ name: result.name ?? null, isError: result.isError === true })}
            </span>
            <span data-nacre-tool-size="">{messages.toolResultSize(size)}</span>
          </Collapsible.Trigger>
          <Collapsible.Content data-nacre-tool-content="">
            <pre data-nacre-tool-output="">{result.text}</pre>
          </Collapsible.Content>
        </>
      )}
    </Collapsible.Root>
  );
});
ToolResult.displayName = "ToolResult";
