"use client";
import type { ContextUsage, TurnProblem } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import { type ComponentPropsWithoutRef, type CSSProperties, createContext, forwardRef, useContext } from "react";
import {
  type ContextUsageState,
  contextLevel,
  useContextUsage,
  useConversation,
  useInConversation,
  useNacreMessages,
} from "./conversation.js";
import { NacreOutsideProviderError } from "./errors.js";
import { preferPassed } from "./internal/conversation-defaults.js";

interface MeterData {
  readonly usage: ContextUsageState;
  readonly percent: number;
  readonly text: string;
}

const MeterContext = createContext<MeterData | null>(null);

function useMeter(part: string): MeterData {
  const data = useContext(MeterContext);
  if (!data) throw new NacreOutsideProviderError(`<ContextMeter.${part}>`, "<ContextMeter.Root>");
  return data;
}

export interface ContextMeterRootProps extends ComponentPropsWithoutRef<"div"> {
  /** The usage to show. Default: `useContextUsage()` of the conversation. Nothing renders while it is null. */
  usage?: ContextUsage | null;
  /** The model's name for the text alternative. Default: the conversation's model. */
  model?: string | null;
  /**
   * Whose count `usage` is: `provider` once the provider counted the request (a too-long refusal said how
   * many tokens it read), else `estimate`. Default: the conversation's (the provider's count while its
   * too-long card stands), else `estimate`. Renders as `data-source`.
   */
  source?: "estimate" | "provider";
  asChild?: boolean;
}

const RootImpl = forwardRef<HTMLDivElement, ContextMeterRootProps>(function ContextMeterRootImpl(
  { usage, model = null, source = "estimate", asChild, children, style, ...props },
  ref,
) {
  const messages = useNacreMessages();
  if (!usage) return null;
  const percent = Math.round(Math.max(0, usage.share) * 100);
  const state: ContextUsageState = { ...usage, level: contextLevel(usage.share) };
  const text = messages.contextMeterText({
    percent,
    usedTokens: usage.usedTokens,
    window: usage.window,
    model,
    source,
  });
  const Component = asChild ? Slot : "div";
  return (
    <MeterContext.Provider value={{ usage: state, percent, text }}>
      <Component
        role="meter"
        aria-label={messages.contextMeterLabel}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.min(100, percent)}
        aria-valuetext={text}
        data-nacre-context-meter=""
        data-level={state.level}
        data-source={source}
        style={{ "--nacre-context-share": String(Math.min(1, Math.max(0, usage.share))), ...style } as CSSProperties}
        {...props}
        ref={ref}
      >
        {children ?? (
          <>
            <ContextMeterIndicator />
            <ContextMeterLabel />
          </>
        )}
      </Component>
    </MeterContext.Provider>
  );
});

/** The request as the provider counted it, while a too-long refusal that said so stands; else null. */
function providerCount(estimate: ContextUsage | null, problem: TurnProblem | null): ContextUsage | null {
  if (problem?.kind !== "too-long" || problem.countedTokens === undefined) return null;
  const window = problem.window ?? estimate?.window;
  if (!window) return null;
  const share = problem.countedTokens / window;
  return {
    usedTokens: problem.countedTokens,
    window,
    budget: estimate?.budget ?? window,
    factor: estimate?.factor ?? 1,
    share,
  };
}

const ConnectedRoot = forwardRef<HTMLDivElement, ContextMeterRootProps>(function ContextMeterConnectedRoot(props, ref) {
  const estimate = useContextUsage();
  const { model, problem } = useConversation();
  const counted = providerCount(estimate, problem?.problem ?? null);
  const own = {
    usage: counted ?? estimate,
    model: model?.displayName ?? null,
    source: counted ? ("provider" as const) : ("estimate" as const),
  };
  return <RootImpl {...preferPassed(props, own)} ref={ref} />;
});

/**
 * How much of the model's window the next request will use, as `role="meter"` with a text alternative.
 * `data-nacre-context-meter`, `data-level="low|medium|high|full"`, and `--nacre-context-share` (0–1) for the bar.
 */
export const ContextMeterRoot = forwardRef<HTMLDivElement, ContextMeterRootProps>(
  function ContextMeterRoot(props, ref) {
    const inConversation = useInConversation();
    if (inConversation) return <ConnectedRoot {...props} ref={ref} />;
    return <RootImpl {...props} ref={ref} />;
  },
);
ContextMeterRoot.displayName = "ContextMeter.Root";

export interface ContextMeterIndicatorProps extends ComponentPropsWithoutRef<"div"> {
  asChild?: boolean;
}

/** The bar; size it with `--nacre-context-share`. Hidden from assistive technology (the root speaks). */
export const ContextMeterIndicator = forwardRef<HTMLDivElement, ContextMeterIndicatorProps>(
  function ContextMeterIndicator({ asChild, ...props }, ref) {
    const data = useMeter("Indicator");
    const Component = asChild ? Slot : "div";
    return (
      <Component
        aria-hidden="true"
        data-nacre-context-meter-indicator=""
        data-level={data.usage.level}
        {...props}
        ref={ref}
      />
    );
  },
);
ContextMeterIndicator.displayName = "ContextMeter.Indicator";

export interface ContextMeterLabelProps extends ComponentPropsWithoutRef<"span"> {
  asChild?: boolean;
}

/** The text alternative, shown: "38% of Mock Large's window (12,160 of 32,000 tokens)". */
export const ContextMeterLabel = forwardRef<HTMLSpanElement, ContextMeterLabelProps>(function ContextMeterLabel(
  { asChild, children, ...props },
  ref,
) {
  const data = useMeter("Label");
  const Component = asChild ? Slot : "span";
  return (
    <Component data-nacre-context-meter-label="" {...props} ref={ref}>
      {children ?? data.text}
    </Component>
  );
});
ContextMeterLabel.displayName = "ContextMeter.Label";
