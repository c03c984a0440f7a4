#!/usr/bin/env node
// The picture of the house in docs/architecture.md: dependency-cruiser's own Mermaid output of
// src/, each folder collapsed to one box. `npm run architecture` writes it between the markers;
// test/unit/architecture-rules.test.ts fails when the committed picture is not the current one.
//   node scripts/architecture.mjs           rewrites docs/architecture.md
//   node scripts/architecture.mjs --print   prints the picture
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const DOC = path.join(root, 'docs', 'architecture.md');
const BEGIN = '<!-- dependency-cruiser graph: begin (npm run architecture) -->';
const END = '<!-- dependency-cruiser graph: end -->';

/** The Mermaid flowchart of src/, folder by folder. */
export function architectureGraph() {
  const depcruise = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  return execFileSync(
    process.execPath,
    [
      depcruise,
      'src',
      '--config',
      '.dependency-cruiser.cjs',
      '--include-only',
      '^src/',
      '--collapse',
      '^src/[^/]+/',
      '--output-type',
      'mermaid',
    ],
    { cwd: root, encoding: 'utf8' },
  ).trim();
}

/** docs/architecture.md with `graph` between the markers. */
export function withGraph(doc, graph) {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/architecture.md has no ${BEGIN} ... ${END} markers`);
  return `${doc.slice(0, start + BEGIN.length)}\n\`\`\`mermaid\n${graph}\n\`\`\`\n${doc.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = architectureGraph();
  if (process.argv.includes('--print')) console.log(graph);
  else writeFileSync(DOC, withGraph(readFileSync(DOC, 'utf8'), graph));
}
