import { describe, expect, it } from 'vitest';
import {
  ErrorMessage,
  ToolCallRequest,
  ToolCallResponse,
  ToolDefinition,
  ToolEvent,
  ToolListRequest,
  ToolListResponse,
  ToolParameter,
  ToolResult,
  newId,
} from '../../src/protocol/index.js';

// The spec's "Wire Examples", verbatim.
const WIRE = {
  listReq:
    '{"type":"tool/list/req","id":"a1b2c3","version":"1.0","ts":1716123456.789,"filter_kind":"","filter_tags":[]}',
  listResp:
    '{"type":"tool/list/resp","id":"d4e5f6","version":"1.0","ts":1716123456.800,"req_id":"a1b2c3","tools":[{"name":"read_file","description":"Read file contents","input_parameters":[{"name":"path","type":"string","description":"File path","required":true}],"output_parameters":[],"streaming":true,"idempotent":true,"tags":["fs"],"version":"1.0.0","toolkit":null}]}',
  callReq:
    '{"type":"tool/call/req","id":"g7h8i9","version":"1.0","ts":1716123457.100,"session_id":"s1k2l3","tool_name":"read_file","arguments":{"path":"/etc/hostname"},"correlation_id":"","streaming":true,"timeout":30}',
  event:
    '{"type":"tool/event","id":"j0k1l2","version":"1.0","ts":1716123457.150,"kind":"progress","req_id":"g7h8i9","data":{"pct":50,"message":"Reading..."},"seq":0}',
  callResp:
    '{"type":"tool/call/resp","id":"m3n4o5","version":"1.0","ts":1716123457.200,"req_id":"g7h8i9","data":{"success":true,"tool_name":"read_file","data":{"content":"my-host"},"duration_ms":100},"created_at":1716123457.200}',
} as const;

const cases = [
  ['tool/list/req', WIRE.listReq, ToolListRequest],
  ['tool/list/resp', WIRE.listResp, ToolListResponse],
  ['tool/call/req', WIRE.callReq, ToolCallRequest],
  ['tool/event', WIRE.event, ToolEvent],
  ['tool/call/resp', WIRE.callResp, ToolCallResponse],
] as const;

describe('wire examples', () => {
  it.each(cases)('%s parses, keeps every field unchanged, and round-trips', (_name, wire, schema) => {
    const original = JSON.parse(wire);
    const parsed = (schema as typeof ToolEvent).parse(original);
    // Nothing the sender wrote is lost or altered…
    expect(parsed).toMatchObject(original);
    // …and what we send back parses to exactly the same message.
    const reparsed = (schema as typeof ToolEvent).parse(JSON.parse(JSON.stringify(parsed)));
    expect(reparsed).toEqual(parsed);
  });

  it('fills the spec defaults for what the examples leave out', () => {
    const list = ToolListRequest.parse(JSON.parse(WIRE.listReq));
    expect(list.query).toBe('');
    expect(list.include_deferred).toBe(false);

    const tool = ToolListResponse.parse(JSON.parse(WIRE.listResp)).tools[0]!;
    expect(tool.defer_loading).toBe(false);
    expect(tool.kind).toBe('native');
    expect(tool.input_parameters[0]).toEqual({
      name: 'path',
      type: 'string',
      description: 'File path',
      required: true,
      enum: null,
      properties: null,
    });

    const result = ToolCallResponse.parse(JSON.parse(WIRE.callResp)).data;
    expect(result).toEqual({
      success: true,
      tool_name: 'read_file',
      data: { content: 'my-host' },
      summary: null,
      truncated: false,
      exit_code: null,
      error: null,
      error_code: null,
      duration_ms: 100,
      events: [],
    });
  });
});

