/**
 * Where a page's focus starts, decided once for every page by the layout (docs/kernel.md,
 * Pages, Focus). Pages carry no script, so it is the `autofocus` attribute:
 * - after an error, the error summary (the first `role="alert"`), made focusable with
 *   tabindex="-1": a screen reader reads it at once and the next Tab reaches the form;
 * - otherwise the first empty field to type in (an email already filled in moves it to the
 *   password or the code). A page whose fields are all chosen already (a consent page's
 *   workspace select) keeps the focus at its start: the person reads before deciding.
 * A page that places `autofocus` itself is left as it is.
 */

const ALERT = /<[a-z][a-z0-9]*\b[^>]*\brole="alert"/;
const FIELD = /<(input|select|textarea)\b([^>]*)>/g;
const NOT_TYPED = /\btype="(hidden|submit|button|reset|checkbox|radio)"/;

function focusAlert(body: string): string | null {
  const match = ALERT.exec(body);
  if (!match) return null;
  const at = match.index + match[0].length;
  return `${body.slice(0, at)} tabindex="-1" autofocus${body.slice(at)}`;
}

function focusField(body: string): string {
  for (const match of body.matchAll(FIELD)) {
    const [whole, tag, attrs] = match;
    if (tag === 'select' || NOT_TYPED.test(attrs) || /\b(disabled|readonly)\b/.test(attrs)) continue;
    if (/\bvalue="[^"]/.test(attrs)) continue;
    const end = match.index + whole.length - (whole.endsWith('/>') ? 2 : 1);
    return `${body.slice(0, end)} autofocus${body.slice(end)}`;
  }
  return body;
}

export function withAutofocus(body: string): string {
  if (/\bautofocus\b/.test(body)) return body;
  return focusAlert(body) ?? focusField(body);
}
