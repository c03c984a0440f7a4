import { CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { MigrationError } from '../db/migrator.js';
import { DomainError } from '../http/errors.js';
import { Cancelled } from './confirm.js';
import { UsageError } from './io.js';

/**
 * The codes a failed command reports besides a service's own (a DomainError's code: NOT_FOUND,
 * CONFLICT, VALIDATION_FAILED...; exit 2, or 1 for a 5xx one), each with its exit code
 * (docs/kernel.md, CLI).
 */
const CLI_FAILURES = {
  /** 2: an unknown command or option, a missing or malformed value, an ambiguous name, no --yes or --force. */
  USAGE: 2,
  /** 1: the operator answered no at a confirmation; nothing was changed. */
  CANCELLED: 1,
  /** 130: Ctrl-C at a prompt; nothing was changed. */
  INTERRUPTED: 130,
  /** 1: configuration, the data directory, a database migrated by a newer gantry, an address that cannot be listened on. */
  CONFIG: 1,
  /** 1: anything unexpected. */
  INTERNAL: 1,
} as const;

export interface Failure {
  code: string;
  exitCode: number;
  message: string;
  /** Whether the message was already printed (commander prints its own usage errors). */
  printed: boolean;
}

const failure = (code: keyof typeof CLI_FAILURES, message: string, printed = false): Failure => ({
  code,
  exitCode: CLI_FAILURES[code],
  message,
  printed,
});

/** What a thrown error means for the operator: its code, exit code and one-line message. */
export function describeFailure(err: unknown): Failure {
  if (err instanceof CommanderError) return failure('USAGE', err.message.replace(/^error: /, ''), true);
  if ((err as Error).name === 'ExitPromptError') return failure('INTERRUPTED', 'interrupted; nothing was changed');
  if (err instanceof UsageError) return failure('USAGE', err.message);
  if (err instanceof Cancelled) return failure('CANCELLED', err.message);
  if (err instanceof DomainError)
    return { code: err.code, exitCode: err.status >= 500 ? 1 : 2, message: err.message, printed: false };
  if (err instanceof ConfigError || err instanceof MigrationError) return failure('CONFIG', err.message);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
    return failure('CONFIG', `cannot listen: ${(err as Error).message}`);
  return failure('INTERNAL', `unexpected error: ${(err as Error).message}`);
}
