import { escapeHtml } from '../http/html.js';
import type { StatusModel } from './model.js';
import { incidentLabel, timeText } from './labels.js';

const xml = escapeHtml;

/**
 * The incidents as an Atom feed (RFC 4287), newest first: each entry links to its incident's
 * own page and carries its timeline; the feed carries the operator's brand, so the feeds of
 * several installations read apart in one reader.
 */
export function renderIncidentFeed(model: StatusModel, pageUrl: string, feedUrl: string, brand: string): string {
  const incidents = model.incidents.slice(0, 50);
  const latest = (i: (typeof incidents)[number]) => i.updates[i.updates.length - 1]?.created_at ?? i.row.updated_at;
  const updated = incidents.length > 0 ? incidents.map(latest).reduce((a, b) => (a > b ? a : b)) : model.updatedAt;
  const entries = incidents
    .map((i) => {
      const timeline = [...i.updates]
        .reverse()
        .map(
          (u) =>
            `<p><small>${xml(timeText(u.created_at))}</small><br><strong>${xml(incidentLabel(u.status))}</strong> - ${xml(u.message)}</p>`,
        )
        .join('');
      const last = i.updates[i.updates.length - 1];
      return `  <entry>
    <id>urn:uuid:${i.row.id}</id>
    <title>${xml(i.row.title)}</title>
    <published>${i.row.started_at}</published>
    <updated>${latest(i)}</updated>
    <link rel="alternate" type="text/html" href="${xml(`${pageUrl}/incidents/${i.row.id}`)}"/>
    <category term="${xml(i.row.status)}" label="${xml(incidentLabel(i.row.status))}"/>
${last ? `    <summary>${xml(`${incidentLabel(last.status)} - ${last.message}`)}</summary>\n` : ''}    <content type="html">${xml(timeline)}</content>
  </entry>`;
    })
    .join('\n');
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>${xml(pageUrl)}</id>
  <title>${xml(`${brand} status: incidents`)}</title>
  <updated>${updated}</updated>
  <author><name>${xml(brand)}</name></author>
  <link rel="self" type="application/atom+xml" href="${xml(feedUrl)}"/>
  <link rel="alternate" type="text/html" href="${xml(pageUrl)}"/>
${entries}
</feed>
`;
}
