import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { confusableNameProblem } from '../../src/oauth/client-names.js';

const problem = (name: string, brand = 'Gantry') => confusableNameProblem(name, brand);

describe('names a self-registered client may not take (client-names.ts)', () => {
  it('refuses characters that hide or reorder text', () => {
    const hidden = [
      'Claude\u202Eedoc',
      'a\u200bb',
      'a\u200cb',
      'a\u200db',
      'a\u2060b',
      'a\ufeffb',
      'a\u200eb',
      'a\u200fb',
      'a\u061cb',
      'a\u2066b\u2069',
      'a\u202ab\u202c',
      'a\u00adb',
      'a\u3164b',
      'a\u2800b',
      'a\u{e000}b',
    ];
    for (const name of hidden) assert.match(problem(name) ?? '', /invisible or text-direction/, JSON.stringify(name));
  });

  it("refuses the operator's brand however it is spelled", () => {
    for (const name of [
      'Gantry',
      'Gantry Admin Console',
      'gantry',
      'GANTRY sync',
      'My Gantry',
      'MyGantry',
      'G a n t r y',
      'G.a.n.t.r.y Console',
      'Ｇａｎｔｒｙ',
      'Gántry',
      'Gantry-CLI',
    ])
      assert.match(problem(name) ?? '', /must not use the name Gantry/, name);
    assert.match(problem('АСМЕ Tools', 'Acme') ?? '', /must not use the name Acme/, 'all Cyrillic lookalikes');
    assert.match(problem('Acrne', 'Acme') ?? '', /must not use the name Acme/, 'rn for m');
    assert.equal(problem('Acme', 'Example Corp'), null, 'only the configured brand');
  });

  it('refuses claims of a check nobody made', () => {
    for (const name of [
      'Verified Agent',
      'Official Claude',
      'OFFICIAL',
      'Agent (verifіed)',
      'Agent ✓',
      'Agent ✔',
      'Agent ✅',
    ])
      assert.ok(problem(name), name);
  });

  it('refuses a word mixing Latin, Cyrillic and Greek letters', () => {
    for (const name of ['G\u0430ntry', 'Cl\u0430ude Code', 'P\u03b1yPal'])
      assert.match(problem(name) ?? '', /must not mix/, name);
  });

  it('accepts ordinary names, other scripts and words that merely contain the brand letters', () => {
    for (const name of [
      'Claude Code',
      'Gemini CLI MCP Client',
      'VS Code',
      'Cursor',
      'Café Agent',
      'Агент поддержки',
      'Ελληνικός πελάτης',
      'エージェント 1',
      'Pageantry Tools',
      'Lac Meadow',
      'Unverified Tool',
      'my-agent (v2)',
    ])
      assert.equal(problem(name, name === 'Lac Meadow' ? 'Acme' : 'Gantry'), null, name);
  });
});
