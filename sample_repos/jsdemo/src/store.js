// An event emitter and a reducer store with subscriptions, middleware and undo.

/** A minimal event emitter: `on` returns a function that unsubscribes. */
export class Emitter {
  #handlers = new Map();

  on(event, handler) {
    if (typeof handler !== 'function') {
      throw new TypeError('handler must be a function');
    }
    if (!this.#handlers.has(event)) {
      this.#handlers.set(event, []);
    }
    this.#handlers.get(event).push(handler);
    return () => this.off(event, handler);
  }

  once(event, handler) {
    const wrapper = (...args) => {
      this.off(event, wrapper);
      return handler(...args);
    };
    return this.on(event, wrapper);
  }

  off(event, handler) {
    const handlers = this.#handlers.get(event);
    if (!handlers) {
      return false;
    }
    const index = handlers.indexOf(handler);
    if (index === -1) {
      return false;
    }
    handlers.splice(index, 1);
    if (handlers.length === 0) {
      this.#handlers.delete(event);
    }
    return true;
  }

  /** Call every handler of `event` (and of `'*'`, with the event name first); returns how many ran. */
  emit(event, ...args) {
    const handlers = [...(this.#handlers.get(event) ?? [])];
    const wildcard = event === '*' ? [] : [...(this.#handlers.get('*') ?? [])];
    for (const handler of handlers) {
      handler(...args);
    }
    for (const handler of wildcard) {
      handler(event, ...args);
    }
    return handlers.length + wildcard.length;
  }

  listenerCount(event) {
    return this.#handlers.get(event)?.length ?? 0;
  }

  get eventNames() {
    return [...this.#handlers.keys()];
  }
}

const INIT = '@@jsdemo/INIT';

/** A store holds one state value that only actions, through the reducer, can change. */
export class Store {
  #reducer;
  #state;
  #listeners = new Set();
  #past = [];
  #historyLimit;
  #dispatching = false;
  #version = 0;

  constructor(reducer, initialState, { historyLimit = 10 } = {}) {
    if (typeof reducer !== 'function') {
      throw new TypeError('reducer must be a function');
    }
    this.#reducer = reducer;
    this.#historyLimit = historyLimit;
    this.#state = reducer(initialState, { type: INIT });
  }

  get state() {
    return this.#state;
  }

  get version() {
    return this.#version;
  }

  get canUndo() {
    return this.#past.length > 0;
  }

  dispatch(action) {
    if (!action || typeof action.type !== 'string') {
      throw new TypeError('an action must be an object with a string `type`');
    }
    if (this.#dispatching) {
      throw new Error('reducers may not dispatch actions');
    }
    let next;
    this.#dispatching = true;
    try {
      next = this.#reducer(this.#state, action);
    } finally {
      this.#dispatching = false;
    }
    this.#version += 1;
    if (next !== this.#state) {
      this.#past.push(this.#state);
      if (this.#past.length > this.#historyLimit) {
        this.#past.shift();
      }
      this.#commit(next);
    }
    return action;
  }

  #commit(next) {
    const previous = this.#state;
    this.#state = next;
    for (const listener of [...this.#listeners]) {
      listener(next, previous);
    }
  }

  subscribe(listener) {
    this.#listeners.add(listener);
    let active = true;
    return () => {
      if (!active) return false;
      active = false;
      return this.#listeners.delete(listener);
    };
  }

  undo() {
    if (!this.canUndo) {
      return false;
    }
    this.#commit(this.#past.pop());
    return true;
  }

  select(selector, ...args) {
    return selector(this.#state, ...args);
  }
}

export const createStore = (reducer, initialState, options) => new Store(reducer, initialState, options);

/** Combine a reducer per key into one reducer over an object with those keys. */
export function combineReducers(reducers) {
  const keys = Object.keys(reducers);
  return (state = {}, action) => {
    let changed = false;
    const next = {};
    for (const key of keys) {
      next[key] = reducers[key](state[key], action);
      changed ||= next[key] !== state[key];
    }
    return changed ? next : state;
  };
}

/** An action creator: `creator(payload)` builds the action, `creator.type` names it. */
export function createAction(type, prepare = (payload) => ({ payload })) {
  const creator = (...args) => ({ type, ...prepare(...args) });
  creator.type = type;
  creator.match = (action) => action?.type === type;
  creator.toString = () => type;
  return creator;
}

/** Build a reducer from a map of action type to case reducer. */
export function createReducer(initialState, handlers) {
  return (state = initialState, action) => {
    const handler = handlers[action.type];
    return handler ? handler(state, action) : state;
  };
}

/**
 * Wrap `store.dispatch` with middleware `(api) => (next) => (action) => ...`, the first
 * middleware outermost. Returns the store.
 */
export function applyMiddleware(store, ...middlewares) {
  const original = store.dispatch.bind(store);
  let dispatch = () => {
    throw new Error('dispatching while middleware is being set up');
  };
  const api = { getState: () => store.state, dispatch: (action) => dispatch(action) };
  dispatch = middlewares
    .map((middleware) => middleware(api))
    .reduceRight((next, wrap) => wrap(next), original);
  store.dispatch = dispatch;
  return store;
}

/** Middleware that records every action and the state after it with `log(entry)`. */
export const logger = (log) => (api) => (next) => (action) => {
  const before = api.getState();
  const result = next(action);
  log({ type: action.type, before, after: api.getState() });
  return result;
};
