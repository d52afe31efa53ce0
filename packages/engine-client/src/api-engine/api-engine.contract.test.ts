import { apiEngineUnderTest, engineContract } from "@conch/fake-provider";

engineContract("API engine over the fake provider", (turns) => apiEngineUnderTest(turns));
