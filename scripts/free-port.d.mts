// Types of free-port.mjs.
/** A free TCP port on loopback. */
export function freePort(): Promise<number>;
