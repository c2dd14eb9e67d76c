import { describe, expect, it } from 'vitest';
import { IdTable } from '../../src/utils/id-table.js';

describe('IdTable (values waiting for an answer, by id)', () => {
  it('gives each value an id that takes it back out, once', () => {
    const t = new IdTable<{ name: string }>();
    const a = { name: 'a' };
    const b = { name: 'b' };
    const ia = t.add(a);
    const ib = t.add(b);
    expect(ia).not.toBe(ib);
    expect(t.size).toBe(2);
    expect(t.get(ia)).toBe(a);
    expect(t.take(ia)).toBe(a);
    expect(t.take(ia)).toBeUndefined();
    expect(t.get(ia)).toBeUndefined();
    expect(t.size).toBe(1);
    expect(t.take(ib)).toBe(b);
    expect(t.size).toBe(0);
  });

  it('never gives an id that was taken to another value, though its slot is reused', () => {
    const t = new IdTable<object>();
    const seen = new Set<number>();
    let id = t.add({});
    for (let i = 0; i < 1000; i++) {
      seen.add(id);
      t.take(id);
      id = t.add({});
      expect(seen.has(id)).toBe(false);
    }
    // A late answer for an id already answered finds nothing, even though its slot holds a value now.
    for (const old of seen) expect(t.get(old)).toBeUndefined();
    expect(t.take([...seen][0]!)).toBeUndefined();
    expect(t.size).toBe(1);
  });

  it('answers nothing for ids it never made', () => {
    const t = new IdTable<object>();
    t.add({});
    for (const id of [1, 2, -1, 0.5, Number.NaN, 2 ** 21, 2 ** 53]) {
      expect(t.get(id)).toBeUndefined();
      expect(t.take(id)).toBeUndefined();
    }
    expect(t.size).toBe(1);
  });

  it('takes every waiting value out at once (a channel that closed)', () => {
    const t = new IdTable<{ n: number }>();
    const ids = [1, 2, 3, 4].map((n) => t.add({ n }));
    t.take(ids[1]!);
    expect(
      t
        .takeAll()
        .map((v) => v.n)
        .sort(),
    ).toEqual([1, 3, 4]);
    expect(t.size).toBe(0);
    for (const id of ids) expect(t.get(id)).toBeUndefined();
    // and the table goes on working
    const again = t.add({ n: 5 });
    expect(t.take(again)).toEqual({ n: 5 });
  });

  it('mirrors the ids another table made (the other end of a channel)', () => {
    const maker = new IdTable<object>();
    const mirror = new IdTable<{ id: number }>();
    const ids = [maker.add({}), maker.add({}), maker.add({})];
    for (const id of ids) mirror.set(id, { id });
    expect(mirror.size).toBe(3);
    expect(mirror.get(ids[2]!)).toEqual({ id: ids[2] });
    expect(mirror.take(ids[0]!)).toEqual({ id: ids[0] });
    // The maker reuses the slot only once it is answered; the mirror takes the new id there.
    maker.take(ids[0]!);
    const reused = maker.add({});
    mirror.set(reused, { id: reused });
    expect(mirror.get(reused)).toEqual({ id: reused });
    expect(mirror.get(ids[0]!)).toBeUndefined();
    // An id set while another waits in its slot is a broken protocol, said loudly.
    expect(() => mirror.set(reused + 2 ** 21, { id: 0 })).toThrow(/waits in its slot/);
    expect(() => mirror.set(-3, { id: -3 })).toThrow(/not an id/);
    // A mirror makes no ids of its own.
    expect(() => mirror.add({ id: 9 })).toThrow(/cannot make them/);
  });
});
