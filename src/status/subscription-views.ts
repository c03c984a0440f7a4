import { escapeHtml as escape } from '../http/html.js';
import type { PageView } from '../http/page-kit.js';
import type { StatusModel } from './model.js';
import { SUBSCRIBE_PAGE } from './page.js';

/**
 * The subscription pages' bodies (docs/status.md, Subscriptions): the form, and each state a
 * subscriber meets (confirmation sent, confirmed, webhook added, unsubscribed). No script;
 * errors in role="alert" next to the field they concern.
 */

export interface SubscribeFormValues {
  email: string;
  webhookUrl: string;
  componentIds: string[];
  error?: { field: 'email' | 'webhookUrl' | 'componentIds' | 'form'; message: string };
}

const back = '<p><a href="/status">Back to the status page</a></p>';

function invalid(values: SubscribeFormValues, field: string): string {
  return values.error?.field === field ? ' aria-invalid="true" aria-describedby="form-error"' : '';
}

function componentChoices(model: StatusModel, chosen: Set<string>): string {
  const groups = model.services
    .filter((s) => s.components.length > 0)
    .map(
      (s) => `<fieldset class="choices"><legend>${escape(s.row.name)}</legend>
${s.components
  .map((c) => {
    const id = `c-${escape(c.row.id)}`;
    return `<div class="check"><input type="checkbox" id="${id}" name="component" value="${escape(c.row.id)}"${chosen.has(c.row.id) ? ' checked' : ''}><label for="${id}">${escape(c.row.name)}</label></div>`;
  })
  .join('\n')}
</fieldset>`,
    )
    .join('\n');
  return groups
    ? `<details class="components"${chosen.size > 0 ? ' open' : ''}><summary>Only some components</summary>
<p class="muted">Choose components to hear only about them (and about what concerns every service); choose none to hear about everything.</p>
${groups}
</details>`
    : '';
}

export function subscribeForm(model: StatusModel, brand: string, csrf: string, values: SubscribeFormValues): PageView {
  const error = values.error
    ? `<p class="error" role="alert" id="form-error">${escape(values.error.message)}</p>\n`
    : '';
  const webhookOpen = values.error?.field === 'webhookUrl' || values.webhookUrl !== '';
  return {
    title: 'Subscribe to updates',
    body: `<h1>Subscribe to ${escape(brand)} status updates</h1>
<p>Hear when an incident is opened, updated or resolved, and when maintenance starts or ends.</p>
${error}<form method="post" action="${SUBSCRIBE_PAGE}">
<input type="hidden" name="csrf" value="${escape(csrf)}">
<label for="email">Email address</label><input id="email" name="email" type="email" autocomplete="email" value="${escape(values.email)}"${invalid(values, 'email')}>
<p class="muted">We mail you a link to confirm the address; nothing else is sent until you do. Every mail has a link to unsubscribe with one click.</p>
${componentChoices(model, new Set(values.componentIds))}
<div class="actions"><button class="btn btn-primary" type="submit" name="kind" value="email">Subscribe by email</button></div>
<details class="webhook"${webhookOpen ? ' open' : ''}><summary>Or subscribe a webhook</summary>
<label for="webhookUrl">Webhook URL</label><input id="webhookUrl" name="webhookUrl" type="url" inputmode="url" value="${escape(values.webhookUrl)}"${invalid(values, 'webhookUrl')}>
<p class="muted">Each event is POSTed as JSON, signed with a secret shown once when the webhook is added.</p>
<div class="actions"><button class="btn btn-secondary" type="submit" name="kind" value="webhook">Add the webhook</button></div>
</details>
</form>
${back}`,
  };
}

export const confirmationSentPage = (): PageView => ({
  title: 'Check your inbox',
  body: `<h1>Check your inbox</h1>
<p class="notice" role="status">If the address can be subscribed, a mail with a confirmation link is on its way to it.</p>
<p>Open the link within 48 hours to start receiving updates. Nothing else is sent until then, and an address that is not confirmed is deleted.</p>
${back}`,
});

export const confirmPage = (path: string, token: string): PageView => ({
  title: 'Confirm your subscription',
  body: `<h1>Confirm your subscription</h1>
<p>Confirm that this address should receive status updates. If you did not ask for them, close this page: nothing more will be sent.</p>
<form method="post" action="${escape(path)}"><input type="hidden" name="token" value="${escape(token)}">
<div class="actions"><button class="btn btn-primary" type="submit">Confirm the subscription</button></div></form>`,
});

export const confirmedPage = (): PageView => ({
  title: 'You are subscribed',
  body: `<h1>You are subscribed</h1>
<p class="notice" role="status">Your address is confirmed: you will get a mail when an incident is opened, updated or resolved, and when maintenance starts or ends.</p>
<p>Every mail has a link to unsubscribe with one click.</p>
${back}`,
});

export const webhookAddedPage = (url: string, secret: string): PageView => ({
  title: 'Webhook added',
  body: `<h1>Webhook added</h1>
<p class="notice" role="status">Events will be POSTed to ${escape(url)}.</p>
<p>This is the webhook's signing secret. It is shown only this once: keep it where your receiver can read it.</p>
<pre class="arguments" id="secret">${escape(secret)}</pre>
<p>Each request carries <code>X-Gantry-Signature: t=UNIX,v1=HEX</code>, the HMAC-SHA256 of <code>t.body</code> (the time, a dot and the raw body) under this secret. Check it and that the time is recent before trusting a request. Answer 410 to stop the deliveries.</p>
${back}`,
});

export const unsubscribePage = (path: string, token: string): PageView => ({
  title: 'Unsubscribe',
  body: `<h1>Unsubscribe</h1>
<p>Stop the status updates to this address? The address is deleted with the subscription.</p>
<form method="post" action="${escape(path)}?token=${encodeURIComponent(token)}">
<div class="actions"><button class="btn btn-primary" type="submit">Unsubscribe</button></div></form>
${back}`,
});

export const unsubscribedPage = (): PageView => ({
  title: 'You are unsubscribed',
  body: `<h1>You are unsubscribed</h1>
<p class="notice" role="status">No more status updates will be sent, and the address is deleted.</p>
<p><a href="${SUBSCRIBE_PAGE}">Subscribe again</a> · <a href="/status">Back to the status page</a></p>`,
});
