"use client";
import type { ModelInfo, NextStep, TurnProblem } from "@conch/engine-client";
import * as Collapsible from "@radix-ui/react-collapsible";
import { Slot } from "@radix-ui/react-slot";
import {
  type ComponentPropsWithoutRef,
  createContext,
  forwardRef,
  useCallback,
  useContext,
  useEffect,
  useId,
  useMemo,
  useState,
} from "react";
import { type ConversationHostActions, useConversation, useInConversation, useNacreMessages } from "./conversation.js";
import { NacreOutsideProviderError } from "./errors.js";
import { preferPassed } from "./internal/conversation-defaults.js";
import { PlainText } from "./internal/plain-text.js";
import { composeEventHandlers } from "./internal/primitives.js";

interface ProblemData {
  readonly problem: TurnProblem;
  /** The person's words the problem belongs to. */
  readonly message: string;
  readonly model: string | null;
  readonly titleId: string;
  readonly actions: ConversationHostActions & { readonly onRetry?: () => void };
}

const ProblemContext = createContext<ProblemData | null>(null);

function useProblem(part: string): ProblemData {
  const data = useContext(ProblemContext);
  if (!data) throw new NacreOutsideProviderError(`<TurnProblem.${part}>`, "<TurnProblem.Root>");
  return data;
}

export interface TurnProblemRootProps extends ComponentPropsWithoutRef<"div"> {
  /** The problem. Default: the conversation's; nothing renders without one. */
  problem?: TurnProblem | null;
  /** The person's words the problem belongs to. Default: the conversation's. */
  message?: string;
  /** The chat's model name, for the description. Default: the conversation's. */
  model?: string | null;
  /** "Switch to {model}". Default: the provider's `onSwitchModel`. */
  onSwitchModel?: ConversationHostActions["onSwitchModel"];
  /** "Start a new chat with this message". Default: the provider's `onNewChat`. */
  onNewChat?: ConversationHostActions["onNewChat"];
  /** "Open settings". Default: the provider's `onOpenSettings`. */
  onOpenSettings?: ConversationHostActions["onOpenSettings"];
  /** "Try again". Default: sends the message again in the conversation. */
  onRetry?: () => void;
  asChild?: boolean;
}

type RootImplProps = TurnProblemRootProps & { problem: TurnProblem | null };

const RootImpl = forwardRef<HTMLDivElement, RootImplProps>(function TurnProblemRootImpl(
  {
    problem,
    message = "",
    model = null,
    onSwitchModel,
    onNewChat,
    onOpenSettings,
    onRetry,
    asChild,
    children,
    ...props
  },
  ref,
) {
  const titleId = useId();
  const data = useMemo<ProblemData | null>(
    () =>
      problem
        ? {
            problem,
            message,
            model,
            titleId,
            actions: {
              ...(onSwitchModel ? { onSwitchModel } : {}),
              ...(onNewChat ? { onNewChat } : {}),
              ...(onOpenSettings ? { onOpenSettings } : {}),
              ...(onRetry ? { onRetry } : {}),
            },
          }
        : null,
    [problem, message, model, titleId, onSwitchModel, onNewChat, onOpenSettings, onRetry],
  );
  if (!data || !problem) return null;
  const Component = asChild ? Slot : "div";
  return (
    <ProblemContext.Provider value={data}>
      <Component
        role="group"
        aria-labelledby={titleId}
        data-nacre-turn-problem=""
        data-kind={problem.kind}
        data-next={problem.next.type}
        {...props}
        ref={ref}
      >
        {children ?? (
          <>
            <TurnProblemTitle />
            <TurnProblemDescription />
            <TurnProblemCounts />
            <TurnProblemDetails />
            <TurnProblemAction />
            <TurnProblemSendAgain />
          </>
        )}
      </Component>
    </ProblemContext.Provider>
  );
});

const ConnectedRoot = forwardRef<HTMLDivElement, TurnProblemRootProps>(function TurnProblemConnectedRoot(props, ref) {
  const conversation = useConversation();
  const { host } = conversation;
  const problemSeq = conversation.problem?.seq;
  const hostSwitch = host.onSwitchModel;
  // The host gets the person's message's seq too, to answer it again on the new model rather than repeat it.
  const switchWithSeq = useCallback<NonNullable<ConversationHostActions["onSwitchModel"]>>(
    (model, details) => hostSwitch?.(model, { ...details, ...(problemSeq !== undefined ? { seq: problemSeq } : {}) }),
    [hostSwitch, problemSeq],
  );
  const own = {
    problem: conversation.problem?.problem ?? null,
    message: conversation.problem?.message ?? "",
    model: conversation.model?.displayName ?? null,
    onRetry: conversation.retry,
    ...(host.onSwitchModel ? { onSwitchModel: switchWithSeq } : {}),
    ...(host.onNewChat ? { onNewChat: host.onNewChat } : {}),
    ...(host.onOpenSettings ? { onOpenSettings: host.onOpenSettings } : {}),
  };
  return <RootImpl {...preferPassed(props, own)} ref={ref} />;
});

