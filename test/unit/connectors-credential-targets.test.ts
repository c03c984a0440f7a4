import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { boundTo, credentialTargetOf } from '../../src/connectors/credentials.js';

describe('what connector credentials are bound to (N-L3)', () => {
  it('is the url origin and path, without the query', () => {
    assert.equal(credentialTargetOf('https://mcp.example.com/u/alice/mcp?v=2'), 'https://mcp.example.com/u/alice/mcp');
    assert.equal(credentialTargetOf('https://mcp.example.com'), 'https://mcp.example.com/');
    assert.equal(credentialTargetOf('HTTPS://MCP.example.com:443/mcp'), 'https://mcp.example.com/mcp');
    assert.equal(credentialTargetOf('ftp://mcp.example.com/x'), null);
    assert.equal(credentialTargetOf('not a url'), null);
  });

  it('admits the same server only; a binding stored as an origin alone still admits its origin', () => {
    const bound = 'https://mcp.example.com/u/alice/mcp';
    assert.equal(boundTo(bound, 'https://mcp.example.com/u/alice/mcp?x=1'), true);
    assert.equal(boundTo(bound, 'https://mcp.example.com/u/mallory/mcp'), false);
    assert.equal(boundTo(bound, 'https://evil.example/u/alice/mcp'), false);
    assert.equal(boundTo('https://mcp.example.com', 'https://mcp.example.com/anything'), true);
    assert.equal(boundTo('https://mcp.example.com', 'https://evil.example/anything'), false);
  });
});
