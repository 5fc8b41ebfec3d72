// A typed event emitter: the event map fixes each event's argument list.

export type EventMap = Record<string, unknown[]>;
export type Listener<Args extends unknown[]> = (...args: Args) => void;

export interface Subscription {
  unsubscribe(): boolean;
  readonly active: boolean;
}

export class TypedEmitter<Events extends EventMap> {
  private readonly listeners = new Map<keyof Events, Set<Listener<any>>>();
  private emitted = 0;

  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): Subscription {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    const owner = set;
    return {
      unsubscribe: () => this.off(event, listener),
      get active() {
        return owner.has(listener);
      },
    };
  }

  once<K extends keyof Events>(event: K, listener: Listener<Events[K]>): Subscription {
    const subscription = this.on(event, (...args: Events[K]) => {
      subscription.unsubscribe();
      listener(...args);
    });
    return subscription;
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): boolean {
    const set = this.listeners.get(event);
    if (!set?.delete(listener)) {
      return false;
    }
    if (set.size === 0) {
      this.listeners.delete(event);
    }
    return true;
  }

  emit<K extends keyof Events>(event: K, ...args: Events[K]): number {
    const set = this.listeners.get(event);
    if (!set) {
      return 0;
    }
    this.emitted += 1;
    for (const listener of [...set]) {
      listener(...args);
    }
    return set.size;
  }

  /** Resolve with the arguments of the next `event`, or reject after `timeoutMs`. */
  waitFor<K extends keyof Events>(event: K, timeoutMs?: number): Promise<Events[K]> {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const sub = this.once(event, (...args) => {
        clearTimeout(timer);
        resolve(args);
      });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          sub.unsubscribe();
          reject(new Error(`timed out waiting for "${String(event)}"`));
        }, timeoutMs);
      }
    });
  }

  listenerCount(event: keyof Events): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  get emitCount(): number {
    return this.emitted;
  }

  removeAll(event?: keyof Events): void {
    if (event === undefined) {
      this.listeners.clear();
    } else {
      this.listeners.delete(event);
    }
  }
}
