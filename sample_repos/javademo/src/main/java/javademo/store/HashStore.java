package javademo.store;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An unbounded store over a hash map that counts hits and misses.
 *
 * @param <K> key type
 * @param <V> value type
 */
public class HashStore<K, V> implements KeyValueStore<K, V> {
    private final Map<K, V> map = new HashMap<>();
    private int hits;
    private int misses;

    @Override
    public Optional<V> get(K key) {
        V v = map.get(key);
        if (v == null) {
            misses++;
        } else {
            hits++;
        }
        return Optional.ofNullable(v);
    }

    @Override
    public Optional<V> put(K key, V value) {
        Objects.requireNonNull(value, "value");
        return Optional.ofNullable(map.put(key, value));
    }

    @Override
    public Optional<V> remove(K key) {
        return Optional.ofNullable(map.remove(key));
    }

    @Override
    public int size() {
        return map.size();
    }

    /** @return how many lookups found a value */
    public int hits() {
        return hits;
    }

    /** @return how many lookups found nothing */
    public int misses() {
        return misses;
    }

    /**
     * The share of lookups that found a value.
     *
     * @return between 0 and 1; 0 before any lookup
     */
    public double hitRatio() {
        int total = hits + misses;
        if (total == 0) {
            return 0;
        }
        return (double) hits / total;
    }
}
