/** The signature services the API accepts, fixed by `console/build.ts` from the domain's list. */
declare const SIGNATURE_SERVICES: readonly string[];
declare module '*.css';
