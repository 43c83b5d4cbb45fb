import { afterEach, describe, expect, it, vi } from 'vitest';
import { configureLogging, logFault, logInfo, logWarn } from '../../functions/shared/logger.js';

/** The log lines written while `run` runs, parsed. */
async function linesWritten(run: () => Promise<void>): Promise<{ level: string; message: string; service: string }[]> {
  const written: string[] = [];
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => (written.push(String(chunk)), true)),
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (written.push(String(chunk)), true)),
  ];
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return written.join('').split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
}

afterEach(() => configureLogging({ logLevel: 'INFO' }));

describe('the service logger filters its own lines at the logLevel setting (Lambda\'s level stays at INFO)', () => {
  it('at WARN, an info line is not written and a warning and a fault are, under the service\'s name', async () => {
    configureLogging({ logLevel: 'WARN' });
    const lines = await linesWritten(async () => {
      await logInfo('kv sweep', { bucket: 'b' });
      await logWarn('flow attempt failed', { messageId: 'm' });
      await logFault('request failed', new Error('boom'));
    });
    expect(lines.map((line) => [line.level, line.message])).toEqual([['WARN', 'flow attempt failed'], ['ERROR', 'request failed']]);
    for (const line of lines) expect(line.service).toBe('flowgate');
  });

  it('at INFO, an info line is written', async () => {
    configureLogging({ logLevel: 'INFO' });
    const lines = await linesWritten(() => logInfo('kv sweep', { bucket: 'b' }));
    expect(lines.map((line) => line.message)).toEqual(['kv sweep']);
  });

  it('at SILENT, nothing is written, not even a fault', async () => {
    configureLogging({ logLevel: 'SILENT' });
    const lines = await linesWritten(async () => {
      await logWarn('flow attempt failed', {});
      await logFault('request failed', new Error('boom'));
    });
    expect(lines).toEqual([]);
  });
});
