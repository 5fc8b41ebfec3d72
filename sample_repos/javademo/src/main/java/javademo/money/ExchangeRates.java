package javademo.money;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.EnumMap;
import java.util.Map;

/** Exchange rates against one base currency, and conversion between any two known currencies. */
public final class ExchangeRates {
    private final Currency base;
    private final Map<Currency, BigDecimal> perBase = new EnumMap<>(Currency.class);

    /** @param base the currency all rates are quoted against */
    public ExchangeRates(Currency base) {
        this.base = base;
        perBase.put(base, BigDecimal.ONE);
    }

    /**
     * Sets how many units of {@code currency} one unit of the base buys.
     *
     * @param currency the quoted currency
     * @param rate a positive rate
     * @return this
     */
    public ExchangeRates setRate(Currency currency, String rate) {
        BigDecimal r = new BigDecimal(rate);
        if (r.signum() <= 0) {
            throw new IllegalArgumentException("rate must be positive: " + rate);
        }
        perBase.put(currency, r);
        return this;
    }

    /**
     * The rate from one currency to another, through the base.
     *
     * @param from the source currency
     * @param to the target currency
     * @return units of {@code to} per unit of {@code from}
     */
    public BigDecimal rate(Currency from, Currency to) {
        BigDecimal f = known(from);
        BigDecimal t = known(to);
        return t.divide(f, MathContext.DECIMAL64);
    }

    /**
     * Converts an amount, rounding half-even to the target's minor units.
     *
     * @param amount the amount
     * @param to the target currency
     * @return the converted amount
     */
    public Money convert(Money amount, Currency to) {
        if (amount.currency() == to) {
            return amount;
        }
        BigDecimal major = amount.toDecimal().multiply(rate(amount.currency(), to));
        BigDecimal scaled = major.setScale(to.decimals(), RoundingMode.HALF_EVEN);
        return Money.ofMinor(scaled.unscaledValue().longValueExact(), to);
    }

    /**
     * Adds amounts of any known currencies into one currency.
     *
     * @param to the currency of the total
     * @param amounts the amounts
     * @return the total
     */
    public Money total(Currency to, Money... amounts) {
        Money sum = Money.ofMinor(0, to);
        for (Money m : amounts) {
            sum = sum.plus(convert(m, to));
        }
        return sum;
    }

    /** @return the base currency */
    public Currency base() {
        return base;
    }

    private BigDecimal known(Currency c) {
        BigDecimal r = perBase.get(c);
        if (r == null) {
            throw new IllegalArgumentException("no rate for " + c);
        }
        return r;
    }
}
