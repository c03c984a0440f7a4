import type { Command } from 'commander';
import { prompts, UsageError, type CliIo } from './io.js';

/** The operator answered no at a confirmation: nothing was changed (exit 1, code CANCELLED). */
export class Cancelled extends Error {}

export interface YesOption {
  yes?: boolean;
}

/** A destructive command's --yes: the confirmation given up front (docs/kernel.md, CLI). */
export function withYes(command: Command): Command {
  return command.option('-y, --yes', 'do it without asking (required when there is no terminal to ask on)');
}

/**
 * Asks before a destructive change, naming exactly what will happen (`question`, ending in
 * "?"). With --yes it does not ask; without a terminal and without --yes it refuses (exit 2,
 * naming --yes) before anything is changed, so a script never destroys by omission.
 */
export async function confirmed(io: CliIo, options: YesOption, question: string): Promise<void> {
  if (options.yes) return;
  if (!io.interactive)
    throw new UsageError(`${question} Pass --yes to confirm (there is no terminal to ask on); nothing was changed`);
  const { confirm } = await prompts();
  if (!(await confirm({ message: question, default: false }, io.terminal)))
    throw new Cancelled('cancelled; nothing was changed');
}
