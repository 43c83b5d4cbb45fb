import { PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemSize, valueSize, writeUnitsOf } from '../../bench/support/item-size.js';
import { useEngines } from '../support/engines.js';

/** The item size the cost figures are given in (bench/support/item-size.ts), by DynamoDB's rules, and against the embedded engine's units. */
const local = useEngines();
const table = () => local.engines.env.EXECUTIONS_TABLE!;

describe('itemSize(item)', () => {
  it('counts names and strings in UTF-8 bytes, binaries in bytes', () => {
    expect(itemSize({ pk: { S: 'abc' } })).toBe(5);
    expect(itemSize({ é: { S: 'ü' } })).toBe(4);
    expect(itemSize({ data: { B: new Uint8Array(10) } })).toBe(14);
  });

  it('counts a number as one byte per two significant digits, plus one', () => {
    expect(valueSize({ N: '0' })).toBe(1);
    expect(valueSize({ N: '1' })).toBe(2);
    expect(valueSize({ N: '1795817000' })).toBe(5);
    expect(valueSize({ N: '-12' })).toBe(3);
    expect(valueSize({ N: '0.001' })).toBe(2);
  });

  it('counts a list or map as three bytes, one more an element, and its elements', () => {
    expect(valueSize({ M: {} })).toBe(3);
    expect(valueSize({ L: [{ S: 'ab' }, { BOOL: true }] })).toBe(3 + 1 + 2 + 1 + 1);
    expect(valueSize({ M: { a: { S: 'xy' } } })).toBe(3 + 1 + 1 + 2);
  });

  it('bills one write unit up to 1,024 bytes, two from 1,025, as the engine does', async () => {
    const item = (bytes: number): Record<string, AttributeValue> => {
      const base = { pk: { S: `SIZE#${bytes}` }, sk: { S: 'x' }, pad: { S: '' } };
      return { ...base, pad: { S: 'a'.repeat(bytes - itemSize(base)) } };
    };
    for (const bytes of [1024, 1025]) {
      const written = item(bytes);
      expect(itemSize(written)).toBe(bytes);
      const { ConsumedCapacity } = await local.dynamo.send(new PutItemCommand({ TableName: table(), Item: written, ReturnConsumedCapacity: 'TOTAL' }));
      expect(ConsumedCapacity?.CapacityUnits).toBe(writeUnitsOf(bytes));
    }
    expect(writeUnitsOf(1024)).toBe(1);
    expect(writeUnitsOf(1025)).toBe(2);
  });
});
