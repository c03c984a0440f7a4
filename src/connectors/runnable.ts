import { toBool } from '../db/tx.js';
import { conflict } from '../http/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import type { InstanceRow, ToolRow } from './tables.js';
import type { Definition } from './types.js';

/** When a tool may run (invoke.ts runs it; exposed-tools.ts names it over MCP; approvals bind to it). */

/**
 * What an approval is bound to: the instance's config and the tool's input schema as they were
 * when the call was asked. The schema decides what the approver is shown (writeOnly fields are
 * masked), so a sync that rewrites it must not carry an approval given on another view.
 */
export const targetDigest = (instance: InstanceRow, tool: ToolRow) =>
  sha256Hex(`${instance.config}\n${tool.input_schema}`);

/** Why a tool cannot run: disabled instances and disabled tools never do (docs/interface.md, States). */
function notRunnable(instance: { enabled: number }, tool: { is_active: number }): string | null {
  if (!toBool(instance.enabled)) return 'The connector instance is disabled';
  if (!toBool(tool.is_active)) return 'The tool is disabled';
  return null;
}

/** Whether a tool is one MCP names (exposed-tools.ts): enabled, whatever its definition's status. */
export const isRunnable = (instance: { enabled: number }, tool: { is_active: number }) =>
  notRunnable(instance, tool) === null;

/**
 * Refuses (409) a tool that cannot run now: disabled, or whose server changed its definition
 * and no owner or admin accepted it yet (docs/connectors.md, Tool definitions).
 */
export function assertRunnable(
  instance: { enabled: number },
  tool: { is_active: number; pending_definition: string | null },
): void {
  const why =
    notRunnable(instance, tool) ??
    (tool.pending_definition !== null
      ? "The tool's server changed its definition; an owner or admin must review and accept it before the tool runs again"
      : null);
  if (why) throw conflict(why);
}

/** Only the MCP adapter runs tools; other definitions' tools are manual records. */
export const canRunTools = (def: Definition | null | undefined) => def?.adapter === 'mcp';
