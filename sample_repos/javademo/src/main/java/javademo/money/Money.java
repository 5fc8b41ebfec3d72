package javademo.money;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Objects;

/** An immutable amount of money held as a whole number of minor units. */
public final class Money implements Comparable<Money> {
    private final long minor;
    private final Currency currency;

    private Money(long minor, Currency currency) {
        this.minor = minor;
        this.currency = Objects.requireNonNull(currency);
    }

    /**
     * Creates an amount from minor units.
     *
     * @param minor amount in minor units (cents)
     * @param currency the currency
     * @return the amount
     */
    public static Money ofMinor(long minor, Currency currency) {
        return new Money(minor, currency);
    }

    /**
     * Parses a decimal amount such as {@code "12.34"}, rounding half-even to the currency's digits.
     *
     * @param amount the decimal text
     * @param currency the currency
     * @return the amount
     */
    public static Money of(String amount, Currency currency) {
        BigDecimal d = new BigDecimal(amount.trim());
        BigDecimal scaled = d.setScale(currency.decimals(), RoundingMode.HALF_EVEN);
        return new Money(scaled.unscaledValue().longValueExact(), currency);
    }

    /**
     * Creates an amount from a whole number of major units.
     *
     * @param major whole units
     * @param currency the currency
     * @return the amount
     */
    public static Money of(long major, Currency currency) {
        return new Money(Math.multiplyExact(major, currency.minorPerMajor()), currency);
    }

    /** @return the amount in minor units */
    public long minor() {
        return minor;
    }

    /** @return the currency */
    public Currency currency() {
        return currency;
    }

    /** @return the amount as a decimal */
    public BigDecimal toDecimal() {
        return BigDecimal.valueOf(minor, currency.decimals());
    }

    /**
     * Adds an amount of the same currency.
     *
     * @param other the amount to add
     * @return the sum
     */
    public Money plus(Money other) {
        requireSameCurrency(other);
        return new Money(Math.addExact(minor, other.minor), currency);
    }

    /**
     * Subtracts an amount of the same currency.
     *
     * @param other the amount to subtract
     * @return the difference
     */
    public Money minus(Money other) {
        requireSameCurrency(other);
        return new Money(Math.subtractExact(minor, other.minor), currency);
    }

    /**
     * Multiplies by a factor, rounding half-even to a whole minor unit.
     *
     * @param factor such as {@code "1.19"}
     * @return the product
     */
    public Money times(BigDecimal factor) {
        BigDecimal product = BigDecimal.valueOf(minor).multiply(factor);
        long rounded = product.setScale(0, RoundingMode.HALF_EVEN).longValueExact();
        return new Money(rounded, currency);
    }

    /**
     * Multiplies by a whole number.
     *
     * @param factor the multiplier
     * @return the product
     */
    public Money times(long factor) {
        return new Money(Math.multiplyExact(minor, factor), currency);
    }

    /** @return the amount with its sign flipped */
    public Money negate() {
        return new Money(Math.negateExact(minor), currency);
    }

    /** @return true when the amount is below zero */
    public boolean isNegative() {
        return minor < 0;
    }

    /** @return true when the amount is exactly zero */
    public boolean isZero() {
        return minor == 0;
    }

    /**
     * Splits this amount by ratios without losing a minor unit: the remainder goes,
     * one unit each, to the first shares.
     *
     * @param ratios positive weights
     * @return one amount per ratio, summing to this amount
     */
    public Money[] allocate(int... ratios) {
        if (ratios.length == 0) {
            throw new IllegalArgumentException("no ratios");
        }
        long total = 0;
        for (int r : ratios) {
            if (r < 0) {
                throw new IllegalArgumentException("negative ratio " + r);
            }
            total += r;
        }
        if (total == 0) {
            throw new IllegalArgumentException("ratios sum to zero");
        }
        long[] shares = new long[ratios.length];
        long remainder = minor;
        for (int i = 0; i < ratios.length; i++) {
            shares[i] = minor * ratios[i] / total;
            remainder -= shares[i];
        }
        for (int i = 0; remainder != 0; i = (i + 1) % shares.length) {
            long step = remainder > 0 ? 1 : -1;
            shares[i] += step;
            remainder -= step;
        }
        Money[] out = new Money[shares.length];
        for (int i = 0; i < shares.length; i++) {
            out[i] = new Money(shares[i], currency);
        }
        return out;
    }

    /**
     * Formats with the currency symbol and thousands separators, e.g. {@code -$1,234.50}.
     *
     * @return the display text
     */
    public String format() {
        String digits = toDecimal().abs().toPlainString();
        int dot = digits.indexOf('.');
        String whole = dot < 0 ? digits : digits.substring(0, dot);
        String frac = dot < 0 ? "" : digits.substring(dot);
        StringBuilder grouped = new StringBuilder();
        for (int i = 0; i < whole.length(); i++) {
            if (i > 0 && (whole.length() - i) % 3 == 0) {
                grouped.append(',');
            }
            grouped.append(whole.charAt(i));
        }
        return (isNegative() ? "-" : "") + currency.symbol() + grouped + frac;
    }

    private void requireSameCurrency(Money other) {
        if (other.currency != currency) {
            throw new CurrencyMismatchException(currency, other.currency);
        }
    }

    @Override
    public int compareTo(Money o) {
        requireSameCurrency(o);
        return Long.compare(minor, o.minor);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Money)) {
            return false;
        }
        Money m = (Money) o;
        return minor == m.minor && currency == m.currency;
    }

    @Override
    public int hashCode() {
        return Objects.hash(minor, currency);
    }

    @Override
    public String toString() {
        return currency.name() + " " + toDecimal().toPlainString();
    }
}
