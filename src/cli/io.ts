import type { AppFactories } from '../app-types.js';
import type { Command } from 'commander';

/** Where a command writes and what it may ask: injected, so tests capture both. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Prompts are allowed only when stdin and stderr are terminals (src/main.ts). */
  interactive: boolean;
  /**
   * Where prompts read and draw: stdin and stderr (so stdout keeps only the result, one JSON
   * document with --json); a scripted terminal in tests. Unset: @inquirer's default (stdin, stdout).
   */
  terminal?: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream };
  env: NodeJS.ProcessEnv;
  /** Resolved when the process is asked to stop (SIGTERM/SIGINT); serve waits on it. */
  stopSignal: Promise<string>;
  /** The composition root's factories (src/app.ts), handed over by the entry point. */
  app: AppFactories;
}

/** A mistake of the caller (missing option, bad value, an ambiguous name): exit code 2. */
export class UsageError extends Error {}

export interface CommonOptions {
  dataDir?: string;
  json?: boolean;
}

/** Every command takes --data-dir and --json (docs/interface.md, Operations). */
export function withCommon(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'data directory (env GANTRY_DATA_DIR, default ./data)')
    .option('--json', 'print exactly one JSON document');
}

/** Prints a result: one JSON document with --json, else the human form. */
export function emit(io: CliIo, options: CommonOptions, value: unknown, human: () => string): void {
  io.out(options.json ? JSON.stringify(value, null, 2) : human());
}

/** A problem with an answer (shown under the question, which is asked again), or null when it is fine. */
export type AnswerCheck = (answer: string) => string | null | Promise<string | null>;

export interface AskSpec {
  flag: string;
  message: string;
  kind?: 'text' | 'password' | 'select';
  choices?: readonly string[];
  /** The rule the service applies, checked as it is typed so a bad answer is asked again. */
  check?: AnswerCheck;
}

/** The prompt library, loaded on first use: `serve` never prompts and should not carry it. */
export const prompts = () => import('@inquirer/prompts');

/** @inquirer's validate: true, or the reason shown under the question. Text is checked trimmed, as it is kept. */
const validator =
  (check: AnswerCheck | undefined, trim: boolean) =>
  async (answer: string): Promise<true | string> =>
    (await check?.(trim ? answer.trim() : answer)) ?? true;

/**
 * A required option: its value, else a prompt on a TTY, else exit 2 naming the flag. A bad
 * answer is refused at the prompt with the reason and asked again; earlier answers stand.
 */
export async function required(io: CliIo, value: string | undefined, spec: AskSpec): Promise<string> {
  if (value !== undefined && value !== '') return value;
  if (!io.interactive) throw new UsageError(`missing required option --${spec.flag}`);
  const { input, password, select } = await prompts();
  if (spec.kind === 'password')
    return password({ message: spec.message, mask: '*', validate: validator(spec.check, false) }, io.terminal);
  if (spec.kind === 'select' && spec.choices)
    return select({ message: spec.message, choices: spec.choices.map((c) => ({ value: c, name: c })) }, io.terminal);
  const validate = validator(spec.check, true);
  return (await input({ message: spec.message, required: true, validate }, io.terminal)).trim();
}

const splitList = (answer: string) => answer.split(/[\s,]+/).filter(Boolean);

/** A required list option (variadic flag): its values, else one comma-separated prompt, each item checked. */
export async function requiredList(io: CliIo, values: string[] | undefined, spec: AskSpec): Promise<string[]> {
  if (values && values.length > 0) return values;
  const { check } = spec;
  const answer = await required(io, undefined, {
    ...spec,
    check: async (text) => {
      const items = splitList(text);
      if (items.length === 0) return 'give at least one';
      for (const item of items) {
        const problem = await check?.(item);
        if (problem) return items.length > 1 ? `${item}: ${problem}` : problem;
      }
      return null;
    },
  });
  return splitList(answer);
}

/** A table of rows for human output. */
export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

/**
 * A numeric option: undefined when absent, else a finite number within the bounds (an integer
 * when asked), or exit 2 naming the flag. Never a silent default for a mistyped value.
 */
export function numberOption(
  flag: string,
  text: string | undefined,
  rule: { integer?: boolean; min?: number; max?: number } = {},
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  const kind = rule.integer ? 'an integer' : 'a number';
  if (text.trim() === '' || !Number.isFinite(value) || (rule.integer && !Number.isInteger(value)))
    throw new UsageError(`--${flag} must be ${kind} (got "${text}")`);
  if ((rule.min !== undefined && value < rule.min) || (rule.max !== undefined && value > rule.max)) {
    throw new UsageError(`--${flag} must be ${kind} from ${rule.min ?? '-∞'} to ${rule.max ?? '∞'} (got "${text}")`);
  }
  return value;
}
