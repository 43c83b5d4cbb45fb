import { describe, expect, it } from 'vitest';
import { batchElements, elementContentId, elementDedupKey, elementId, elementType } from '../../functions/domain/webhooks/batch-elements.js';
import { senderRow } from '../../functions/domain/webhooks/senders/catalog.js';

const ruleOf = (id: string) => senderRow(id)!.batch!;

describe('batchElements(rule, body): the events a batching sender\'s POST carries', () => {
  it('sendgrid: the body is the array, each element an event', () => {
    expect(batchElements(ruleOf('sendgrid'), [{ event: 'open' }, { event: 'click' }])).toEqual([{ event: 'open' }, { event: 'click' }]);
  });

  it('okta: the list at data.events', () => {
    expect(batchElements(ruleOf('okta'), { eventType: 'com.okta.event_hook', data: { events: [{ eventType: 'user.session.start' }] } })).toEqual([{ eventType: 'user.session.start' }]);
  });

  it('meta: each change of each entry, with its entry\'s id and time; an entry with messaging[] gives none', () => {
    const body = {
      object: 'page',
      entry: [
        { id: 'P1', time: 1, changes: [{ field: 'feed', value: { a: 1 } }, { field: 'mention', value: {} }], other: 'not copied' },
        { id: 'P2', time: 2, messaging: [{ message: { mid: 'm' } }] },
        { id: 'P3', time: 3, changes: [{ field: 'feed', value: { a: 3 } }] },
      ],
    };
    expect(batchElements(ruleOf('meta'), body)).toEqual([
      { field: 'feed', value: { a: 1 }, entry: { id: 'P1', time: 1 } },
      { field: 'mention', value: {}, entry: { id: 'P1', time: 1 } },
      { field: 'feed', value: { a: 3 }, entry: { id: 'P3', time: 3 } },
    ]);
  });

  it('a body without the list, with something else there, or with an empty list is no batch (one event, as today)', () => {
    expect(batchElements(ruleOf('okta'), { data: {} })).toBeUndefined();
    expect(batchElements(ruleOf('okta'), { data: { events: 'nope' } })).toBeUndefined();
    expect(batchElements(ruleOf('sendgrid'), [])).toBeUndefined();
    expect(batchElements(ruleOf('meta'), { entry: [{ messaging: [] }] })).toBeUndefined();
    expect(batchElements(ruleOf('asana'), 'text')).toBeUndefined();
  });
});

describe('elementType, elementId, elementDedupKey: what an element says of itself', () => {
  it('graph: changeType, else lifecycleEvent; malformed types are absent, never an error', () => {
    expect(elementType(ruleOf('microsoft_graph'), { changeType: 'created' })).toBe('created');
    expect(elementType(ruleOf('microsoft_graph'), { lifecycleEvent: 'reauthorizationRequired' })).toBe('reauthorizationRequired');
    expect(elementType(ruleOf('microsoft_graph'), { changeType: 7 })).toBeUndefined();
    expect(elementType(ruleOf('microsoft_graph'), null)).toBeUndefined();
  });

  it('hubspot: an integer eventId is its decimal text; adyen: pspReference:eventCode, absent when a part is', () => {
    expect(elementId(ruleOf('hubspot'), { eventId: 100 })).toBe('100');
    expect(elementId(ruleOf('hubspot'), { eventId: 1.5 })).toBeUndefined();
    expect(elementId(ruleOf('adyen'), { NotificationRequestItem: { pspReference: 'PSP1', eventCode: 'REFUND' } })).toBe('PSP1:REFUND');
    expect(elementId(ruleOf('adyen'), { NotificationRequestItem: { pspReference: 'PSP1' } })).toBeUndefined();
    expect(elementId(ruleOf('asana'), { action: 'changed' })).toBeUndefined();
  });

  it('a signed id is the dedup key; an unsigned one (okta) or none is the element\'s digest, the same for the same element', () => {
    expect(elementDedupKey(ruleOf('sendgrid'), { sg_event_id: 'abc' })).toBe('id:abc');
    const okta = { uuid: 'u-1', eventType: 'user.session.start' };
    expect(elementDedupKey(ruleOf('okta'), okta)).toBe(`sha256:${elementContentId(okta)}`);
    expect(elementContentId({ a: 1 })).toBe(elementContentId({ a: 1 }));
    expect(elementContentId({ a: 1 })).not.toBe(elementContentId({ a: 2 }));
  });
});
