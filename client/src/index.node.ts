// The Node entry: everything the browser entry has, and a file's path as an upload body.
import { open } from 'node:fs/promises';
import { setFileOpener } from './upload-source.js';

setFileOpener(async (path) => {
  const file = await open(path, 'r');
  const { size } = await file.stat();
  return {
    size,
    async read(start, end) {
      const bytes = new Uint8Array(end - start);
      for (let at = 0; at < bytes.byteLength;) {
        const { bytesRead } = await file.read(bytes, at, bytes.byteLength - at, start + at);
        if (bytesRead === 0) throw new Error(`objects.upload: ${path} is shorter than the ${size} bytes it had when opened`);
        at += bytesRead;
      }
      return bytes;
    },
    close: () => file.close(),
  };
});

export * from './index.js';
