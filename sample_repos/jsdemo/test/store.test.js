import { describe, test, mock } from 'node:test';
import assert from 'node:assert/strict';

import {
  Emitter, Store, applyMiddleware, combineReducers, createAction, createReducer, createStore, logger,
} from '../src/store.js';

const counter = (state = 0, action) => {
  switch (action.type) {
    case 'inc': return state + (action.by ?? 1);
    case 'dec': return state - 1;
    default: return state;
  }
};

describe('Emitter', () => {
  test('on registers a handler that emit calls with the arguments', () => {
    const emitter = new Emitter();
    const seen = [];
    emitter.on('data', (a, b) => seen.push([a, b]));
    assert.equal(emitter.emit('data', 1, 2), 1);
    assert.deepEqual(seen, [[1, 2]]);
  });

  test('on rejects a handler that is not a function', () => {
    assert.throws(() => new Emitter().on('x', 'nope'), TypeError);
  });

  test('the function on returns unsubscribes', () => {
    const emitter = new Emitter();
    const handler = mock.fn();
    const unsubscribe = emitter.on('tick', handler);
    emitter.emit('tick');
    assert.equal(unsubscribe(), true);
    emitter.emit('tick');
    assert.equal(handler.mock.callCount(), 1);
  });

  test('once runs a handler a single time and passes its result through', () => {
    const emitter = new Emitter();
    const handler = mock.fn((x) => x * 2);
    emitter.once('go', handler);
    emitter.emit('go', 21);
    emitter.emit('go', 21);
    assert.equal(handler.mock.callCount(), 1);
    assert.equal(handler.mock.calls[0].result, 42);
    assert.equal(emitter.listenerCount('go'), 0);
  });

  test('off reports whether a handler was removed and forgets empty events', () => {
    const emitter = new Emitter();
    const a = () => {};
    const b = () => {};
    emitter.on('e', a);
    emitter.on('e', b);
    assert.equal(emitter.off('e', a), true);
    assert.equal(emitter.off('e', a), false);
    assert.equal(emitter.off('missing', a), false);
    assert.deepEqual(emitter.eventNames, ['e']);
    emitter.off('e', b);
    assert.deepEqual(emitter.eventNames, []);
  });

  test('emit calls wildcard handlers with the event name', () => {
    const emitter = new Emitter();
    const all = [];
    emitter.on('*', (...args) => all.push(args));
    emitter.on('save', () => {});
    assert.equal(emitter.emit('save', 'doc'), 2);
    assert.equal(emitter.emit('other'), 1);
    assert.deepEqual(all, [['save', 'doc'], ['other']]);
  });

  test('a handler removed while emitting still runs in that round', () => {
    const emitter = new Emitter();
    const calls = [];
    const second = () => calls.push('second');
    emitter.on('e', () => { calls.push('first'); emitter.off('e', second); });
    emitter.on('e', second);
    emitter.emit('e');
    emitter.emit('e');
    assert.deepEqual(calls, ['first', 'second', 'first']);
  });

  test('listenerCount and eventNames', () => {
    const emitter = new Emitter();
    emitter.on('a', () => {});
    emitter.on('a', () => {});
    emitter.on('b', () => {});
    assert.equal(emitter.listenerCount('a'), 2);
    assert.equal(emitter.listenerCount('zzz'), 0);
    assert.deepEqual(emitter.eventNames, ['a', 'b']);
  });
});

