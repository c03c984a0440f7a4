import type { MailMessage } from '../lib/mailer.js';
import { oneLine } from '../lib/text.js';
import type { IncidentEventBody, MaintenanceEventBody, StatusEventBody } from './events.js';
import { impactLabel, incidentLabel, timeText } from './labels.js';

/**
 * The subscribers' mails (docs/status.md, Subscriptions): the confirmation of a new address and
 * the notices of events. Every one carries the one-click unsubscribe of RFC 8058 (the headers a
 * mail client acts on by itself) and the same link in its text.
 */

export const CONFIRMATION_KIND = 'status_confirmation';
const NOTICE_KIND = 'status_notice';
/** What an unsubscribed address is forgotten from (the outbox included). */
export const SUBSCRIBER_MAIL_KINDS = [CONFIRMATION_KIND, NOTICE_KIND] as const;

/** RFC 8058 section 3.1: the HTTPS URI, and the one key/value pair the client POSTs to it. */
const unsubscribeHeaders = (url: string) => ({
  'List-Unsubscribe': `<${url}>`,
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
});

/** Operator-written titles stay one line in a subject. */
const TITLE_MAX = 120;

const footer = (brand: string, to: string, unsubscribeUrl: string) =>
  `--\nYou receive this because ${to} is subscribed to the status updates of ${brand}.\nUnsubscribe with one click: ${unsubscribeUrl}`;

export function confirmationMail(input: {
  brand: string;
  to: string;
  confirmUrl: string;
  unsubscribeUrl: string;
  ttlHours: number;
}): MailMessage {
  return {
    to: input.to,
    kind: CONFIRMATION_KIND,
    subject: `Confirm your subscription to ${input.brand} status updates`,
    text: `Someone (hopefully you) asked for ${input.brand}'s status updates (incidents and maintenance) to be mailed to ${input.to}.\n\nConfirm the subscription: ${input.confirmUrl}\n\nThe link expires in ${input.ttlHours} hours. If you did not ask for this, ignore this mail: nothing more will be sent, and the address is deleted when the link expires.\n\n${footer(input.brand, input.to, input.unsubscribeUrl)}`,
    headers: unsubscribeHeaders(input.unsubscribeUrl),
  };
}

/** The part of a notice every recipient shares (built once per event, not once per subscriber). */
export interface NoticeParts {
  subject: string;
  text: string;
}

function incidentParts(brand: string, body: IncidentEventBody): NoticeParts {
  const i = body.incident;
  const title = oneLine(i.title, TITLE_MAX);
  const label = incidentLabel(i.status);
  const subject =
    body.type === 'incident.created'
      ? `[${brand}] New incident: ${title}`
      : body.type === 'incident.resolved'
        ? `[${brand}] Resolved: ${title}`
        : `[${brand}] ${label}: ${title}`;
  const affected = [...i.services.map((s) => s.name), ...i.components.map((c) => `${c.name} (${c.service.name})`)];
  const [latest, ...earlier] = i.updates;
  const lines = [
    i.title,
    `${label} · impact: ${impactLabel(i.impact)} · affects: ${affected.length > 0 ? affected.join(', ') : 'all services'}`,
    '',
    ...(latest ? [`${incidentLabel(latest.status)} - ${latest.message}`, timeText(latest.created_at), ''] : []),
    ...(earlier.length > 0
      ? [
          'Earlier updates:',
          ...earlier.map((u) => `${incidentLabel(u.status)} - ${u.message} (${timeText(u.created_at)})`),
          '',
        ]
      : []),
    `The whole timeline: ${i.url}`,
  ];
  return { subject, text: lines.join('\n') };
}

function maintenanceParts(brand: string, body: MaintenanceEventBody): NoticeParts {
  const m = body.maintenance;
  const started = body.type === 'maintenance.started';
  const lines = [
    m.title,
    `${started ? 'Maintenance has started' : 'Maintenance is complete'} on ${m.service.name}.`,
    `Window: ${timeText(m.starts_at)} to ${timeText(m.ends_at)}`,
    ...(m.description ? ['', m.description] : []),
    '',
    `Status page: ${m.url}`,
  ];
  return {
    subject: `[${brand}] Maintenance ${started ? 'started' : 'completed'}: ${oneLine(m.title, TITLE_MAX)}`,
    text: lines.join('\n'),
  };
}

export const noticeParts = (brand: string, body: StatusEventBody): NoticeParts =>
  'incident' in body ? incidentParts(brand, body) : maintenanceParts(brand, body);

export const noticeMail = (brand: string, parts: NoticeParts, to: string, unsubscribeUrl: string): MailMessage => ({
  to,
  kind: NOTICE_KIND,
  subject: parts.subject,
  text: `${parts.text}\n\n${footer(brand, to, unsubscribeUrl)}`,
  headers: unsubscribeHeaders(unsubscribeUrl),
});
