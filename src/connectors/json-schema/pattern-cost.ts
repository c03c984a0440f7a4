import regjsparser, { type AstNode as Node } from 'regjsparser';

/**
 * What one pattern may cost (docs/connectors.md, "JSON Schema"). RE2 matches in time linear in
 * the input, but the factor is the size of the compiled program, and a counted repetition copies
 * its operand: `[^\x00]{1000}` is a thousand instructions, and a 1.5 KB schema of such patterns
 * froze the server for seconds (docs/security.md, N-H1). So the program's size is estimated
 * from the pattern's syntax tree, before anything is compiled, and bounded.
 */
/** The syntax JSON Schema patterns may use (ECMA-262 with the `u` flag). */
const FEATURES = { namedGroups: true, unicodePropertyEscape: true, lookbehind: true } as const;
type AstNode = Node<typeof FEATURES>;

export const PATTERN_MAX_PROGRAM = 2_500;
/** RE2's own bound on a counted repetition (`{n,m}` with n or m above it is a syntax error there). */
const REPEAT_MAX = 1_000;
/** Groups inside groups: the walk below recurses, and RE2 itself stops at 1,000. */
const NESTING_MAX = 200;

export type PatternCost = { program: number } | { refused: string };

/**
 * An upper estimate of the RE2 program a pattern (ECMA-262 syntax, `u` flag, as JSON Schema
 * specifies) compiles to, computed as RE2 computes it (re2js Parser.calcSize): a character or
 * class is one instruction, a capture adds two, `*` two, `+` and `?` one, and `x{n,m}` is m
 * copies of x plus one per optional copy. Lookarounds and backreferences are refused: RE2 has
 * no linear-time way to run them.
 */
export function patternCost(pattern: string): PatternCost {
  let tree: AstNode;
  try {
    tree = regjsparser.parse(pattern, 'u', FEATURES);
  } catch (err) {
    if (err instanceof RangeError) return { refused: 'nests too deeply' };
    return { refused: `is not a valid regular expression (${(err as Error).message.split('\n')[0]})` };
  }
  try {
    const program = size(tree, 0);
    return program > PATTERN_MAX_PROGRAM
      ? {
          refused: `compiles to about ${program} RE2 instructions, more than ${PATTERN_MAX_PROGRAM} (a counted repetition {n,m} costs m copies; bound lengths with minLength/maxLength instead)`,
        }
      : { program };
  } catch (err) {
    if (err instanceof Refusal) return { refused: err.message };
    throw err;
  }
}

class Refusal extends Error {}

function size(node: AstNode, depth: number): number {
  if (depth > NESTING_MAX) throw new Refusal('nests too deeply');
  switch (node.type) {
    case 'value':
    case 'dot':
    case 'anchor':
    case 'characterClass':
    case 'characterClassEscape':
    case 'characterClassRange':
    case 'unicodePropertyEscape':
      return 1;
    case 'alternative':
      return Math.max(1, sum(node.body, depth));
    case 'disjunction':
      return sum(node.body, depth) + node.body.length - 1;
    case 'group':
      if (node.behavior === 'normal') return 2 + sum(node.body, depth);
      if (node.behavior === 'ignore') return Math.max(1, sum(node.body, depth));
      throw new Refusal('uses a lookaround, which RE2 cannot run in linear time');
    case 'reference':
      throw new Refusal('uses a backreference, which RE2 cannot run in linear time');
    case 'quantifier': {
      const { min, max } = node;
      if (min > REPEAT_MAX || (max !== undefined && max > REPEAT_MAX))
        throw new Refusal(`repeats more than ${REPEAT_MAX} times`);
      const sub = size(node.body[0], depth + 1);
      if (max === undefined) return min === 0 ? 2 + sub : 1 + min * sub;
      return max * sub + (max - min);
    }
  }
}

function sum(nodes: readonly AstNode[], depth: number): number {
  let total = 0;
  for (const n of nodes) total += size(n, depth + 1);
  return total;
}
