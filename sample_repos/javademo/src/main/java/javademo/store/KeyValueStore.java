package javademo.store;

import java.util.Optional;

/**
 * A mutable map-like store.
 *
 * @param <K> key type
 * @param <V> value type
 */
public interface KeyValueStore<K, V> {
    /**
     * @param key the key
     * @return the value, or empty
     */
    Optional<V> get(K key);

    /**
     * Stores a value.
     *
     * @param key the key
     * @param value the value, not null
     * @return the previous value, or empty
     */
    Optional<V> put(K key, V value);

    /**
     * @param key the key
     * @return the removed value, or empty
     */
    Optional<V> remove(K key);

    /** @return the number of entries */
    int size();

    /**
     * @param key the key
     * @return true when the key has a value
     */
    default boolean containsKey(K key) {
        return get(key).isPresent();
    }

    /**
     * @param key the key
     * @param fallback returned when the key is absent
     * @return the value or the fallback
     */
    default V getOrDefault(K key, V fallback) {
        return get(key).orElse(fallback);
    }
}
