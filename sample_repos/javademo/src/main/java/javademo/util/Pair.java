package javademo.util;

import java.util.Objects;
import java.util.function.Function;

/**
 * An immutable pair.
 *
 * @param <A> first type
 * @param <B> second type
 */
public final class Pair<A, B> {
    private final A first;
    private final B second;

    private Pair(A first, B second) {
        this.first = first;
        this.second = second;
    }

    /**
     * @param first the first element
     * @param second the second element
     * @param <A> first type
     * @param <B> second type
     * @return the pair
     */
    public static <A, B> Pair<A, B> of(A first, B second) {
        return new Pair<>(first, second);
    }

    /** @return the first element */
    public A first() {
        return first;
    }

    /** @return the second element */
    public B second() {
        return second;
    }

    /** @return the pair with its elements swapped */
    public Pair<B, A> swap() {
        return new Pair<>(second, first);
    }

    /**
     * Maps both elements.
     *
     * @param f applied to the first element
     * @param g applied to the second element
     * @param <C> new first type
     * @param <D> new second type
     * @return the mapped pair
     */
    public <C, D> Pair<C, D> map(Function<? super A, ? extends C> f, Function<? super B, ? extends D> g) {
        C c = f.apply(first);
        D d = g.apply(second);
        return new Pair<>(c, d);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Pair)) {
            return false;
        }
        Pair<?, ?> p = (Pair<?, ?>) o;
        return Objects.equals(first, p.first) && Objects.equals(second, p.second);
    }

    @Override
    public int hashCode() {
        return Objects.hash(first, second);
    }

    @Override
    public String toString() {
        return "(" + first + ", " + second + ")";
    }
}
