/**
 * A request header's value without surrounding spaces; `undefined` when absent or empty. Names
 * are lower case. Own properties only, so a name like `constructor` cannot reach Object.prototype.
 */
export function headerValue(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  if (!Object.hasOwn(headers, name)) return undefined;
  const value: unknown = headers[name];
  const trimmed = typeof value === 'string' ? value.trim() : '';
  return trimmed === '' ? undefined : trimmed;
}
