import type { Unsubscribe } from "../engine.js";

/** Events to every subscribed listener; a listener that throws never stops the others or the turn. */
export interface FanOut<E> {
  subscribe(listener: (event: E) => void): Unsubscribe;
  emit(event: E): void;
}

/** Where a listener's error goes. Default: `console.error`, where a developer sees it. */
export type ListenerErrorHandler = (error: unknown) => void;

export function createFanOut<E>(onListenerError: ListenerErrorHandler = console.error): FanOut<E> {
  const listeners = new Set<(event: E) => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    emit(event) {
      // A copy: a listener may unsubscribe (itself or another) while the event goes out.
      for (const listener of [...listeners]) {
        try {
          listener(event);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
  };
}
