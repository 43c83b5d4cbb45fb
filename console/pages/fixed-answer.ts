/**
 * A trigger's `acknowledge_response`: the fixed answer the receiver gives instead of its JSON when
 * it answers a delivery itself with a 2xx (accepted, ignored, duplicate), as some senders require
 * (Adyen `[accepted]`, Discord webhook events 204, a Slack slash command an empty 200).
 */
import { checkbox, el, field, textInput } from '../dom.js';

export interface AcknowledgeResponse {
  status_code: number;
  /** Absent only for 204 and 205, which carry no body. */
  content_type?: string;
  body: string;
}

/** As the API allows (`trigger-requests.ts`). */
const MAX_BODY_CHARACTERS = 1000;
/** A body shown in a list is cut here; the form shows it whole. */
const SHOWN_CHARACTERS = 60;

/** The fixed answer in words: "200, text/plain, [accepted]". */
export function fixedAnswerSummary(answer: AcknowledgeResponse): (string | Node)[] {
  const body = answer.body.length > SHOWN_CHARACTERS ? `${answer.body.slice(0, SHOWN_CHARACTERS)}…` : answer.body;
  return [`${answer.status_code}, ${answer.content_type === undefined ? '' : `${answer.content_type}, `}`, answer.body ? el('code', {}, body) : 'no body'];
}

export interface FixedAnswerFields {
  elements: HTMLElement[];
  /** The `acknowledge_response` to send: null while off. Throws an Error in words for settings the API would refuse. */
  body(): AcknowledgeResponse | null;
}

/** The form's "Fixed answer" section: off (null, the default JSON answers) unless `current` has one. */
export function fixedAnswerFields(current: AcknowledgeResponse | null | undefined): FixedAnswerFields {
  const [row, on] = checkbox('fixed-answer', 'Send a fixed answer', Boolean(current));
  on.setAttribute('aria-describedby', 'fixed-answer-hint');
  const hint = el('p', { class: 'hint', id: 'fixed-answer-hint' },
    'Instead of the JSON answer when a delivery is accepted (acknowledge mode), ignored by the event filter or a duplicate. A wait-mode flow answers with its own result.');
  const status = el('input', { type: 'number', min: '200', max: '299', step: '1', required: true, inputmode: 'numeric' });
  status.value = String(current?.status_code ?? 200);
  const contentType = textInput(current?.content_type ?? 'text/plain', { required: true });
  const body = el('textarea', { rows: '3', maxlength: String(MAX_BODY_CHARACTERS) });
  body.value = current?.body ?? '';
  // Disabled while off, so its fields take no part in the form's validation.
  const section = el('fieldset', { hidden: !on.checked, disabled: !on.checked }, el('legend', {}, 'Fixed answer'),
    field('fixed-status', 'Status code', status, 'From 200 to 299; 204 and 205 have no body.'),
    field('fixed-content-type', 'Content type', contentType, 'JSON, text/plain or XML: for example text/plain, or application/json; charset=utf-8.'),
    field('fixed-body', 'Body', body, 'At most 1,000 characters, for example [accepted] for Adyen.'));
  on.addEventListener('change', () => {
    section.hidden = !on.checked;
    section.disabled = !on.checked;
  });
  return {
    elements: [row, hint, section],
    body: () => {
      if (!on.checked) return null;
      const code = Number(status.value);
      if (!Number.isInteger(code) || code < 200 || code > 299) throw new Error('The fixed answer\'s status code must be a whole number from 200 to 299.');
      if ((code === 204 || code === 205) && body.value !== '') throw new Error(`A ${code} answer has no body: empty the fixed answer's Body.`);
      return { status_code: code, content_type: contentType.value.trim(), body: body.value };
    },
  };
}
