// `npm run release:baseline`: when a release is cut, writes what the next release is compared with:
// releases/<version>/template.json (the stack as `cdk synth` builds it with cdk.json's context)
// and releases/<version>/openapi.json (the document `GET /openapi.json` serves), and points
// releases/LATEST at it. test/upgrades/ then fails on a stateful replacement or an API break
// that CHANGELOG.md's Unreleased section does not mark **BREAKING**.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildOpenApiDocument } from '../functions/openapi/document.js';
import { synth } from '../test/support/synth.js';

const ROOT = resolve(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
const folder = resolve(ROOT, 'releases', version);
mkdirSync(folder, { recursive: true });
writeFileSync(resolve(folder, 'template.json'), `${JSON.stringify(synth().template.toJSON(), null, 1)}\n`);
writeFileSync(resolve(folder, 'openapi.json'), `${JSON.stringify(buildOpenApiDocument(), null, 1)}\n`);
writeFileSync(resolve(ROOT, 'releases/LATEST'), `${version}\n`);
console.log(`releases/${version}: template.json and openapi.json written; releases/LATEST is ${version}`);