/**
 * A card for a turn that could not be answered: a title, a sentence, the provider's own words behind a
 * disclosure, and exactly one next step. `data-nacre-turn-problem`, `data-kind`, `data-next`; `role="group"`
 * named by its title.
 */
export const TurnProblemRoot = forwardRef<HTMLDivElement, TurnProblemRootProps>(function TurnProblemRoot(props, ref) {
  const inConversation = useInConversation();
  if (inConversation) return <ConnectedRoot {...props} ref={ref} />;
  return <RootImpl {...props} problem={props.problem ?? null} ref={ref} />;
});
TurnProblemRoot.displayName = "TurnProblem.Root";

export interface TurnProblemTitleProps extends ComponentPropsWithoutRef<"p"> {
  asChild?: boolean;
}

/** The card's title (names the card). */
export const TurnProblemTitle = forwardRef<HTMLParagraphElement, TurnProblemTitleProps>(function TurnProblemTitle(
  { asChild, children, ...props },
  ref,
) {
  const data = useProblem("Title");
  const messages = useNacreMessages();
  const Component = asChild ? Slot : "p";
  return (
    <Component id={data.titleId} data-nacre-turn-problem-title="" {...props} ref={ref}>
      {children ?? messages.problemTitle(data.problem)}
    </Component>
  );
});
TurnProblemTitle.displayName = "TurnProblem.Title";

export interface TurnProblemDescriptionProps extends ComponentPropsWithoutRef<"p"> {
  asChild?: boolean;
}

/** One sentence on what happened. */
export const TurnProblemDescription = forwardRef<HTMLParagraphElement, TurnProblemDescriptionProps>(
  function TurnProblemDescription({ asChild, children, ...props }, ref) {
    const data = useProblem("Description");
    const messages = useNacreMessages();
    const Component = asChild ? Slot : "p";
    return (
      <Component data-nacre-turn-problem-description="" {...props} ref={ref}>
        {children ?? messages.problemDescription(data.problem, { model: data.model })}
      </Component>
    );
  },
);
TurnProblemDescription.displayName = "TurnProblem.Description";

export interface TurnProblemCountsProps extends ComponentPropsWithoutRef<"p"> {
  asChild?: boolean;
}

/** Counts that disagree by more than this share are worth saying. */
const countsDisagreeBy = 0.1;

/**
 * What the provider counted against what the estimate said, for a too-long refusal whose count is known and
 * disagrees with the estimate (by more than a tenth). Renders nothing otherwise.
 * `data-nacre-turn-problem-counts`, `data-counted`, `data-estimated`.
 */
export const TurnProblemCounts = forwardRef<HTMLParagraphElement, TurnProblemCountsProps>(function TurnProblemCounts(
  { asChild, children, ...props },
  ref,
) {
  const { problem } = useProblem("Counts");
  const messages = useNacreMessages();
  if (problem.kind !== "too-long") return null;
  const { countedTokens: counted, estimatedTokens: estimated } = problem;
  if (counted === undefined || estimated === undefined) return null;
  if (Math.abs(counted - estimated) <= countsDisagreeBy * Math.max(counted, estimated)) return null;
  const Component = asChild ? Slot : "p";
  return (
    <Component data-nacre-turn-problem-counts="" data-counted={counted} data-estimated={estimated} {...props} ref={ref}>
      {children ?? messages.problemCounts({ counted, estimated })}
    </Component>
  );
});
TurnProblemCounts.displayName = "TurnProblem.Counts";

export interface TurnProblemDetailsProps extends Omit<Collapsible.CollapsibleProps, "disabled"> {}

/**
 * The provider's own words behind a disclosure (Radix Collapsible: `open`/`defaultOpen`/`onOpenChange`).
 * Renders nothing when the provider said nothing.
 */
