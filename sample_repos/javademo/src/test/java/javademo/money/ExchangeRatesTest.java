package javademo.money;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ExchangeRatesTest {
    private ExchangeRates rates;

    @BeforeEach
    void setUp() {
        rates = new ExchangeRates(Currency.USD)
                .setRate(Currency.EUR, "0.90")
                .setRate(Currency.JPY, "150")
                .setRate(Currency.GBP, "0.75");
    }

    @Test
    void directAndCrossRates() {
        assertEquals(0, new BigDecimal("0.9").compareTo(rates.rate(Currency.USD, Currency.EUR)));
        assertEquals(0, new BigDecimal("200").compareTo(rates.rate(Currency.GBP, Currency.JPY)));
        assertEquals(Currency.USD, rates.base());
    }

    @Test
    void convertsWithRounding() {
        assertEquals(Money.of("9.00", Currency.EUR), rates.convert(Money.of(10, Currency.USD), Currency.EUR));
        assertEquals(Money.of(1666, Currency.JPY), rates.convert(Money.of("11.11", Currency.USD), Currency.JPY));
        assertEquals(Money.of("6.67", Currency.USD), rates.convert(Money.of(1000, Currency.JPY), Currency.USD));
    }

    @Test
    void sameCurrencyIsReturnedAsIs() {
        Money m = Money.of(5, Currency.EUR);
        assertSame(m, rates.convert(m, Currency.EUR));
    }

    @Test
    void totalsMixedAmounts() {
        Money total = rates.total(Currency.USD,
                Money.of(10, Currency.USD), Money.of("9.00", Currency.EUR), Money.of(300, Currency.JPY));
        assertEquals(Money.of(22, Currency.USD), total);
        assertEquals(Money.ofMinor(0, Currency.GBP), rates.total(Currency.GBP));
    }

    @Test
    void unknownCurrencyFails() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> rates.convert(Money.of(1, Currency.BHD), Currency.USD));
        assertEquals("no rate for BHD", e.getMessage());
    }

    @Test
    void rejectsNonPositiveRate() {
        assertThrows(IllegalArgumentException.class, () -> rates.setRate(Currency.BHD, "0"));
        assertThrows(IllegalArgumentException.class, () -> rates.setRate(Currency.BHD, "-2"));
    }
}
