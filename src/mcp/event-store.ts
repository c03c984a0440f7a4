import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

/** Per session: events kept for resumption, and their total size; the oldest go first. */
const MAX_EVENTS = 100;
const MAX_BYTES = 256 * 1024;

/** The delay a client waits before resuming a stream Gantry closed or lost (SSE `retry:`). */
export const RESUME_RETRY_MS = 1_000;

interface Stored {
  seq: number;
  streamId: string;
  message: JSONRPCMessage;
  bytes: number;
}

/**
 * One 2025-era session's SSE events, so that a client whose stream broke mid-call can resume it
 * with Last-Event-ID (docs/mcp.md, Resumable streams). Bounded: an event over MAX_BYTES is not
 * kept (its stream cannot be resumed past it), and older events give way to newer ones.
 * An event id is `<stream id>:<sequence>`: the sequence orders events even after the ones
 * before it were dropped.
 */
export function sessionEventStore(): EventStore {
  const events: Stored[] = [];
  let bytes = 0;
  let seq = 0;
  return {
    async storeEvent(streamId, message) {
      const stored = { seq: ++seq, streamId, message, bytes: JSON.stringify(message).length };
      if (stored.bytes <= MAX_BYTES) {
        events.push(stored);
        bytes += stored.bytes;
        while (events.length > MAX_EVENTS || bytes > MAX_BYTES) bytes -= events.shift()!.bytes;
      }
      return `${streamId}:${stored.seq}`;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const at = lastEventId.lastIndexOf(':');
      const streamId = at > 0 ? lastEventId.slice(0, at) : lastEventId;
      const after = at > 0 ? Number(lastEventId.slice(at + 1)) : Number.NaN;
      // An id this session never gave names no stream: the SDK then ends the resumed stream at once.
      if (!Number.isSafeInteger(after)) return lastEventId;
      for (const e of events.filter((x) => x.streamId === streamId && x.seq > after))
        await send(`${e.streamId}:${e.seq}`, e.message);
      return streamId;
    },
  };
}
