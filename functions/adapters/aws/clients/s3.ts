import { S3Client } from '@aws-sdk/client-s3';
import { clientOptions, oncePerConfig } from '../clients.js';

/**
 * The S3 client of the objects function. A local endpoint (s3rver) is addressed by path, as it
 * has no per-bucket host names. Checksums only when an operation requires them: s3rver refuses
 * the CRC32 trailers the SDK adds by default, and S3 checks the body's MD5 and signature anyway.
 */
export const s3Client = oncePerConfig((aws) => {
  const options = clientOptions(aws, 's3');
  return new S3Client({
    ...options,
    forcePathStyle: 'endpoint' in options,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
});
