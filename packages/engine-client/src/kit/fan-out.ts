import type { Unsubscribe } from "../engine.js";
import { defaultErrorHandler, type ErrorHandler } from "../errors.js";

/** Events to every subscribed listener; a listener that throws never stops the others or the turn. */
export interface FanOut<E> {
  subscribe(listener: (event: E) => void): Unsubscribe;
  emit(event: E): void;
}

/** A listener's throw goes to `onError` (`during: "listener"`); default: `defaultErrorHandler`, which logs it. */
export function createFanOut<E>(onError: ErrorHandler = defaultErrorHandler): FanOut<E> {
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
          onError(error, { during: "listener" });
        }
      }
    },
  };
}
