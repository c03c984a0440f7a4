import type { IncomingHttpHeaders } from 'node:http';
import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { PreparedResponse } from '../http/prepared.js';
import { httpDate, type Representation } from './projection.js';

/** docs/interface.md, Limits: the status response cache. */
const STATUS_CACHE_CONTROL = 'public, max-age=30, stale-while-revalidate=300';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850 =
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ( \d|\d{2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

function utc(year: number, month: string, day: number, h: number, m: number, s: number): number | null {
  const mon = MONTHS.indexOf(month);
  if (mon < 0 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return null;
  const ms = Date.UTC(year, mon, day, h, m, Math.min(s, 59));
  return new Date(ms).getUTCDate() === day ? ms : null;
}

/**
 * An HTTP-date (RFC 9110 5.6.7) in any of its three forms, always as UTC: IMF-fixdate,
 * obsolete RFC 850 (two-digit years read as the most recent past year with those digits,
 * allowing 50 years ahead) and asctime. null for anything else, which the caller ignores.
 */
export function parseHttpDate(value: string, nowMs: number): number | null {
  const text = value.trim();
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[3]), m[2], Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  m = RFC850.exec(text);
  if (m) {
    const current = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(current / 100) * 100 + Number(m[3]);
    if (year > current + 50) year -= 100;
    return utc(year, m[2], Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  m = ASCTIME.exec(text);
  if (m) return utc(Number(m[6]), m[1], Number(m[2].trim()), Number(m[3]), Number(m[4]), Number(m[5]));
  return null;
}

/** If-None-Match against our tag with the weak comparison RFC 9110 13.1.2 requires (W/ ignored). */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  for (const m of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (m[1] === opaque) return true;
  return false;
}

/**
 * RFC 9110 13.2.2 for a GET/HEAD of a representation that exists: If-None-Match decides when
 * present (If-Modified-Since is then ignored); otherwise a valid If-Modified-Since means
 * unchanged when the projection's as-of instant is not after the start of the second it names.
 * A date is a whole second and several versions may share one (RFC 9110 8.8.2.2): a copy dated
 * the second that holds a sub-second as-of time may be an older version of that second, so it
 * gets a 200; a copy dated at or after the as-of instant can only be this version
 * (docs/status.md, Projections and caching).
 */
function isNotModified(headers: IncomingHttpHeaders, rep: Representation, nowMs: number): boolean {
  const inm = headers['if-none-match'];
  if (typeof inm === 'string' && inm.trim() !== '') return noneMatchHits(inm, rep.etag);
  const ims = headers['if-modified-since'];
  if (typeof ims !== 'string') return false;
  const since = parseHttpDate(ims, nowMs);
  return since !== null && rep.asOfMs <= since;
}

/**
 * Sends a prepared representation ourselves instead of hapi's entity helpers, which add
 * must-revalidate (cancelling stale-while-revalidate), drop Cache-Control on their short-cut
 * 304 and read asctime dates as local time. The conditional headers are consumed here so
 * hapi's own check in its marshal step has nothing left to re-evaluate, and the body goes out
 * without content-coding so the strong ETag names the exact bytes on the wire (a CDN in
 * front compresses). Only existing representations come here: errors never become 304.
 *
 * Date is set from the same clock reading that bounds Last-Modified, so Last-Modified is never
 * later than it (RFC 9110 8.8.2.1); Node's own Date reads the system time separately.
 */
export function sendRepresentation(
  request: Request,
  h: ResponseToolkit,
  rep: Representation,
  nowMs: number,
): ResponseObject {
  const notModified = isNotModified(request.headers as IncomingHttpHeaders, rep, nowMs);
  if (request.headers['if-none-match'] !== undefined) delete request.headers['if-none-match'];
  if (request.headers['if-modified-since'] !== undefined) delete request.headers['if-modified-since'];
  (request.info as { acceptEncoding: string | null }).acceptEncoding = 'identity';
  const response = notModified ? h.response().code(304) : h.response(rep.bytes).type(rep.contentType);
  for (const [name, value] of Object.entries(validators(rep, nowMs))) response.header(name, value);
  return response;
}

/** Date, Cache-Control, ETag and Last-Modified of a representation sent at `nowMs`. */
function validators(rep: Representation, nowMs: number): Record<string, string> {
  const date = httpDate(nowMs);
  return {
    date,
    'cache-control': STATUS_CACHE_CONTROL,
    etag: rep.etag,
    // Never later than Date (RFC 9110 8.8.2.1), even when a writer's clock ran ahead of ours.
    'last-modified': rep.asOfMs <= nowMs ? rep.lastModified : date,
  };
}

/**
 * The same answer as sendRepresentation, as a prepared answer the kernel writes without a hapi
 * request (src/http/prepared.ts): 304 or the exact bytes, with the same validators.
 */
export function preparedResponse(headers: IncomingHttpHeaders, rep: Representation, nowMs: number): PreparedResponse {
  const answer = validators(rep, nowMs);
  if (isNotModified(headers, rep, nowMs)) return { statusCode: 304, headers: answer, body: null };
  return { statusCode: 200, headers: { 'content-type': rep.contentType, ...answer }, body: rep.bytes };
}
