/**
 * Flow function `twilio-reply`: the TwiML answer to a Twilio SMS webhook, as the reply the
 * `twilio-sms-reply` flow hands back to the receiver (an API Gateway proxy response, which the
 * receiver sends as it is). Twilio reads `text/xml`; a JSON 200 is an error on its side (12300).
 * https://www.twilio.com/docs/messaging/twiml
 */
interface FlowInput {
  /** The flow's input: Twilio posts a form, whose fields are the event (`Body`, `From`, …). */
  trigger?: { event?: { Body?: unknown } };
}

export interface ProxyResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * XML text content as Twilio's own TwiML builder writes it: `&`, `<`, `>` and CR escaped, and
 * characters XML 1.0 cannot hold at all (other control characters, lone surrogates) left out. A
 * message is the sender's text: anything may be in it.
 */
const escapeXml = (text: string): string =>
  text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
    .replace(/[&<>\r]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' })[c]!);

export function twilioReply(input: FlowInput): ProxyResponse {
  const received = input?.trigger?.event?.Body;
  const text = typeof received === 'string' ? received : '';
  return {
    statusCode: 200,
    headers: { 'content-type': 'text/xml' },
    body: `<?xml version="1.0" encoding="UTF-8"?><Response><Message>${escapeXml(`Got it: ${text}`)}</Message></Response>`,
  };
}

export const handler = async (input: FlowInput): Promise<ProxyResponse> => twilioReply(input);
