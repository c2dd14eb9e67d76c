import { describe, expect, it } from 'vitest';
import { JsonText, parseOnRead } from '../../src/utils/json-text.js';

describe('parseOnRead (a result whose data is JSON text, parsed when read)', () => {
  const holder = () => ({ success: true, data: null as unknown, summary: null });

  it('serialises as if the parsed value were there, in the same key order, and reads the parsed value', () => {
    const r = holder();
    parseOnRead(r, 'data', new JsonText('{"a":[1,2],"b":"x"}'));
    expect(JSON.stringify(r)).toBe('{"success":true,"data":{"a":[1,2],"b":"x"},"summary":null}');
    expect(Object.keys(r)).toEqual(['success', 'data', 'summary']);
    expect(r.data).toEqual({ a: [1, 2], b: 'x' });
    // Read once, it is a plain data property holding the same value.
    expect(r.data).toBe(r.data);
    expect(Object.getOwnPropertyDescriptor(r, 'data')).toMatchObject({
      writable: true,
      enumerable: true,
      configurable: true,
    });
  });

  it('keeps its text out of sight: no enumerable symbol, nothing extra when spread or copied', () => {
    const r = holder();
    parseOnRead(r, 'data', new JsonText(Buffer.from('[1]')));
    expect(Object.getOwnPropertySymbols(r).every((s) => !Object.getOwnPropertyDescriptor(r, s)!.enumerable)).toBe(true);
    expect({ ...r }).toEqual({ success: true, data: [1], summary: null });
    expect(Object.getOwnPropertySymbols({ ...r })).toEqual([]);
  });

  it('takes a value written before any read, and each holder keeps its own text', () => {
    const a = holder();
    const b = holder();
    parseOnRead(a, 'data', new JsonText('1'));
    parseOnRead(b, 'data', new JsonText('2'));
    a.data = 'replaced';
    expect(a.data).toBe('replaced');
    expect(b.data).toBe(2);
    expect(JSON.stringify(a)).toBe('{"success":true,"data":"replaced","summary":null}');
  });
});
