#!/usr/bin/env node
// Finds import cycles among the TypeScript sources: every static, relative `import ... from` or
// `export ... from` (type-only imports excluded: they vanish at build time). Prints each cycle and
// exits 1 if there is any. Usage: node scripts/check-cycles.mjs [root] (default: src/ next to this script).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? join(here, '..', 'src'));

function listFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

// `import x from`, `import {a, type b} from`, `import * as x from`, `export {a} from`, `export * from`
// and side-effect `import '...'`; `import type` and `export type` are left out.
const STATEMENT =
  /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]|(?:^|[;\n}])\s*import\s*['"]([^'"]+)['"]/g;

// `import { type A, type B } from` is erased by the build like `import type`.
function typeOnlyBraces(clause) {
  const braces = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((part) => part.startsWith('type '));
}

function importsOf(file) {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const targets = new Set();
  for (const match of text.matchAll(STATEMENT)) {
    if (match[1] && (match[2] || typeOnlyBraces(match[3]))) continue;
    const specifier = match[4] ?? match[5];
    if (!specifier.startsWith('.')) continue;
    let target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
    if (!target.endsWith('.ts')) target += '.ts';
    if (!existsSync(target) && existsSync(target.replace(/\.ts$/, '/index.ts')))
      target = target.replace(/\.ts$/, '/index.ts');
    if (existsSync(target)) targets.add(target);
  }
  return [...targets];
}

const files = listFiles(root).sort();
const graph = new Map(files.map((file) => [file, importsOf(file)]));

// Tarjan's strongly connected components: every component of more than one file (or a file that
// imports itself) holds at least one cycle.
let index = 0;
const indices = new Map();
const lowLinks = new Map();
const stack = [];
const onStack = new Set();
const components = [];
function connect(node) {
  indices.set(node, index);
  lowLinks.set(node, index);
  index++;
  stack.push(node);
  onStack.add(node);
  for (const next of graph.get(node) ?? []) {
    if (!indices.has(next)) {
      connect(next);
      lowLinks.set(node, Math.min(lowLinks.get(node), lowLinks.get(next)));
    } else if (onStack.has(next)) {
      lowLinks.set(node, Math.min(lowLinks.get(node), indices.get(next)));
    }
  }
  if (lowLinks.get(node) === indices.get(node)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
  }
}
for (const file of files) if (!indices.has(file)) connect(file);

// One concrete cycle per component, found by a breadth-first search back to its first file.
function cycleIn(component) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [node];
        for (let at = previous.get(node); at !== null; at = previous.get(at)) path.unshift(at);
        return [...path, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

const name = (file) => relative(process.cwd(), file).split('\\').join('/');
if (components.length === 0) {
  console.log(`check-cycles: no import cycle among ${files.length} files`);
  process.exit(0);
}
console.error(`check-cycles: ${components.length} import cycle(s)`);
for (const component of components) {
  console.error(`  ${cycleIn(component).map(name).join(' -> ')}`);
  if (component.length > 2)
    console.error(`    (${component.length} files involved: ${component.map(name).sort().join(', ')})`);
}
process.exit(1);
