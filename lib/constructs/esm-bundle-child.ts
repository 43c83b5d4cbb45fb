/**
 * Runs `bundleEsm` (esm-chunks.ts) for `EsbuildBundling.tryBundle`, which the CDK calls
 * synchronously, while esbuild runs plugins only in its asynchronous API. Input: the options as
 * JSON on stdin; esbuild's warnings and errors go to stderr, and a failed build exits non-zero.
 */
import { readFileSync } from 'node:fs';
import { bundleEsm, type EsmBundleOptions } from './esm-chunks.js';

await bundleEsm(JSON.parse(readFileSync(0, 'utf8')) as EsmBundleOptions);
