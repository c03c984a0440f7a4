import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { APPROVAL_INPUT_MAX_CHARS, approvalInputView } from '../../src/connectors/approval-input.js';

describe('approvalInputView', () => {
  it('masks writeOnly and password fields, nested, in arrays, through allOf/anyOf and additionalProperties', () => {
    const schema = {
      type: 'object',
      properties: {
        amount: { type: 'number' },
        token: { type: 'string', writeOnly: true },
        login: {
          type: 'object',
          properties: { user: { type: 'string' }, pin: { type: 'string', format: 'password' } },
        },
        keys: { type: 'array', items: { type: 'string', writeOnly: true } },
        extra: { anyOf: [{ type: 'string' }, { type: 'string', writeOnly: true }] },
        vault: { type: 'object', additionalProperties: { type: 'string', writeOnly: true } },
      },
      allOf: [{ properties: { otp: { type: 'string', writeOnly: true } } }],
    };
    const view = approvalInputView(schema, {
      amount: 5,
      token: 't',
      login: { user: 'u', pin: '1234' },
      keys: ['a', 'b'],
      extra: 'x',
      vault: { a: '1' },
      otp: '9',
      free: 'kept',
    });
    assert.deepEqual(view, {
      input: {
        amount: 5,
        token: '[redacted]',
        login: { user: 'u', pin: '[redacted]' },
        keys: ['[redacted]', '[redacted]'],
        extra: '[redacted]',
        vault: { a: '[redacted]' },
        otp: '[redacted]',
        free: 'kept',
      },
      inputTruncated: false,
    });
  });

  it('caps the size: a long input becomes the start of its JSON text', () => {
    const view = approvalInputView({ type: 'object' }, { note: 'x'.repeat(APPROVAL_INPUT_MAX_CHARS * 2) });
    assert.equal(view.inputTruncated, true);
    assert.equal(typeof view.input, 'string');
    assert.equal((view.input as string).length, APPROVAL_INPUT_MAX_CHARS);
    assert.ok((view.input as string).startsWith('{"note":"xxx'));
  });
});
