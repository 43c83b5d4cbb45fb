/**
 * The variables LanceDB's native module reads from the process environment when it loads: the
 * one place in functions/ that writes `process.env`, since the engine (Rust) can only see them
 * there. `loadLance` sets them, then imports the module: they must be in place before it loads.
 */
type LanceModule = typeof import('@lancedb/lancedb');

/**
 * lancedb#3568 (https://github.com/lancedb/lancedb/issues/3568): building a full-text index hangs
 * on a machine with 2 CPUs or fewer unless `LANCE_CPU_THREADS` is set (Lambda below 3,538 MB has
 * at most 2 vCPUs; this machine has 2). `test/handlers/search-engine.test.ts` builds one here.
 */
export const LANCE_CPU_THREADS = 2;

let loaded: Promise<LanceModule> | undefined;

export function loadLance(): Promise<LanceModule> {
  if (!loaded) {
    process.env.LANCE_CPU_THREADS ??= String(LANCE_CPU_THREADS);
    // The engine logs deprecation notices at WARN on stderr (the `_score` column's projection); errors only.
    process.env.LANCEDB_LOG ??= 'error';
    loaded = import('@lancedb/lancedb');
  }
  return loaded;
}
