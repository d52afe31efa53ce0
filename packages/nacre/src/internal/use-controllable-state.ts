import { useCallback, useRef, useState } from "react";

/**
 * The controlled/uncontrolled triad (`value`/`defaultValue`/`onValueChange`): controlled when `prop` is
 * defined, else the component keeps the value; `onChange` is called either way.
 */
export function useControllableState<T>({
  prop,
  defaultProp,
  onChange,
}: {
  prop: T | undefined;
  defaultProp: T;
  onChange: ((value: T) => void) | undefined;
}): [T, (next: T | ((previous: T) => T)) => void] {
  const [own, setOwn] = useState(defaultProp);
  const controlled = prop !== undefined;
  const value = controlled ? prop : own;
  const latest = useRef({ value, controlled, onChange });
  latest.current = { value, controlled, onChange };
  const setValue = useCallback((next: T | ((previous: T) => T)) => {
    const { value: current, controlled: isControlled, onChange: notify } = latest.current;
    const resolved = typeof next === "function" ? (next as (previous: T) => T)(current) : next;
    if (Object.is(resolved, current)) return;
    if (!isControlled) setOwn(resolved);
    latest.current.value = resolved;
    notify?.(resolved);
  }, []);
  return [value, setValue];
}
