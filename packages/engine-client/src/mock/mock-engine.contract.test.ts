import { engineContract, mockEngineUnderTest } from "@conch/fake-provider";

engineContract("mock engine", mockEngineUnderTest);
