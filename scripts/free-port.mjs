// A free TCP port on loopback, for the servers the tests, the bench and the dev scripts start. Plain JavaScript so
// that the .mjs scripts that run before any install of tsx (ensure-postgres) share it with the TypeScript ones.
import { createServer } from "node:net";

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}
