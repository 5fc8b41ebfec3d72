package javademo.money;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class CurrencyTest {
    @Test
    void minorUnitsPerMajor() {
        assertEquals(100, Currency.USD.minorPerMajor());
        assertEquals(1, Currency.JPY.minorPerMajor());
        assertEquals(1000, Currency.BHD.minorPerMajor());
    }

    @Test
    void lookupByCodeIgnoresCaseAndBlanks() {
        assertEquals(Currency.EUR, Currency.fromCode(" eur "));
        assertEquals(Currency.JPY, Currency.fromCode("JPY"));
    }

    @Test
    void unknownCodeFails() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Currency.fromCode("XYZ"));
        assertEquals("unknown currency: XYZ", e.getMessage());
    }

    @Test
    void symbolsAndDecimals() {
        assertEquals("\u00a3", Currency.GBP.symbol());
        assertEquals(3, Currency.BHD.decimals());
    }
}
