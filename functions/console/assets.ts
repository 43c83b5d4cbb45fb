/**
 * The console's built files as the system function serves them: the HTML shell (never cached, so
 * a new deployment is picked up at once) and the hashed assets it names (cached for a year).
 * Nothing here builds anything: `console/build.ts` does, at synth time for the deployed function
 * and on first request for the local stack.
 */
export interface ConsoleAsset {
  contentType: string;
  body: string;
}

export interface ConsoleFiles {
  html: string;
  /** By file name under `/console/`, e.g. `app.3FJ2K6QX.js`. */
  assets: Record<string, ConsoleAsset>;
}

/** The file the bundling writes beside the system function's code, holding every console file. */
export const CONSOLE_FILES_NAME = 'console-files.json';

/** The file beside the system function's code holding the API reference page's files (console/api-reference.ts). */
export const API_REFERENCE_FILES_NAME = 'api-reference-files.json';
