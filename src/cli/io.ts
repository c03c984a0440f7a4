import type { Command } from 'commander';

/** Where a command writes and what it may ask: injected, so tests capture both. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Prompts are allowed only when both stdin and stdout are terminals. */
  interactive: boolean;
  env: NodeJS.ProcessEnv;
  /** Resolved when the process is asked to stop (SIGTERM/SIGINT); serve waits on it. */
  stopSignal: Promise<string>;
}

/** A mistake of the caller (missing option, bad value): exit code 2. */
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

export interface AskSpec {
  flag: string;
  message: string;
  kind?: 'text' | 'password' | 'select';
  choices?: readonly string[];
}

/** A required option: its value, else a prompt on a TTY, else exit 2 naming the flag. */
export async function required(io: CliIo, value: string | undefined, spec: AskSpec): Promise<string> {
  if (value !== undefined && value !== '') return value;
  if (!io.interactive) throw new UsageError(`missing required option --${spec.flag}`);
  // Loaded on first use: `serve` never prompts and should not carry the prompt library.
  const { input, password, select } = await import('@inquirer/prompts');
  if (spec.kind === 'password') return password({ message: spec.message, mask: '*' });
  if (spec.kind === 'select' && spec.choices)
    return select({ message: spec.message, choices: spec.choices.map((c) => ({ value: c, name: c })) });
  return input({ message: spec.message, required: true });
}

/** A required list option (variadic flag): its values, else one comma-separated prompt. */
export async function requiredList(io: CliIo, values: string[] | undefined, spec: AskSpec): Promise<string[]> {
  if (values && values.length > 0) return values;
  const answer = await required(io, undefined, spec);
  return answer.split(/[\s,]+/).filter(Boolean);
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
