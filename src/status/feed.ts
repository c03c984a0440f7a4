import { escapeHtml } from '../http/html.js';
import type { StatusModel } from './model.js';

const xml = escapeHtml;

/** The incidents as an Atom feed (RFC 4287), newest first, each entry carrying its timeline. */
export function renderIncidentFeed(model: StatusModel, pageUrl: string, feedUrl: string): string {
  const incidents = model.incidents.slice(0, 50);
  const latest = (i: (typeof incidents)[number]) => i.updates[i.updates.length - 1]?.created_at ?? i.row.updated_at;
  const updated = incidents.length > 0 ? incidents.map(latest).reduce((a, b) => (a > b ? a : b)) : model.updatedAt;
  const entries = incidents
    .map((i) => {
      const timeline = [...i.updates]
        .reverse()
        .map(
          (u) => `<p><small>${xml(u.created_at)}</small><br><strong>${xml(u.status)}</strong> - ${xml(u.message)}</p>`,
        )
        .join('');
      return `  <entry>
    <id>urn:uuid:${i.row.id}</id>
    <title>${xml(`[${i.row.status}] ${i.row.title}`)}</title>
    <published>${i.row.started_at}</published>
    <updated>${latest(i)}</updated>
    <link rel="alternate" type="text/html" href="${xml(pageUrl)}"/>
    <content type="html">${xml(timeline)}</content>
  </entry>`;
    })
    .join('\n');
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>${xml(pageUrl)}</id>
  <title>Status incidents</title>
  <updated>${updated}</updated>
  <author><name>Status</name></author>
  <link rel="self" type="application/atom+xml" href="${xml(feedUrl)}"/>
  <link rel="alternate" type="text/html" href="${xml(pageUrl)}"/>
${entries}
</feed>
`;
}
