package javademo.money;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Arrays;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class MoneyTest {
    private static Money usd(String s) {
        return Money.of(s, Currency.USD);
    }

    @Test
    void parsesAndRoundsHalfEven() {
        assertEquals(1234, usd("12.34").minor());
        assertEquals(12, usd("0.125").minor());
        assertEquals(14, usd("0.135").minor());
        assertEquals(6, Money.of("5.5", Currency.JPY).minor());
    }

    @Test
    void wholeUnits() {
        assertEquals(700, Money.of(7, Currency.USD).minor());
        assertEquals(7000, Money.of(7, Currency.BHD).minor());
        assertEquals(new BigDecimal("7.000"), Money.of(7, Currency.BHD).toDecimal());
    }

    @Test
    void arithmetic() {
        assertEquals(usd("15.75"), usd("10.50").plus(usd("5.25")));
        assertEquals(usd("5.25"), usd("10.50").minus(usd("5.25")));
        assertEquals(usd("-3.00"), usd("3").negate());
        assertEquals(usd("31.50"), usd("10.50").times(3));
    }

    @Test
    void multiplyByDecimalRounds() {
        assertEquals(usd("11.90"), usd("10.00").times(new BigDecimal("1.19")));
        assertEquals(usd("0.02"), usd("0.05").times(new BigDecimal("0.5")));
        assertEquals(usd("0.08"), usd("0.15").times(new BigDecimal("0.5")));
    }

    @Test
    void mixingCurrenciesFails() {
        Money eur = Money.of(1, Currency.EUR);
        assertThrows(CurrencyMismatchException.class, () -> usd("1").plus(eur));
        assertThrows(CurrencyMismatchException.class, () -> usd("1").minus(eur));
        CurrencyMismatchException e =
                assertThrows(CurrencyMismatchException.class, () -> usd("1").compareTo(eur));
        assertEquals("currency mismatch: USD vs EUR", e.getMessage());
    }

    @Test
    void signPredicates() {
        assertTrue(usd("-0.01").isNegative());
        assertFalse(usd("0.01").isNegative());
        assertTrue(usd("0").isZero());
        assertFalse(usd("0.01").isZero());
    }

    @Test
    void ordering() {
        Money[] sorted = {usd("3"), usd("-1"), usd("2.5")};
        Arrays.sort(sorted);
        assertArrayEquals(new Money[] {usd("-1"), usd("2.5"), usd("3")}, sorted);
        assertEquals(0, usd("1").compareTo(usd("1.00")));
    }

    @Test
    void equality() {
        assertEquals(usd("1.5"), Money.ofMinor(150, Currency.USD));
        assertEquals(usd("1.5").hashCode(), Money.ofMinor(150, Currency.USD).hashCode());
        assertNotEquals(Money.ofMinor(150, Currency.USD), Money.ofMinor(150, Currency.EUR));
        assertNotEquals(Money.ofMinor(150, Currency.USD), "USD 1.50");
    }

    @Test
    void textForms() {
        assertEquals("USD 1234.50", usd("1234.5").toString());
        assertEquals("JPY 500", Money.of(500, Currency.JPY).toString());
    }

    @Nested
    class Formatting {
        @Test
        void groupsThousands() {
            assertEquals("$1,234,567.89", usd("1234567.89").format());
            assertEquals("$999.00", usd("999").format());
            assertEquals("$1,000.00", usd("1000").format());
        }

        @Test
        void negativeAndZeroDecimalCurrencies() {
            assertEquals("-$1,234.50", usd("-1234.5").format());
            assertEquals("\u00a512,345", Money.of(12345, Currency.JPY).format());
        }
    }

    @Nested
    class Allocation {
        @Test
        void splitsEvenlyWithRemainderFirst() {
            Money[] parts = usd("1.00").allocate(1, 1, 1);
            assertArrayEquals(new Money[] {usd("0.34"), usd("0.33"), usd("0.33")}, parts);
        }

        @Test
        void splitsByRatio() {
            Money[] parts = usd("10.00").allocate(70, 20, 10);
            assertArrayEquals(new Money[] {usd("7.00"), usd("2.00"), usd("1.00")}, parts);
        }

        @Test
        void negativeAmountsKeepTheirSum() {
            Money[] parts = usd("-0.05").allocate(1, 1);
            assertArrayEquals(new Money[] {usd("-0.03"), usd("-0.02")}, parts);
        }

        @Test
        void zeroRatioGetsNothing() {
            Money[] parts = usd("0.05").allocate(0, 1);
            assertArrayEquals(new Money[] {usd("0"), usd("0.05")}, parts);
        }

        @Test
        void rejectsBadRatios() {
            assertThrows(IllegalArgumentException.class, () -> usd("1").allocate());
            assertThrows(IllegalArgumentException.class, () -> usd("1").allocate(1, -1));
            assertThrows(IllegalArgumentException.class, () -> usd("1").allocate(0, 0));
        }
    }
}
