import type { ModelInfo, TurnProblem as Problem } from "@conch/engine-client";
import { TurnProblem } from "@conch/nacre";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, fn, userEvent, within } from "storybook/test";

const mockHuge: ModelInfo = {
  id: "mock-huge",
  displayName: "Mock Huge",
  context: 1_000_000,
  ready: true,
  local: false,
};

const meta = {
  title: "Nacre/TurnProblem",
  component: TurnProblem.Root,
  args: {
    message: "Here is the whole build log, what failed?",
    model: "Mock Large",
    onSwitchModel: fn(),
    onNewChat: fn(),
    onOpenSettings: fn(),
    onRetry: fn(),
  },
} satisfies Meta<typeof TurnProblem.Root>;
export default meta;
type Story = StoryObj<typeof meta>;

function problemStory(problem: Problem, label: string): Story {
  return {
    args: { problem },
    play: async ({ canvasElement }) => {
      const canvas = within(canvasElement);
      const card = canvas.getByRole("group", { name: problem.title });
      await expect(card).toHaveAttribute("data-kind", problem.kind);
      const steps = canvasElement.querySelectorAll("[data-nacre-turn-problem-action]");
      await expect(steps).toHaveLength(1);
      await expect(steps[0]).toHaveTextContent(label);
    },
  };
}

export const TooLongSwitchModel: Story = {
  args: {
    problem: {
      kind: "too-long",
      title: "This chat is too long for the model",
      providerMessage:
        "This model's maximum context length is 32000 tokens. However, your messages resulted in 33377 tokens.",
      window: 32_000,
      next: { type: "switch-model", model: mockHuge, readsTimes: 31 },
    },
  },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await userEvent.click(canvas.getByRole("button", { name: "Switch to Mock Huge, which reads 31× more" }));
    await expect(args.onSwitchModel).toHaveBeenCalledWith(mockHuge, {
      message: "Here is the whole build log, what failed?",
      problem: args.problem,
    });
  },
};

/**
 * The provider counted far more than the estimate said: the card sets both side by side, and offers to send
 * the message again beside its one next step.
 */
export const TooLongCountsDisagree: Story = {
  args: {
    problem: {
      kind: "too-long",
      title: "This chat is too long for the model",
      window: 32_000,
      countedTokens: 33_377,
      estimatedTokens: 1_280,
      next: { type: "switch-model", model: mockHuge, readsTimes: 31 },
    },
  },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await expect(
      canvas.getByText("The provider counted 33,377 tokens where the estimate said 1,280."),
    ).toBeInTheDocument();
    await userEvent.click(canvas.getByRole("button", { name: "Send again" }));
    await expect(args.onRetry).toHaveBeenCalledOnce();
    await expect(canvasElement.querySelectorAll("[data-nacre-turn-problem-action]")).toHaveLength(1);
  },
};

export const TooLongNewChat: Story = {
  args: {
    problem: {
      kind: "too-long",
      title: "This chat is too long for the model",
      window: 32_000,
      next: { type: "new-chat", message: "Here is the whole build log, what failed?" },
    },
  },
  play: async ({ canvasElement, args }) => {
    const button = within(canvasElement).getByRole("button", { name: "Start a new chat with this message" });
    button.focus();
    await userEvent.keyboard("{Enter}");
    await expect(args.onNewChat).toHaveBeenCalledWith("Here is the whole build log, what failed?");
  },
};

export const ProviderWordsOpen: Story = {
  args: {
    problem: {
      kind: "provider-error",
      title: "The provider returned an error",
      status: 500,
      providerMessage: '{"error":{"message":"<b>Internal</b> server error","type":"server_error"}}',
      next: { type: "retry" },
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const disclosure = canvas.getByRole("button", { name: "What the provider said" });
    await userEvent.click(disclosure);
    await expect(disclosure).toHaveAttribute("aria-expanded", "true");
    await expect(canvas.getByText(/<b>Internal<\/b> server error/)).toBeVisible();
    await expect(canvasElement.querySelector("b")).toBeNull();
  },
};

export const Auth = problemStory(
  {
    kind: "auth",
    title: "The provider did not accept the key",
    status: 401,
    next: { type: "open-settings", section: "provider" },
  },
  "Check the provider settings",
);
export const RateLimited = problemStory(
  {
    kind: "rate-limited",
    title: "The provider asked to slow down",
    status: 429,
    next: { type: "retry-after", seconds: 30 },
  },
  "Try again in 30 s",
);
export const Quota = problemStory(
  {
    kind: "quota",
    title: "The provider's quota or credit is used up",
    next: { type: "open-settings", section: "billing" },
  },
  "Open billing",
);
export const ModelUnavailable = problemStory(
  { kind: "model-unavailable", title: "The model is not available", next: { type: "switch-model", model: mockHuge } },
  "Switch to Mock Huge",
);
export const Offline = problemStory(
  { kind: "offline", title: "The provider could not be reached", next: { type: "retry" } },
  "Try again",
);
export const Refused = problemStory(
  { kind: "refused", title: "The model declined to answer", next: { type: "new-chat", message: "Start over" } },
  "Start a new chat with this message",
);
export const ProviderError = problemStory(
  { kind: "provider-error", title: "The provider returned an error", status: 502, next: { type: "retry" } },
  "Try again",
);

export const NoHandlerFromTheHost: Story = {
  args: {
    onNewChat: undefined,
    problem: { kind: "refused", title: "The model declined to answer", next: { type: "new-chat", message: "x" } },
  },
  play: async ({ canvasElement }) => {
    await expect(
      within(canvasElement).getByRole("button", { name: "Start a new chat with this message" }),
    ).toBeDisabled();
  },
};

export const Dark: Story = {
  args: TooLongSwitchModel.args,
  render: (args) => (
    <div data-nacre-theme="dark" style={{ padding: 16 }}>
      <TurnProblem.Root {...args} />
    </div>
  ),
};
