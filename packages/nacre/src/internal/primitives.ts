import type * as React from "react";

/** Calls the consumer's handler first, then ours unless the consumer prevented the default. */
export function composeEventHandlers<E extends { defaultPrevented: boolean }>(
  theirs: ((event: E) => void) | undefined,
  ours: (event: E) => void,
): (event: E) => void {
  return (event) => {
    theirs?.(event);
    if (!event.defaultPrevented) ours(event);
  };
}

/** Sets one ref or several. */
export function composeRefs<T>(...refs: Array<React.Ref<T> | undefined>): React.RefCallback<T> {
  return (node) => {
    const cleanups: Array<() => void> = [];
    for (const ref of refs) {
      if (typeof ref === "function") {
        const cleanup = ref(node);
        if (typeof cleanup === "function") cleanups.push(cleanup);
      } else if (ref) {
        (ref as React.RefObject<T | null>).current = node;
      }
    }
    if (cleanups.length > 0)
      return () => {
        for (const cleanup of cleanups) cleanup();
      };
    return undefined;
  };
}
