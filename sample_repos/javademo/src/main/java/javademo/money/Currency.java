package javademo.money;

/** The currencies the money package knows, with their minor-unit digits and symbols. */
public enum Currency {
    USD(2, "$"),
    EUR(2, "\u20ac"),
    GBP(2, "\u00a3"),
    JPY(0, "\u00a5"),
    BHD(3, "BD");

    private final int decimals;
    private final String symbol;

    Currency(int decimals, String symbol) {
        this.decimals = decimals;
        this.symbol = symbol;
    }

    /** @return the number of digits after the decimal point */
    public int decimals() {
        return decimals;
    }

    /** @return the display symbol */
    public String symbol() {
        return symbol;
    }

    /**
     * How many minor units make one major unit (100 for cents).
     *
     * @return ten to the power of {@link #decimals()}
     */
    public long minorPerMajor() {
        long f = 1;
        for (int i = 0; i < decimals; i++) {
            f *= 10;
        }
        return f;
    }

    /**
     * Finds a currency by its ISO code, ignoring case and surrounding blanks.
     *
     * @param code such as {@code "usd"}
     * @return the currency
     * @throws IllegalArgumentException for an unknown code
     */
    public static Currency fromCode(String code) {
        String c = code.trim().toUpperCase(java.util.Locale.ROOT);
        for (Currency cur : values()) {
            if (cur.name().equals(c)) {
                return cur;
            }
        }
        throw new IllegalArgumentException("unknown currency: " + code);
    }
}
