import type { LogLevel } from '../config.js';

type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Whether a line of this level would be written (to skip building fields on hot paths). */
  enabled?(level: LogLevel): boolean;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

// Field names whose values never reach a log line, whatever the caller passes.
const SECRET_FIELD = /pass(word)?|secret|token|code|authorization|cookie|credential|key$/i;

function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [name, value] of Object.entries(fields)) {
    out[name] = SECRET_FIELD.test(name)
      ? '[redacted]'
      : value instanceof Error
        ? { message: value.message, stack: value.stack }
        : value;
  }
  return out;
}

/** JSON lines on a stream (stdout by default), one object per event. */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stdout.write(line),
): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < min) return;
    write(
      `${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...(fields ? redact(fields) : {}) })}\n`,
    );
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    enabled: (lvl) => RANK[lvl] >= min,
  };
}
