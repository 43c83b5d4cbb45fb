import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * An item's size as DynamoDB bills it ("Item sizes and formats", DynamoDB Developer Guide): each
 * attribute's name in UTF-8 bytes plus its value's size, where a string is its UTF-8 bytes, a
 * binary its bytes, a number about one byte per two significant digits plus one, a boolean or null
 * one byte, and a list or map three bytes plus one a element plus its elements (a map's with their
 * names). A write costs one write unit per started 1,024 bytes of this size; an update is billed
 * on the larger of the item before and after it.
 */
export function itemSize(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name, 'utf8') + valueSize(value), 0);
}

/** Write units of one write of an item this size (or of an update, given the larger of before and after). */
export const writeUnitsOf = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));

export function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.B !== undefined) return value.B.byteLength;
  if (value.N !== undefined) return numberSize(value.N);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s, 'utf8'), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberSize(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueSize(element), 0);
  if (value.M !== undefined) return 3 + Object.keys(value.M).length + itemSize(value.M);
  throw new TypeError(`no size for ${JSON.stringify(value)}`);
}

/** Significant digits (leading and trailing zeros dropped), two a byte, plus one; a negative number one more. */
function numberSize(text: string): number {
  const [mantissa = ''] = text.replace(/^[-+]/, '').toLowerCase().split('e');
  const digits = mantissa.replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  if (digits === '') return 1;
  return 1 + Math.ceil(digits.length / 2) + (text.startsWith('-') ? 1 : 0);
}
