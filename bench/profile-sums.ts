// What the CPU-profile scripts (bench/mcp-profile.ts, bench/oauth-profile.ts) do alike with a
// V8 .cpuprofile: self time summed by a key, shares of the total, each node's parent.

/** A node of a V8 CPU profile. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** Self time (µs by node id) summed by `key`, largest first. */
export function sumBy(
  self: Map<number, number>,
  byNode: Map<number, ProfileNode>,
  key: (n: ProfileNode) => string,
): Array<[string, number]> {
  const out = new Map<string, number>();
  for (const [id, us] of self) {
    const name = key(byNode.get(id)!);
    out.set(name, (out.get(name) ?? 0) + us);
  }
  return [...out].sort((a, b) => b[1] - a[1]);
}

/** A share of `total` µs as a padded percentage. */
export const shareOf = (total: number) => (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;

/** Each node's parent, by id. */
export function parentsOf(nodes: readonly ProfileNode[]): Map<number, number> {
  const parent = new Map<number, number>();
  for (const n of nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  return parent;
}