describe('Store', () => {
  test('starts from the reducer applied to the initial state', () => {
    const store = new Store(counter, 5);
    assert.equal(store.state, 5);
    assert.equal(createStore(counter).state, 0);
    assert.equal(store.version, 0);
  });

  test('requires a reducer function', () => {
    assert.throws(() => new Store(null), TypeError);
  });

  test('dispatch runs the reducer, counts actions and returns the action', () => {
    const store = createStore(counter, 0);
    const action = { type: 'inc', by: 2 };
    assert.equal(store.dispatch(action), action);
    store.dispatch({ type: 'noop' });
    assert.equal(store.state, 2);
    assert.equal(store.version, 2);
  });

  test('dispatch rejects actions without a string type', () => {
    const store = createStore(counter);
    assert.throws(() => store.dispatch({}), TypeError);
    assert.throws(() => store.dispatch(null), TypeError);
  });

  test('a reducer may not dispatch', () => {
    let store;
    const reducer = (state = 0, action) => {
      if (action.type === 'nested') store.dispatch({ type: 'inner' });
      return state;
    };
    store = createStore(reducer);
    assert.throws(() => store.dispatch({ type: 'nested' }), /may not dispatch/);
    assert.equal(store.dispatch({ type: 'after' }).type, 'after');
  });

  test('subscribers hear about changes only, with the previous state', () => {
    const store = createStore(counter, 0);
    const calls = [];
    store.subscribe((next, previous) => calls.push([next, previous]));
    store.dispatch({ type: 'inc' });
    store.dispatch({ type: 'noop' });
    store.dispatch({ type: 'inc' });
    assert.deepEqual(calls, [[1, 0], [2, 1]]);
  });

  test('unsubscribe works once', () => {
    const store = createStore(counter, 0);
    const listener = mock.fn();
    const unsubscribe = store.subscribe(listener);
    store.dispatch({ type: 'inc' });
    assert.equal(unsubscribe(), true);
    assert.equal(unsubscribe(), false);
    store.dispatch({ type: 'inc' });
    assert.equal(listener.mock.callCount(), 1);
  });

  test('undo restores earlier states and notifies', () => {
    const store = createStore(counter, 0);
    assert.equal(store.canUndo, false);
    assert.equal(store.undo(), false);
    store.dispatch({ type: 'inc' });
    store.dispatch({ type: 'inc' });
    const seen = [];
    store.subscribe((next) => seen.push(next));
    assert.equal(store.canUndo, true);
    assert.equal(store.undo(), true);
    assert.equal(store.state, 1);
    store.undo();
    assert.equal(store.state, 0);
    assert.deepEqual(seen, [1, 0]);
    assert.equal(store.canUndo, false);
  });

  test('the undo history is bounded', () => {
    const store = createStore(counter, 0, { historyLimit: 2 });
    for (let i = 0; i < 5; i += 1) store.dispatch({ type: 'inc' });
    assert.equal(store.undo(), true);
    assert.equal(store.undo(), true);
    assert.equal(store.undo(), false);
    assert.equal(store.state, 3);
  });

  test('select applies a selector to the state', () => {
    const store = createStore(counter, 4);
    assert.equal(store.select((state, k) => state * k, 10), 40);
  });
});

describe('reducer helpers', () => {
  test('combineReducers gives each key its own reducer', () => {
    const reducer = combineReducers({ a: counter, b: counter });
    const store = createStore(reducer, { a: 1 });
    assert.deepEqual(store.state, { a: 1, b: 0 });
    store.dispatch({ type: 'inc' });
    assert.deepEqual(store.state, { a: 2, b: 1 });
  });

  test('combineReducers keeps the same object when nothing changed', () => {
    const reducer = combineReducers({ a: counter });
    const state = { a: 3 };
    assert.equal(reducer(state, { type: 'noop' }), state);
    assert.notEqual(reducer(state, { type: 'inc' }), state);
  });

  test('createAction builds typed actions', () => {
    const add = createAction('todo/add');
    assert.deepEqual(add('milk'), { type: 'todo/add', payload: 'milk' });
    assert.equal(add.type, 'todo/add');
    assert.equal(`${add}`, 'todo/add');
    assert.equal(add.match({ type: 'todo/add' }), true);
    assert.equal(add.match({ type: 'other' }), false);
  });

  test('createAction with a prepare callback', () => {
    const move = createAction('move', (x, y) => ({ payload: { x, y }, meta: 'grid' }));
    assert.deepEqual(move(1, 2), { type: 'move', payload: { x: 1, y: 2 }, meta: 'grid' });
  });

  test('createReducer dispatches on the action type', () => {
    const add = createAction('add');
    const todos = createReducer([], { [add.type]: (state, action) => [...state, action.payload] });
    const store = createStore(todos);
    store.dispatch(add('a'));
    store.dispatch({ type: 'unknown' });
    store.dispatch(add('b'));
    assert.deepEqual(store.state, ['a', 'b']);
  });
});

describe('middleware', () => {
  test('applyMiddleware runs the first middleware outermost', () => {
    const order = [];
    const tag = (name) => () => (next) => (action) => {
      order.push(`${name}>`);
      const result = next(action);
      order.push(`<${name}`);
      return result;
    };
    const store = applyMiddleware(createStore(counter), tag('a'), tag('b'));
    store.dispatch({ type: 'inc' });
    assert.deepEqual(order, ['a>', 'b>', '<b', '<a']);
    assert.equal(store.state, 1);
  });

  test('middleware can dispatch through the whole chain', () => {
    const thunk = (api) => (next) => (action) =>
      typeof action === 'function' ? action(api.dispatch, api.getState) : next(action);
    const store = applyMiddleware(createStore(counter), thunk);
    store.dispatch((dispatch, getState) => {
      dispatch({ type: 'inc' });
      dispatch({ type: 'inc', by: getState() * 10 });
    });
    assert.equal(store.state, 11);
  });

  test('a middleware may not dispatch while being set up', () => {
    const eager = (api) => {
      api.dispatch({ type: 'inc' });
      return (next) => next;
    };
    assert.throws(() => applyMiddleware(createStore(counter), eager), /being set up/);
  });

  test('logger records each action with the state before and after', () => {
    const entries = [];
    const store = applyMiddleware(createStore(counter), logger((entry) => entries.push(entry)));
    const result = store.dispatch({ type: 'inc', by: 5 });
    assert.deepEqual(result, { type: 'inc', by: 5 });
    assert.deepEqual(entries, [{ type: 'inc', before: 0, after: 5 }]);
  });
});
