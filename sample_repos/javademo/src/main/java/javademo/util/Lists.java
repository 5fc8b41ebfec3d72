package javademo.util;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/** Generic list helpers. */
public final class Lists {
    private Lists() {
    }

    /**
     * Splits a list into consecutive chunks.
     *
     * @param items the list
     * @param size the chunk size, positive
     * @param <T> element type
     * @return the chunks; the last may be shorter
     */
    public static <T> List<List<T>> chunk(List<T> items, int size) {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive");
        }
        List<List<T>> out = new ArrayList<>();
        for (int i = 0; i < items.size(); i += size) {
            out.add(new ArrayList<>(items.subList(i, Math.min(items.size(), i + size))));
        }
        return out;
    }

    /**
     * Pairs elements up to the shorter list's length.
     *
     * @param as first list
     * @param bs second list
     * @param <A> first type
     * @param <B> second type
     * @return the pairs
     */
    public static <A, B> List<Pair<A, B>> zip(List<A> as, List<B> bs) {
        int n = Math.min(as.size(), bs.size());
        List<Pair<A, B>> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(Pair.of(as.get(i), bs.get(i)));
        }
        return out;
    }

    /**
     * Groups elements by a key, keeping first-seen key order.
     *
     * @param items the elements
     * @param key the key function
     * @param <T> element type
     * @param <K> key type
     * @return the groups
     */
    public static <T, K> Map<K, List<T>> groupBy(Collection<T> items, Function<? super T, ? extends K> key) {
        Map<K, List<T>> out = new LinkedHashMap<>();
        for (T item : items) {
            out.computeIfAbsent(key.apply(item), k -> new ArrayList<>()).add(item);
        }
        return out;
    }

    /**
     * The largest element.
     *
     * @param items the elements
     * @param <T> a comparable element type
     * @return the maximum, or empty for no elements
     */
    public static <T extends Comparable<? super T>> Optional<T> max(Collection<? extends T> items) {
        T best = null;
        for (T item : items) {
            if (best == null || item.compareTo(best) > 0) {
                best = item;
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * Flattens one level of nesting.
     *
     * @param lists the lists
     * @param <T> element type
     * @return all elements in order
     */
    public static <T> List<T> flatten(List<? extends List<? extends T>> lists) {
        List<T> out = new ArrayList<>();
        for (List<? extends T> l : lists) {
            out.addAll(l);
        }
        return out;
    }

    /**
     * Splits elements by a predicate.
     *
     * @param items the elements
     * @param test the predicate
     * @param <T> element type
     * @return (matching, not matching)
     */
    public static <T> Pair<List<T>, List<T>> partition(Collection<T> items, Predicate<? super T> test) {
        List<T> yes = new ArrayList<>();
        List<T> no = new ArrayList<>();
        for (T item : items) {
            (test.test(item) ? yes : no).add(item);
        }
        return Pair.of(Collections.unmodifiableList(yes), Collections.unmodifiableList(no));
    }
}
