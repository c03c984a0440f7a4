import { sha256Hex } from '../lib/crypto.js';

/**
 * How long an exposed name may be. MCP clients add their own prefix (Claude Code:
 * `mcp__<server>__`) and some drop long names (Cursor: over about 60 characters), so Gantry
 * keeps to 40, well inside the 64 that model APIs accept (docs/connectors.md, Tools over MCP).
 */
const NAME_TARGET = 40;
/** Hex digits of the hash suffix; longer only while names still collide. */
const HASH_LENGTHS = [6, 10, 16, 24] as const;
const DERIVED_PREFIX_MAX = 20;
/** What a shortened name keeps of the tool key at least, cutting the prefix if need be. */
const KEY_KEEP = 8;

interface NameInput {
  instanceId: string;
  toolKey: string;
  prefix: string;
}

/**
 * An instance's prefix: its own `toolPrefix` when set ('' = none); else its display name
 * slugified (lower-case `[a-z0-9_]`, accents dropped, runs of anything else as one `_`, at
 * most 20 characters) and `__`, falling back to the connector key when the display name
 * leaves nothing.
 */
export function toolPrefixOf(instance: { tool_prefix: string | null; display_name: string; connector_key: string }) {
  if (instance.tool_prefix !== null) return instance.tool_prefix;
  const slug = slugify(instance.display_name) || slugify(instance.connector_key);
  return `${slug}__`;
}

function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_/, '')
    .slice(0, DERIVED_PREFIX_MAX)
    .replace(/_$/, '');
}

/** MCP tool names are `[A-Za-z0-9_.-]`; a server's key may hold anything else. */
const sanitize = (key: string) => key.replace(/[^A-Za-z0-9_.-]/g, '_');

/**
 * The shortened name: the prefix (cut only where it would leave the key fewer than KEY_KEEP
 * characters), as much of the key as fits, then `_` and the first hex digits of
 * SHA-256(instanceId, toolKey), which is the same on every call and differs between instances.
 */
function hashed(t: NameInput, hexLength: number): string {
  const tail = `_${sha256Hex(`${t.instanceId}\n${t.toolKey}`).slice(0, hexLength)}`;
  const room = NAME_TARGET - tail.length;
  const prefix = t.prefix.slice(0, room - KEY_KEEP);
  return (prefix + sanitize(t.toolKey)).slice(0, room) + tail;
}

/** Who a bound name belongs to: an instance's tool, by its key. */
export const nameOwner = (t: { instanceId: string; toolKey: string }) => `${t.instanceId}\n${t.toolKey}`;

/**
 * The exposed name of each tool, in the order given (docs/connectors.md, Tool names):
 * - a tool keeps a name an agent has called it by (`bound`: lower-case name -> nameOwner) as
 *   long as that name is still one of its own forms (its full name, or a hashed one under its
 *   current prefix): a rename retires it instead;
 * - otherwise `{prefix}{toolKey}` when that fits in 40 characters, no other tool of the list has
 *   it (compared case-insensitively, as some clients do) and no other tool is bound to it; else
 *   the hashed form. Every unbound tool whose name collides is hashed, whichever came first, so
 *   a name depends only on the set of tools and the bound names, never on their order.
 */
export function exposedNames(tools: readonly NameInput[], bound: ReadonlyMap<string, string> = new Map()): string[] {
  const takenByAnother = (name: string, t: NameInput) => {
    const owner = bound.get(name.toLowerCase());
    return owner !== undefined && owner !== nameOwner(t);
  };
  const forms = (t: NameInput) => [t.prefix + sanitize(t.toolKey), ...HASH_LENGTHS.map((n) => hashed(t, n))];
  const kept = tools.map((t) => forms(t).find((name) => bound.get(name.toLowerCase()) === nameOwner(t)) ?? null);
  const names = tools.map((t, i) => {
    if (kept[i] !== null) return kept[i];
    const full = t.prefix + sanitize(t.toolKey);
    return full.length <= NAME_TARGET && !takenByAnother(full, t) ? full : hashed(t, HASH_LENGTHS[0]);
  });
  for (const hexLength of HASH_LENGTHS) {
    const seen = new Map<string, number>();
    for (const name of names) seen.set(name.toLowerCase(), (seen.get(name.toLowerCase()) ?? 0) + 1);
    const clashing = names.flatMap((name, i) =>
      kept[i] === null && ((seen.get(name.toLowerCase()) ?? 0) > 1 || takenByAnother(name, tools[i])) ? [i] : [],
    );
    if (clashing.length === 0) break;
    for (const i of clashing) names[i] = hashed(tools[i], hexLength);
  }
  return names;
}
