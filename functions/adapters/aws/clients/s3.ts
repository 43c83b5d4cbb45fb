import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { AppError } from '../../../shared/errors.js';
import { clientOptions, oncePerConfig } from '../clients.js';

/**
 * S3's `KeyTooLongError` as the client's own 400: S3 answers it for a key over 1,024 bytes (a
 * store's prefix plus a key near the product's limit), and the local engine for a key segment over
 * its file system's 255 bytes (`local/s3-guard.ts`). Either way the key, not the service, is at fault.
 */
const KEY_TOO_LONG = 'KeyTooLongError';
const keyTooLong = (error: unknown) => error instanceof S3ServiceException && error.name === KEY_TOO_LONG;

/**
 * The S3 client of the objects function. A local endpoint (s3rver) is addressed by path, as it
 * has no per-bucket host names. Checksums only when an operation requires them: s3rver refuses
 * the CRC32 trailers the SDK adds by default, and S3 checks the body's MD5 and signature anyway.
 */
export const s3Client = oncePerConfig((aws) => {
  const options = clientOptions(aws, 's3');
  const client = new S3Client({
    ...options,
    forcePathStyle: 'endpoint' in options,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  client.middlewareStack.add((next) => async (args) => {
    try {
      return await next(args);
    } catch (error) {
      if (!keyTooLong(error)) throw error;
      const message = `the key is too long for the object storage: ${(error as Error).message}`;
      throw new AppError('validation_error', message, undefined, message);
    }
  }, { step: 'initialize', name: 'keyTooLongAsValidationError' });
  return client;
});
