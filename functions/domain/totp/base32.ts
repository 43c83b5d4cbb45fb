/** RFC 4648 section 6 alphabet. */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Unpadded upper-case RFC 4648 base32. */
export function encodeBase32(bytes: Uint8Array): string {
  let text = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xfff; // never more than 12 live bits
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      text += ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) text += ALPHABET[(buffer << (5 - bits)) & 31];
  return text;
}

/**
 * Decodes unpadded upper-case base32; undefined for a character outside the alphabet or a length
 * no byte string encodes to (1, 3 or 6 characters past a multiple of 8). Leftover low bits are
 * dropped, as authenticator apps do.
 */
export function decodeBase32(text: string): Uint8Array | undefined {
  if ([1, 3, 6].includes(text.length % 8)) return undefined;
  const bytes = new Uint8Array(Math.floor((text.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const char of text) {
    const value = ALPHABET.indexOf(char);
    if (value < 0) return undefined;
    buffer = ((buffer << 5) | value) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes[index++] = (buffer >>> bits) & 0xff;
    }
  }
  return bytes;
}
