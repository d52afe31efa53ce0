"use client";
import { type CompactResult, type EngineEventOf, parseCompactCommand } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import {
  type ChangeEvent,
  type ComponentPropsWithoutRef,
  createContext,
  type FormEvent,
  forwardRef,
  type KeyboardEvent,
  useContext,
  useId,
  useState,
} from "react";
import { type ConversationTarget, useConversation, useNacreMessages } from "./conversation.js";
import { NacreOutsideProviderError } from "./errors.js";
import { composeEventHandlers } from "./internal/primitives.js";
import { useControllableState } from "./internal/use-controllable-state.js";

/** A recognised composer command. */
export interface CompactCommand {
  readonly type: "compact";
  /** What the summary should keep above all; undefined when not given. */
  readonly keep?: string;
}

/**
 * Recognises `/compact [what to keep]` at the start of a draft (surrounding space ignored); null for
 * anything else, which is a message to send.
 */
export function parseComposerCommand(draft: string): CompactCommand | null {
  const command = parseCompactCommand(draft);
  if (!command) return null;
  return command.keep !== undefined ? { type: "compact", keep: command.keep } : { type: "compact" };
}

/** What the last submit did. */
export type ComposerOutcome =
  | { readonly type: "sent"; readonly end: EngineEventOf<"turn-end"> | null }
  | { readonly type: "compact"; readonly result: CompactResult["status"] | "all-folded" | "unavailable" };

export interface UseComposerOptions extends ConversationTarget {
  /** Controlled draft. */
  value?: string;
  /** Default "". */
  defaultValue?: string;
  onValueChange?: (value: string) => void;
  /** Called after each submit with what it did. */
  onSubmitted?: (outcome: ComposerOutcome) => void;
  /**
   * Edits the person's message at this seq in place: a submit sends the draft as its new version (the engine
   * must declare `branches`), and `/compact` is words like any other.
   */
  editSeq?: number;
}

/**
 * The composer's logic without its parts: the draft, whether it is `/compact`, and `submit`, which folds
 * for `/compact [what to keep]` and sends anything else. The draft clears when a submit is taken.
 */
export function useComposer(options: UseComposerOptions = {}) {
  const { value: valueProp, defaultValue = "", onValueChange, onSubmitted, editSeq, ...target } = options;
  const conversation = useConversation(target);
  const [value, setValue] = useControllableState({
    prop: valueProp,
    defaultProp: defaultValue,
    onChange: onValueChange,
  });
  const [lastCompact, setLastCompact] = useState<Extract<ComposerOutcome, { type: "compact" }>["result"] | null>(null);
  const command = editSeq === undefined ? parseComposerCommand(value) : null;
  const isCommandDraft = editSeq === undefined && value.trimStart().startsWith("/");
  const canSubmit = command
    ? conversation.compactUnavailable !== "busy" && conversation.compactUnavailable !== "loading"
    : value.trim().length > 0 && conversation.canSend;

  const submit = async (): Promise<ComposerOutcome | null> => {
    if (!canSubmit) return null;
    if (command) {
      const compact = conversation.compact;
      if (!compact) {
        setLastCompact("unavailable");
        const outcome: ComposerOutcome = { type: "compact", result: "unavailable" };
        onSubmitted?.(outcome);
        return outcome;
      }
      setValue("");
      setLastCompact(null);
      const summarisedBefore = conversation.summary !== null;
      const compacted = await compact(command.keep);
      // Nothing to fold after a summary: say that the summary already holds it all, not "yet".
      const result = compacted.status === "nothing-to-fold" && summarisedBefore ? "all-folded" : compacted.status;
      setLastCompact(result);
      const outcome: ComposerOutcome = { type: "compact", result };
      onSubmitted?.(outcome);
      return outcome;
    }
    const text = value.trim();
    setValue("");
    setLastCompact(null);
    const end =
      editSeq === undefined ? await conversation.send(text) : ((await conversation.edit?.(editSeq, text)) ?? null);
    const outcome: ComposerOutcome = { type: "sent", end };
    onSubmitted?.(outcome);
    return outcome;
  };

  return {
    value,
    setValue,
    /** Sets the draft as the person types (clears what the last `/compact` said). */
    edit: (next: string) => {
      setLastCompact(null);
      setValue(next);
    },
    /** The recognised command, or null for a message. */
    command,
    /** Whether the draft starts with `/` (show the hint). */
    isCommandDraft,
    canSubmit,
    /** What the last `/compact` did, until the next submit. */
    lastCompact,
    /** Whether a turn or a fold runs (the submit button becomes Stop). */
    busy: conversation.status !== "ready",
    submit,
    abort: conversation.abort,
  };
}

type ComposerState = ReturnType<typeof useComposer> & { readonly hintId: string };

const ComposerContext = createContext<ComposerState | null>(null);

function useComposerPart(part: string): ComposerState {
  const state = useContext(ComposerContext);
  if (!state) throw new NacreOutsideProviderError(`<Composer.${part}>`, "<Composer.Root>");
  return state;
}

export interface ComposerRootProps
  extends Omit<ComponentPropsWithoutRef<"form">, "defaultValue" | "onSubmit">,
    Pick<UseComposerOptions, "value" | "defaultValue" | "onValueChange" | "onSubmitted" | "editSeq"> {
  asChild?: boolean;
  onSubmit?: (event: FormEvent<HTMLFormElement>) => void;
}

