package javademo.money;

/** Thrown when two amounts of different currencies are combined. */
public class CurrencyMismatchException extends RuntimeException {
    /**
     * @param a the first currency
     * @param b the second currency
     */
    public CurrencyMismatchException(Currency a, Currency b) {
        super("currency mismatch: " + a + " vs " + b);
    }
}
