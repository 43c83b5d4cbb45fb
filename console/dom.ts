/** Small DOM helpers the pages share: elements, labelled fields, progress, copy, dialogs. */

export type Child = Node | string | false | null | undefined;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | ((e: Event) => void)> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') node.addEventListener(name, value);
    else if (value === true) node.setAttribute(name, '');
    else if (value !== false) node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

/** The page's alert region: a failure in words goes here, and screen readers announce it. */
export const alertRegion = () => el('div', { role: 'alert', class: 'alert' });

/**
 * Runs `action` with `control` marked busy (and disabled) meanwhile; a failure is put into
 * `alert` in words, so nothing fails silently.
 */
export async function withProgress(control: HTMLElement, alert: HTMLElement, action: () => Promise<void>): Promise<void> {
  alert.textContent = '';
  control.setAttribute('aria-busy', 'true');
  if (control instanceof HTMLButtonElement) control.disabled = true;
  try {
    await action();
  } catch (error) {
    alert.textContent = error instanceof Error ? error.message : String(error);
  } finally {
    control.removeAttribute('aria-busy');
    if (control instanceof HTMLButtonElement) control.disabled = false;
  }
}

/** A button that runs `action` with progress, reporting failures into `alert`. */
export function actionButton(text: string, alert: HTMLElement, action: (button: HTMLButtonElement) => Promise<void>, attrs: Record<string, string> = {}): HTMLButtonElement {
  const button = el('button', { type: 'button', ...attrs }, text);
  button.addEventListener('click', () => void withProgress(button, alert, () => action(button)));
  return button;
}

export function copyButton(text: string, alert: HTMLElement, label: string): HTMLButtonElement {
  return actionButton('Copy', alert, async (button) => {
    await navigator.clipboard.writeText(text).catch(() => {
      throw new Error('The browser did not allow copying; select the text and copy it yourself.');
    });
    button.textContent = 'Copied';
  }, { class: 'secondary', 'aria-label': label });
}

/** A labelled control; `hint` (text, or a node a page updates) describes it to screen readers too. */
export function field(id: string, label: string, control: HTMLElement, hint?: string | Node): HTMLElement {
  if (hint) control.setAttribute('aria-describedby', `${id}-hint`);
  control.id = id;
  return el('div', {}, el('label', { for: id }, label), hint && el('p', { class: 'hint', id: `${id}-hint` }, hint), control);
}

export function checkbox(id: string, label: string, checked = false): [HTMLElement, HTMLInputElement] {
  const input = el('input', { type: 'checkbox', id, checked });
  return [el('label', { class: 'check', for: id }, input, label), input];
}

export function select(options: readonly (readonly [string, string])[], value?: string): HTMLSelectElement {
  const node = el('select', {}, ...options.map(([v, text]) => el('option', { value: v }, text)));
  if (value !== undefined) node.value = value;
  return node;
}

export const textInput = (value = '', attrs: Record<string, string | boolean> = {}) => {
  const input = el('input', { type: 'text', autocomplete: 'off', ...attrs });
  input.value = value;
  return input;
};

let dialogCount = 0;

/**
 * A modal dialog with a confirm button (running `action` with progress, failures shown inside the
 * dialog) and Cancel; focus returns to `opener` when it closes. `content` may hold fields, and
 * `ready` says when the confirm button may be used (e.g. once a name is typed).
 */
export function openDialog(options: {
  title: string;
  content: Child[];
  confirm: string;
  opener: HTMLElement;
  action: () => Promise<void>;
  ready?: () => boolean;
  watch?: HTMLInputElement[];
  focus?: HTMLElement;
}): void {
  const id = `dialog-${++dialogCount}`;
  const alert = alertRegion();
  const confirm = el('button', { type: 'submit' }, options.confirm);
  const cancel = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const form = el('form', {}, ...options.content, alert, el('div', { class: 'actions' }, confirm, cancel));
  const dialog = el('dialog', { 'aria-labelledby': `${id}-title` }, el('h2', { id: `${id}-title` }, options.title), form);
  const close = () => {
    dialog.close();
    dialog.remove();
    if (options.opener.isConnected) options.opener.focus();
  };
  const update = () => (confirm.disabled = options.ready ? !options.ready() : false);
  for (const input of options.watch ?? []) input.addEventListener('input', update);
  update();
  cancel.addEventListener('click', close);
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault();
    close();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (options.ready && !options.ready()) return;
    void withProgress(confirm, alert, async () => {
      await options.action();
      close();
    }).then(update);
  });
  document.body.append(dialog);
  dialog.showModal();
  (options.focus ?? cancel).focus();
}

/**
 * "Purge": a danger button whose dialog asks for the store's `name` to be typed before `purge`
 * runs, the same for every kind of store. `kind` names it in the dialog ("bucket", "store"),
 * `contents` says what goes ("Every value in this bucket"); `done` runs after, with the notice set.
 */
export function purgeButton(options: { name: string; kind: string; contents: string; notice: HTMLElement; purge: () => Promise<void>; done: () => Promise<void> | void }): HTMLButtonElement {
  const { name } = options;
  const button = el('button', { type: 'button', class: 'danger' }, 'Purge');
  button.addEventListener('click', () => {
    const typed = textInput();
    openDialog({
      title: `Purge ${name}?`,
      content: [
        el('p', {}, `${options.contents} is removed at once; its configuration stays. This cannot be undone.`),
        field('purge-name', `Type the ${options.kind} name to confirm`, typed),
      ],
      confirm: 'Purge',
      opener: button,
      focus: typed,
      watch: [typed],
      ready: () => typed.value === name,
      action: async () => {
        await options.purge();
        options.notice.replaceChildren(el('p', { class: 'notice' }, `${name} purged.`));
        await options.done();
      },
    });
  });
  return button;
}

/**
 * Text shown as is that scrolls when long (`pre.value`, at most 24rem high). It is in the tab order
 * and a named region, so a keyboard user can reach it, hear what it holds, and scroll it with the
 * arrow keys; the page-wide `:focus-visible` outline shows where the focus is.
 */
export const scrollableText = (label: string, text: string) =>
  el('pre', { class: 'value', role: 'region', tabindex: '0', 'aria-label': label }, text);

/** A heading that pages focus when they open, so screen readers announce the new page. */
export const pageHeading = (text: string) => el('h1', { tabindex: '-1' }, text);

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element, as `el` makes HTML ones: attributes (numbers as text), listeners, children. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number | ((e: Event) => void)> = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') node.addEventListener(name, value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}
