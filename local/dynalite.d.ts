declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    /** A LevelDB directory to keep the tables in; in memory when unset. */
    path?: string;
    /** fsync every write before answering (`patches/dynalite+4.0.0.patch`). */
    sync?: boolean;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }
  export default function dynalite(options?: DynaliteOptions): Server;
}