/**
 * The composer: a form whose submit sends the draft, or folds for `/compact [what to keep]`.
 * `value`/`defaultValue`/`onValueChange`; `data-nacre-composer`, `data-command="compact"` while the draft is one,
 * `data-busy` while a turn or fold runs.
 */
export const ComposerRoot = forwardRef<HTMLFormElement, ComposerRootProps>(function ComposerRoot(
  { value, defaultValue, onValueChange, onSubmitted, editSeq, asChild, onSubmit, children, ...props },
  ref,
) {
  const composer = useComposer({
    ...(editSeq !== undefined ? { editSeq } : {}),
    ...(value !== undefined ? { value } : {}),
    ...(defaultValue !== undefined ? { defaultValue } : {}),
    ...(onValueChange ? { onValueChange } : {}),
    ...(onSubmitted ? { onSubmitted } : {}),
  });
  const hintId = useId();
  const Component = asChild ? Slot : "form";
  return (
    <ComposerContext.Provider value={{ ...composer, hintId }}>
      <Component
        data-nacre-composer=""
        {...(composer.command ? { "data-command": "compact" } : {})}
        {...(composer.busy ? { "data-busy": "" } : {})}
        {...props}
        onSubmit={composeEventHandlers(onSubmit, (event: FormEvent<HTMLFormElement>) => {
          event.preventDefault();
          void composer.submit();
        })}
        ref={ref}
      >
        {children ?? (
          <>
            <ComposerInput />
            <ComposerHint />
            <ComposerSubmit />
          </>
        )}
      </Component>
    </ComposerContext.Provider>
  );
});
ComposerRoot.displayName = "Composer.Root";

export interface ComposerInputProps extends Omit<ComponentPropsWithoutRef<"textarea">, "value" | "defaultValue"> {
  asChild?: boolean;
}

/** The draft. Enter submits, Shift+Enter adds a line; named "Message" unless labelled otherwise. */
export const ComposerInput = forwardRef<HTMLTextAreaElement, ComposerInputProps>(function ComposerInput(
  { asChild, onChange, onKeyDown, ...props },
  ref,
) {
  const composer = useComposerPart("Input");
  const messages = useNacreMessages();
  const Component = asChild ? Slot : "textarea";
  const labelled =
    props["aria-label"] !== undefined || props["aria-labelledby"] !== undefined || props.id !== undefined;
  return (
    <Component
      data-nacre-composer-input=""
      rows={2}
      placeholder={messages.composerPlaceholder}
      {...(labelled ? {} : { "aria-label": messages.composerLabel })}
      aria-describedby={composer.isCommandDraft || composer.lastCompact ? composer.hintId : undefined}
      {...props}
      value={composer.value}
      onChange={composeEventHandlers(onChange, (event: ChangeEvent<HTMLTextAreaElement>) =>
        composer.edit(event.target.value),
      )}
      onKeyDown={composeEventHandlers(onKeyDown, (event: KeyboardEvent<HTMLTextAreaElement>) => {
        if (event.key !== "Enter" || event.shiftKey || event.nativeEvent.isComposing) return;
        event.preventDefault();
        void composer.submit();
      })}
      ref={ref}
    />
  );
});
ComposerInput.displayName = "Composer.Input";

export interface ComposerSubmitProps extends ComponentPropsWithoutRef<"button"> {
  asChild?: boolean;
}

/** Send (or "Summarise" for `/compact`); while a turn or fold runs it is Stop, which aborts. */
export const ComposerSubmit = forwardRef<HTMLButtonElement, ComposerSubmitProps>(function ComposerSubmit(
  { asChild, children, onClick, ...props },
  ref,
) {
  const composer = useComposerPart("Submit");
  const messages = useNacreMessages();
  const Component = asChild ? Slot : "button";
  if (composer.busy) {
    return (
      <Component
        type="button"
        data-nacre-composer-submit=""
        data-action="stop"
        {...props}
        onClick={composeEventHandlers(onClick, () => composer.abort())}
        ref={ref}
      >
        {children ?? messages.composerStop}
      </Component>
    );
  }
  return (
    <Component
      type="submit"
      data-nacre-composer-submit=""
      data-action={composer.command ? "compact" : "send"}
      disabled={!composer.canSubmit}
      {...props}
      {...(onClick ? { onClick } : {})}
      ref={ref}
    >
      {children ?? (composer.command ? messages.composerCompact : messages.composerSend)}
    </Component>
  );
});
ComposerSubmit.displayName = "Composer.Submit";

export interface ComposerHintProps extends ComponentPropsWithoutRef<"p"> {
  asChild?: boolean;
}

/**
 * A polite live line: the `/compact [what to keep]` hint while the draft starts with `/`, then what the
 * last `/compact` did. Always in the page (empty when quiet), so screen readers hear it change.
 */
export const ComposerHint = forwardRef<HTMLParagraphElement, ComposerHintProps>(function ComposerHint(
  { asChild, children, ...props },
  ref,
) {
  const composer = useComposerPart("Hint");
  const messages = useNacreMessages();
  const text = composer.lastCompact
    ? messages.composerCompactResult(composer.lastCompact)
    : composer.isCommandDraft
      ? messages.composerCompactHint
      : "";
  const Component = asChild ? Slot : "p";
  return (
    <Component
      id={composer.hintId}
      aria-live="polite"
      data-nacre-composer-hint=""
      {...(text ? {} : { "data-empty": "" })}
      {...props}
      ref={ref}
    >
      {children ?? text}
    </Component>
  );
});
ComposerHint.displayName = "Composer.Hint";