describe('message defaults', () => {
  it('fills a missing id (UUID), ts (Unix seconds, float), version and type', () => {
    const before = Date.now() / 1000;
    const req = ToolCallRequest.parse({ tool_name: 'echo', arguments: {} });
    expect(req.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(req.ts).toBeGreaterThanOrEqual(before - 1);
    expect(req.ts).toBeLessThan(before + 60);
    expect(req).toMatchObject({
      type: 'tool/call/req',
      version: '1.0',
      session_id: '',
      correlation_id: '',
      streaming: false,
      timeout: 30,
    });
    // two messages get two ids
    expect(ToolCallRequest.parse({ tool_name: 'echo', arguments: {} }).id).not.toBe(req.id);
  });

  it('requires tool_name and arguments on a call, and rejects a wrong type', () => {
    expect(ToolCallRequest.safeParse({ arguments: {} }).success).toBe(false);
    expect(ToolCallRequest.safeParse({ tool_name: 'x' }).success).toBe(false);
    expect(ToolCallRequest.safeParse({ type: 'tool/list/req', tool_name: 'x', arguments: {} }).success).toBe(false);
    expect(ToolCallRequest.safeParse({ tool_name: 'x', arguments: {}, timeout: 1.5 }).success).toBe(false);
  });

  it('ToolResult requires success, tool_name and duration_ms', () => {
    expect(ToolResult.safeParse({ success: true, tool_name: 't' }).success).toBe(false);
    expect(
      ToolResult.parse({ success: false, tool_name: 't', duration_ms: 0, error: 'x', error_code: 'tool_error' }),
    ).toMatchObject({
      events: [],
      truncated: false,
    });
  });

  it('ToolDefinition fills its defaults, with kind as the one extension', () => {
    expect(ToolDefinition.parse({ name: 'x', description: 'd' })).toEqual({
      name: 'x',
      description: 'd',
      input_parameters: [],
      output_parameters: [],
      streaming: true,
      idempotent: false,
      tags: [],
      version: '1.0.0',
      toolkit: null,
      defer_loading: false,
      kind: 'native',
    });
  });

  it('ToolParameter nests properties and enums', () => {
    const p = ToolParameter.parse({
      name: 'opts',
      type: 'object',
      description: 'options',
      properties: {
        mode: { name: 'mode', type: 'string', description: 'mode', enum: ['fast', 'slow'], required: true },
        inner: {
          name: 'inner',
          type: 'object',
          description: 'deeper',
          properties: { n: { name: 'n', type: 'integer', description: 'n' } },
        },
      },
    });
    expect(p.properties!.mode!.enum).toEqual(['fast', 'slow']);
    expect(p.properties!.inner!.properties!.n!.type).toBe('integer');
    expect(ToolParameter.safeParse({ name: 'x', type: 'date', description: '' }).success).toBe(false);
  });

  it('ToolEvent carries the four data shapes', () => {
    const shapes = {
      progress: { pct: 10, message: 'a' },
      status: { message: 'b' },
      artifact: { name: 'out.txt', mime: 'text/plain', chunk: 'abc', final: false },
      log: { level: 'info', message: 'c' },
    };
    for (const [kind, data] of Object.entries(shapes)) {
      expect(ToolEvent.parse({ kind, data, seq: 1 })).toMatchObject({
        type: 'tool/event',
        kind,
        data,
        seq: 1,
        req_id: '',
      });
    }
    expect(ToolEvent.safeParse({ kind: 'progress', data: {}, seq: -1 }).success).toBe(false);
  });

  it('the error message follows the A2E base error', () => {
    const e = ErrorMessage.parse({ code: 'unknown_tool', message: 'no tool named "x"' });
    expect(Object.keys(e).sort()).toEqual([
      'capability_name',
      'code',
      'detail',
      'id',
      'message',
      'req_id',
      'retryable',
      'ts',
      'type',
      'version',
    ]);
    expect(e).toMatchObject({
      type: 'error',
      version: '1.0',
      req_id: '',
      capability_name: '',
      detail: {},
      retryable: false,
    });
  });
});

describe('newId', () => {
  it('makes distinct random v4 UUIDs, across refills of its random pool', () => {
    const ids = Array.from({ length: 1000 }, () => newId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // All 16 hex digits show up as the first digit: the bytes are random, not a constant or a counter.
    const digits = new Set(ids.map((id) => id[0]));
    expect(digits.size).toBe(16);
  });
});
