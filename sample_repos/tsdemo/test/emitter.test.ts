import { afterEach, describe, expect, it, vi } from 'vitest';

import { TypedEmitter } from '../src/emitter.js';

type Events = {
  message: [text: string, from: string];
  tick: [];
  count: [n: number];
};

afterEach(() => {
  vi.useRealTimers();
});

describe('TypedEmitter', () => {
  it('emits to listeners with typed arguments and counts them', () => {
    const emitter = new TypedEmitter<Events>();
    const seen: string[] = [];
    emitter.on('message', (text, from) => seen.push(`${from}: ${text}`));
    emitter.on('message', (text) => seen.push(text.toUpperCase()));
    expect(emitter.emit('message', 'hi', 'ada')).toBe(2);
    expect(seen).toEqual(['ada: hi', 'HI']);
  });

  it('emitting an event nobody listens to returns 0 and is not counted', () => {
    const emitter = new TypedEmitter<Events>();
    expect(emitter.emit('tick')).toBe(0);
    expect(emitter.emitCount).toBe(0);
    emitter.on('tick', () => {});
    emitter.emit('tick');
    emitter.emit('tick');
    expect(emitter.emitCount).toBe(2);
  });

  it('a subscription unsubscribes and reports whether it is active', () => {
    const emitter = new TypedEmitter<Events>();
    const listener = vi.fn();
    const sub = emitter.on('count', listener);
    expect(sub.active).toBe(true);
    emitter.emit('count', 1);
    expect(sub.unsubscribe()).toBe(true);
    expect(sub.active).toBe(false);
    expect(sub.unsubscribe()).toBe(false);
    emitter.emit('count', 2);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(listener).toHaveBeenCalledWith(1);
  });

  it('once listens a single time', () => {
    const emitter = new TypedEmitter<Events>();
    const listener = vi.fn();
    const sub = emitter.once('count', listener);
    emitter.emit('count', 1);
    emitter.emit('count', 2);
    expect(listener.mock.calls).toEqual([[1]]);
    expect(sub.active).toBe(false);
    expect(emitter.listenerCount('count')).toBe(0);
  });

  it('off removes one listener and forgets empty events', () => {
    const emitter = new TypedEmitter<Events>();
    const a = vi.fn();
    const b = vi.fn();
    emitter.on('tick', a);
    emitter.on('tick', b);
    expect(emitter.off('tick', a)).toBe(true);
    expect(emitter.off('tick', a)).toBe(false);
    expect(emitter.listenerCount('tick')).toBe(1);
    expect(emitter.off('tick', b)).toBe(true);
    expect(emitter.emit('tick')).toBe(0);
  });

  it('removeAll clears one event or every event', () => {
    const emitter = new TypedEmitter<Events>();
    emitter.on('tick', () => {});
    emitter.on('count', () => {});
    emitter.removeAll('tick');
    expect(emitter.listenerCount('tick')).toBe(0);
    expect(emitter.listenerCount('count')).toBe(1);
    emitter.removeAll();
    expect(emitter.listenerCount('count')).toBe(0);
  });

  it('waitFor resolves with the next emission', async () => {
    const emitter = new TypedEmitter<Events>();
    const next = emitter.waitFor('message', 1000);
    emitter.emit('message', 'ping', 'bob');
    await expect(next).resolves.toEqual(['ping', 'bob']);
    expect(emitter.listenerCount('message')).toBe(0);
  });

  it('waitFor rejects after the timeout and stops listening', async () => {
    vi.useFakeTimers();
    const emitter = new TypedEmitter<Events>();
    const next = emitter.waitFor('tick', 50);
    vi.advanceTimersByTime(60);
    await expect(next).rejects.toThrow('timed out waiting for "tick"');
    expect(emitter.listenerCount('tick')).toBe(0);
  });
});
