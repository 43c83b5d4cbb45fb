#!/usr/bin/env node
// Runs the CLI from its TypeScript source with tsx (the repository's own loader), so `npx flowgate`
// works in a checkout without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
