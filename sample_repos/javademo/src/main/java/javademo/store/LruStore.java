package javademo.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A bounded store that evicts the least recently used entry, on its own doubly linked list.
 *
 * @param <K> key type
 * @param <V> value type
 */
public class LruStore<K, V> implements KeyValueStore<K, V> {
    /** A list node; an inner class, so it shares the store's type parameters. */
    private final class Node {
        final K key;
        V value;
        Node prev;
        Node next;

        Node(K key, V value) {
            this.key = key;
            this.value = value;
        }
    }

    private final int capacity;
    private final Map<K, Node> index = new HashMap<>();
    private Node head;
    private Node tail;
    private int evictions;

    /** @param capacity the maximum number of entries, positive */
    public LruStore(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.capacity = capacity;
    }

    @Override
    public Optional<V> get(K key) {
        Node n = index.get(key);
        if (n == null) {
            return Optional.empty();
        }
        moveToFront(n);
        return Optional.of(n.value);
    }

    @Override
    public Optional<V> put(K key, V value) {
        Objects.requireNonNull(value, "value");
        Node n = index.get(key);
        if (n != null) {
            V old = n.value;
            n.value = value;
            moveToFront(n);
            return Optional.of(old);
        }
        n = new Node(key, value);
        index.put(key, n);
        linkFront(n);
        if (index.size() > capacity) {
            Node victim = tail;
            unlink(victim);
            index.remove(victim.key);
            evictions++;
        }
        return Optional.empty();
    }

    @Override
    public Optional<V> remove(K key) {
        Node n = index.remove(key);
        if (n == null) {
            return Optional.empty();
        }
        unlink(n);
        return Optional.of(n.value);
    }

    @Override
    public int size() {
        return index.size();
    }

    /** @return how many entries were evicted so far */
    public int evictions() {
        return evictions;
    }

    /**
     * The keys from most to least recently used.
     *
     * @return the keys in recency order
     */
    public List<K> keysByRecency() {
        List<K> keys = new ArrayList<>();
        for (Node n = head; n != null; n = n.next) {
            keys.add(n.key);
        }
        return keys;
    }

    private void moveToFront(Node n) {
        if (n != head) {
            unlink(n);
            linkFront(n);
        }
    }

    private void linkFront(Node n) {
        n.prev = null;
        n.next = head;
        if (head != null) {
            head.prev = n;
        }
        head = n;
        if (tail == null) {
            tail = n;
        }
    }

    private void unlink(Node n) {
        if (n.prev != null) {
            n.prev.next = n.next;
        } else {
            head = n.next;
        }
        if (n.next != null) {
            n.next.prev = n.prev;
        } else {
            tail = n.prev;
        }
        n.prev = null;
        n.next = null;
    }
}
