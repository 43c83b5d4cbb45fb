/** `items` in consecutive runs of at most `size`: a batch API's most entries a call (DynamoDB's 25, SQS's 10). */
export const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
