import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flowFile, listFlowNames } from '../../lib/flow-files.js';
import { startLocalStack } from '../../local/stack.js';
import { call, useLocalStack } from '../support/local-stack.js';

const FLOWS_DIR = resolve(import.meta.dirname, '../../flows');
const fileDefinition = (dir: string, name: string) => JSON.parse(readFileSync(flowFile(dir, name), 'utf8')) as unknown;

describe('GET /flows', () => {
  const stack = useLocalStack();

  it('lists the deployed flows a trigger may run, to a caller with a token or an API key', async () => {
    const token = await stack.token('flows-user');
    const listed = await call(stack, 'GET', '/flows', { token });
    expect(listed.status).toBe(200);
    // Exactly the flows/ folder's definitions, sorted.
    expect(listed.json).toEqual({ data: { flows: listFlowNames(FLOWS_DIR) } });
    const apiKey = (await call(stack, 'POST', '/api-keys', { token })).json.data.api_key as string;
    expect((await call(stack, 'GET', '/flows', { apiKey })).json).toEqual(listed.json);
    // Every flow listed is one a trigger can name.
    for (const flow of listed.json.data.flows) expect((await call(stack, 'POST', '/triggers', { token, body: { flow } })).status).toBe(201);
  });

  it('is 401 without credentials', async () => {
    const denied = await call(stack, 'GET', '/flows');
    expect(denied.status).toBe(401);
    expect(denied.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });
});

describe('GET /flows/{name}', () => {
  const stack = useLocalStack();

  it('answers every listed flow with its definition as its file holds it, placeholders and all, to a token or an API key', async () => {
    const token = await stack.token('flow-reader');
    const apiKey = (await call(stack, 'POST', '/api-keys', { token })).json.data.api_key as string;
    for (const name of listFlowNames(FLOWS_DIR)) {
      const got = await call(stack, 'GET', `/flows/${name}`, { token });
      expect(got.status, name).toBe(200);
      // wait_limit_seconds: WAIT_TIMEOUT_MS's default, these flows having no shorter TimeoutSeconds of their own.
      expect(got.json, name).toEqual({ data: { name, definition: fileDefinition(FLOWS_DIR, name), wait_limit_seconds: 25 } });
      expect((await call(stack, 'GET', `/flows/${name}`, { apiKey })).json, name).toEqual(got.json);
    }
    // A function a flow calls is named as the flow's file names it, not by an ARN.
    const summarize = (await call(stack, 'GET', '/flows/summarize', { token })).json.data.definition;
    expect(summarize.States.Summarize.Parameters.FunctionName).toBe('${Function.summarize}');
  });

  it('is 404 for a well-formed name no deployed flow has', async () => {
    const token = await stack.token('flow-reader');
    for (const name of ['no-such-flow', 'Echo', 'echo-']) {
      const missing = await call(stack, 'GET', `/flows/${name}`, { token });
      expect(missing.status, name).toBe(404);
      expect(missing.json, name).toEqual({ error: 'not_found', message: expect.any(String) });
    }
  });

  it('is 400 for a name no flow could have', async () => {
    const token = await stack.token('flow-reader');
    for (const name of ['echo.asl.json', 'a'.repeat(65), 'echo~1', '%20echo', 'ech%C3%B6']) {
      const bad = await call(stack, 'GET', `/flows/${name}`, { token });
      expect(bad.status, name).toBe(400);
      expect(bad.json.error, name).toBe('validation_error');
      expect(bad.json.message, name).toMatch(/^name: /);
    }
  });

  it('is 401 without credentials, and tells nothing of the flow', async () => {
    const denied = await call(stack, 'GET', '/flows/echo');
    expect(denied.status).toBe(401);
    expect(denied.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });
});

describe('GET /flows/{name} on a local stack', () => {
  it('reads the flow file on each request, as the engine does on each run: an edited flow needs no restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowgate-flows-'));
    copyFileSync(flowFile(FLOWS_DIR, 'echo'), flowFile(dir, 'echo'));
    const stack = await startLocalStack({ port: 0, flowsDir: dir });
    try {
      const token = await stack.token('flow-editor');
      expect((await call(stack, 'GET', '/flows/echo', { token })).json.data.definition).toEqual(fileDefinition(FLOWS_DIR, 'echo'));
      const edited = { Comment: 'Edited while the stack runs', StartAt: 'Done', States: { Done: { Type: 'Succeed' } } };
      writeFileSync(flowFile(dir, 'echo'), JSON.stringify(edited));
      expect((await call(stack, 'GET', '/flows/echo', { token })).json.data.definition).toEqual(edited);
      rmSync(flowFile(dir, 'echo'));
      expect((await call(stack, 'GET', '/flows/echo', { token })).status).toBe(404);
    } finally {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
