/**
 * KMS returns an ECDSA signature DER-encoded (`SEQUENCE { INTEGER r, INTEGER s }`, RFC 3279); JWS
 * wants the two integers as fixed-width big-endian octets side by side (RFC 7518 §3.4). Each
 * INTEGER may carry a leading zero (when its top bit is set) or be shorter than the curve's size.
 *
 * @param size - octets per integer: 32 for P-256.
 * @throws TypeError for anything that is not such a DER signature.
 */
export function derToJoseSignature(der: Uint8Array, size = 32): Uint8Array {
  const bytes = Buffer.from(der);
  let at = 0;
  const expect = (condition: boolean) => {
    if (!condition) throw new TypeError('not a DER-encoded ECDSA signature');
  };
  expect(bytes[at++] === 0x30);
  let length = bytes[at++]!;
  // P-256's sequence is under 128 octets; P-521's needs the long form (0x81 nn).
  if (length === 0x81) length = bytes[at++]!;
  expect(length === bytes.length - at);
  const out = Buffer.alloc(size * 2);
  for (const offset of [0, size]) {
    expect(bytes[at++] === 0x02);
    const intLength = bytes[at++]!;
    let value = bytes.subarray(at, at + intLength);
    at += intLength;
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    expect(value.length > 0 && value.length <= size);
    value.copy(out, offset + size - value.length);
  }
  expect(at === bytes.length);
  return out;
}
