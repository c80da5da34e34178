package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.Value;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

class JsonValuesTest {
  @Test
  void roundTripsNestedValues() {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("s", "text");
    nested.put("n", 2.5);
    nested.put("i", 7L);
    nested.put("b", true);
    nested.put("null", null);
    nested.put("list", Arrays.asList(1L, "two", null, List.of()));
    nested.put("map", Map.of("k", false));
    assertEquals(nested, JsonValues.fromValue(JsonValues.toValue(nested)));
  }

  @Test
  void integralNumbersComeBackAsLong() {
    assertEquals(5L, JsonValues.fromValue(Value.newBuilder().setNumberValue(5).build()));
    assertEquals(-0.5, JsonValues.fromValue(Value.newBuilder().setNumberValue(-0.5).build()));
    assertEquals(1e300, JsonValues.fromValue(Value.newBuilder().setNumberValue(1e300).build()));
  }

  @Test
  void javaNumbersBecomeDoubles() {
    assertEquals(3.0, JsonValues.toValue(3).getNumberValue());
    assertEquals(1.5, JsonValues.toValue(1.5f).getNumberValue());
    assertEquals(9007199254740992.0, JsonValues.toValue(1L << 53).getNumberValue());
  }

  @Test
  void refusesWhatJsonCannotCarry() {
    assertThrows(IllegalArgumentException.class, () -> JsonValues.toValue(Double.NaN));
    assertThrows(IllegalArgumentException.class, () -> JsonValues.toValue(Double.POSITIVE_INFINITY));
    assertThrows(IllegalArgumentException.class, () -> JsonValues.toValue((1L << 53) + 1));
    assertThrows(IllegalArgumentException.class, () -> JsonValues.toValue(new Object()));
    assertThrows(IllegalArgumentException.class, () -> JsonValues.toValue(Map.of(1, "a")));
  }

  @Test
  void refusesEveryIntegerBeyondTwoToThe53() {
    LongAdder adder = new LongAdder();
    adder.add((1L << 53) + 1);
    for (Number n : List.<Number>of(
        Long.MIN_VALUE,
        Long.MAX_VALUE,
        -(1L << 53) - 1,
        new BigDecimal("9007199254740993"),
        new BigDecimal("1E+400"),
        new BigDecimal("-9007199254740993.000"),
        BigInteger.ONE.shiftLeft(64),
        new AtomicLong(Long.MIN_VALUE),
        adder)) {
      assertThrows(IllegalArgumentException.class, () -> JsonValues.toValue(n), n::toString);
    }
    assertEquals(-9007199254740992.0, JsonValues.toValue(-(1L << 53)).getNumberValue());
    assertEquals(0.25, JsonValues.toValue(new BigDecimal("0.25")).getNumberValue());
    assertEquals(42.0, JsonValues.toValue(new AtomicLong(42)).getNumberValue());
    assertEquals(7.0, JsonValues.toValue(new BigDecimal("7.000")).getNumberValue());
    assertThrows(IllegalArgumentException.class, () -> JsonValues.toValue(new BigDecimal("1e400").add(new BigDecimal("0.5"))));
  }

  @Test
  void namesTheBadElement() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JsonValues.toListValue(List.of("ok", Map.of("x", new Object()))));
    assertEquals(true, e.getMessage().startsWith("[1]: [\"x\"]: not a JSON value"), e.getMessage());
  }

  @Test
  void unsetValueIsNull() {
    assertEquals(null, JsonValues.fromValue(Value.getDefaultInstance()));
  }
}