export const TurnProblemDetails = forwardRef<HTMLDivElement, TurnProblemDetailsProps>(function TurnProblemDetails(
  { children, ...props },
  ref,
) {
  const data = useProblem("Details");
  const messages = useNacreMessages();
  if (!data.problem.providerMessage) return null;
  return (
    <Collapsible.Root data-nacre-turn-problem-details="" {...props} ref={ref}>
      {children ?? (
        <>
          <Collapsible.Trigger data-nacre-turn-problem-details-trigger="">
            {messages.problemProviderMessage}
          </Collapsible.Trigger>
          <Collapsible.Content data-nacre-turn-problem-details-content="">
            <div data-nacre-provider-message="" dir="auto">
              <PlainText text={data.problem.providerMessage} />
            </div>
          </Collapsible.Content>
        </>
      )}
    </Collapsible.Root>
  );
});
TurnProblemDetails.displayName = "TurnProblem.Details";

export interface TurnProblemActionProps extends ComponentPropsWithoutRef<"button"> {
  asChild?: boolean;
}

function secondsOf(next: NextStep): number {
  return next.type === "retry-after" ? Math.max(0, Math.ceil(next.seconds)) : 0;
}

/**
 * The one next step, as a button: switch to a model that reads more, start a new chat with the message in
 * its box, try again (after the wait the provider asked for), or open settings. Disabled when the host gave
 * no handler for it. `data-next` names the step.
 */
export const TurnProblemAction = forwardRef<HTMLButtonElement, TurnProblemActionProps>(function TurnProblemAction(
  { asChild, children, onClick, disabled, ...props },
  ref,
) {
  const data = useProblem("Action");
  const messages = useNacreMessages();
  const next = data.problem.next;
  const [secondsLeft, setSecondsLeft] = useState(() => secondsOf(next));
  useEffect(() => {
    const total = secondsOf(next);
    setSecondsLeft(total);
    if (total === 0) return;
    const started = Date.now();
    const timer = setInterval(() => {
      const left = Math.max(0, total - Math.floor((Date.now() - started) / 1000));
      setSecondsLeft(left);
      if (left === 0) clearInterval(timer);
    }, 1000);
    return () => clearInterval(timer);
  }, [next]);

  const { actions } = data;
  const run = (): (() => void) | undefined => {
    switch (next.type) {
      case "switch-model": {
        const handler = actions.onSwitchModel;
        const model: ModelInfo = next.model;
        return handler ? () => handler(model, { message: data.message, problem: data.problem }) : undefined;
      }
      case "new-chat": {
        const handler = actions.onNewChat;
        const message = next.message || data.message;
        return handler ? () => handler(message) : undefined;
      }
      case "retry":
      case "retry-after":
        return actions.onRetry;
      case "open-settings": {
        const handler = actions.onOpenSettings;
        const section = next.section;
        return handler ? () => handler(section) : undefined;
      }
      default:
        return next satisfies never;
    }
  };
  const handler = run();
  const waiting = next.type === "retry-after" && secondsLeft > 0;
  const Component = asChild ? Slot : "button";
  return (
    <Component
      type="button"
      data-nacre-turn-problem-action=""
      data-next={next.type}
      {...(waiting ? { "data-waiting": "" } : {})}
      disabled={disabled ?? (!handler || waiting)}
      {...props}
      onClick={composeEventHandlers(onClick, () => handler?.())}
      ref={ref}
    >
      {children ?? messages.nextStepLabel(next, { secondsLeft })}
    </Component>
  );
});
TurnProblemAction.displayName = "TurnProblem.Action";

export interface TurnProblemSendAgainProps extends ComponentPropsWithoutRef<"button"> {
  asChild?: boolean;
}

/**
 * "Send again", beside a too-long card's next step: the person's message goes again as it is (after a fold,
 * or once the host changed the model). Renders only for too-long problems with a retry handler (in a
 * conversation, the conversation's). `data-nacre-turn-problem-send-again`.
 */
export const TurnProblemSendAgain = forwardRef<HTMLButtonElement, TurnProblemSendAgainProps>(
  function TurnProblemSendAgain({ asChild, children, onClick, ...props }, ref) {
    const data = useProblem("SendAgain");
    const messages = useNacreMessages();
    const retry = data.actions.onRetry;
    if (data.problem.kind !== "too-long" || !retry) return null;
    const Component = asChild ? Slot : "button";
    return (
      <Component
        type="button"
        data-nacre-turn-problem-send-again=""
        {...props}
        onClick={composeEventHandlers(onClick, () => retry())}
        ref={ref}
      >
        {children ?? messages.problemSendAgain}
      </Component>
    );
  },
);
TurnProblemSendAgain.displayName = "TurnProblem.SendAgain";
