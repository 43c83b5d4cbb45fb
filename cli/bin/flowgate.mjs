#!/usr/bin/env node
// The bundle when it has been built (`npm run build -w @flowgate/cli`, which `npm pack` runs), else
// the TypeScript source under tsx, so `npx flowgate` works in a checkout without a build step.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/flowgate.mjs', import.meta.url);
if (existsSync(bundle)) await import(bundle.href);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
