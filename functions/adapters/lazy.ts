/**
 * Loading on first use: the way to keep a client that not every request needs, and the code
 * behind it, off a function's import path. The value is made once and kept for the life of the
 * execution environment; concurrent first uses share one load; a failed load is forgotten, so the
 * next use tries again.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () =>
    (value ??= load().catch((error: unknown) => {
      value = undefined;
      throw error;
    }));
}

type AsyncMethods<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

/**
 * A port (an interface of async methods) whose implementation is loaded on the first call of any
 * of its methods. `methods` names every method, so that a port which grows one fails to compile here.
 */
export function portOnFirstCall<T extends AsyncMethods<T>>(load: () => Promise<T>, methods: { [K in keyof T]: true }): T {
  return portLoadedAhead(load, methods).port;
}

/**
 * {@link portOnFirstCall}, plus `loadAhead()`, which starts the load without waiting for it: called
 * as a request starts, the module compiles while the request waits on its first network round trip,
 * instead of at init or in the way of the call that needs it. A failed load is retried by the call.
 */
export function portLoadedAhead<T extends AsyncMethods<T>>(load: () => Promise<T>, methods: { [K in keyof T]: true }): { port: T; loadAhead(): void } {
  const target = onFirstUse(load);
  const port = {} as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of Object.keys(methods)) {
    port[name] = async (...args) => {
      const implementation = (await target()) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      return implementation[name]!(...args);
    };
  }
  return {
    port: port as unknown as T,
    loadAhead: () => void target().catch(() => undefined),
  };
}
