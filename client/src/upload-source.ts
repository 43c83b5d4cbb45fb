/**
 * What an upload reads its bytes from: a size and the bytes of a range. A part being sent holds its
 * bytes until its PUT succeeds, so a failed part is sent again without reading anything twice.
 */
export interface UploadSource {
  readonly size: number;
  /** The bytes `[start, end)`. Sequential sources take ranges in order only. */
  read(start: number, end: number): Promise<Uint8Array>;
  close?(): Promise<void>;
}

/** What `objects.upload` takes. A string is a file's path, read in Node only (the `node` export condition). */
export type UploadBody = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | string;

/** Opens a path as a source; set by the Node entry, absent in browsers. */
let openFile: ((path: string) => Promise<UploadSource>) | undefined;

/** For the Node entry: how a path is read. */
export function setFileOpener(opener: (path: string) => Promise<UploadSource>): void {
  openFile = opener;
}

export async function sourceOf(body: UploadBody, options: { size?: number } = {}): Promise<UploadSource> {
  if (typeof body === 'string') {
    if (!openFile) throw new TypeError('objects.upload: a path is read in Node only; in a browser pass a Blob (a File), a Uint8Array or a ReadableStream');
    return openFile(body);
  }
  if (body instanceof ArrayBuffer) body = new Uint8Array(body);
  if (body instanceof Uint8Array) {
    const bytes = body;
    return { size: bytes.byteLength, read: async (start, end) => bytes.subarray(start, end) };
  }
  if (typeof Blob !== 'undefined' && body instanceof Blob) {
    const blob = body;
    return { size: blob.size, read: async (start, end) => new Uint8Array(await blob.slice(start, end).arrayBuffer()) };
  }
  if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) {
    // Without a size the stream is read whole first: the upload declares its size before a byte is sent.
    if (options.size === undefined) return sourceOf(await readAll(body));
    return sequentialSource(body, options.size);
  }
  throw new TypeError('objects.upload: the body must be a Uint8Array, an ArrayBuffer, a Blob, a ReadableStream or (in Node) a path');
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    chunks.push(next.value);
    size += next.value.byteLength;
  }
  return concat(chunks, size);
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.byteLength === size) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** A stream of known size, read range after range; reads are queued so they happen in the order asked. */
function sequentialSource(stream: ReadableStream<Uint8Array>, size: number): UploadSource {
  const reader = stream.getReader();
  let position = 0;
  let pending: Uint8Array | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const readRange = async (start: number, end: number): Promise<Uint8Array> => {
    if (start !== position) throw new Error(`objects.upload: a stream is read in order (asked for ${start}, at ${position})`);
    const chunks: Uint8Array[] = [];
    let have = 0;
    while (have < end - start) {
      let chunk = pending;
      pending = undefined;
      if (!chunk) {
        const next = await reader.read();
        if (next.done) throw new Error(`objects.upload: the stream ended at ${position + have} bytes, before the ${size} declared`);
        chunk = next.value;
      }
      const want = end - start - have;
      if (chunk.byteLength > want) {
        pending = chunk.subarray(want);
        chunk = chunk.subarray(0, want);
      }
      chunks.push(chunk);
      have += chunk.byteLength;
    }
    position = end;
    return concat(chunks, have);
  };
  return {
    size,
    read(start, end) {
      const result = queue.then(() => readRange(start, end));
      queue = result.catch(() => undefined);
      return result;
    },
    close: async () => reader.cancel().catch(() => undefined),
  };
}
