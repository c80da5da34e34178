package dev.taskyard.client;

import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Task arguments and results are JSON; this converts between plain Java values and protobuf's
 * {@link Value}, {@link ListValue} and {@link Struct}.
 *
 * <p>To JSON: {@code null}, {@link Boolean}, {@link Number}, {@link CharSequence}, {@link
 * Character}, {@link Enum} (its name), {@link Map} with string keys, {@link Iterable}, {@code
 * Object[]}, and protobuf values as they are. Numbers travel as doubles, so NaN, infinities and
 * integers beyond 2<sup>53</sup> are refused rather than silently rounded.
 *
 * <p>From JSON: {@code null}, {@link Boolean}, {@link String}, {@link Long} for an integral
 * number within 2<sup>53</sup> (so {@code add(2, 3)} gives {@code 5L}), else {@link Double}, an
 * unmodifiable {@code List<Object>} and an unmodifiable, ordered {@code Map<String, Object>}.
 */
public final class JsonValues {
  /** The largest integer a double holds exactly. */
  private static final long MAX_SAFE_INTEGER = (1L << 53);

  private static final BigDecimal MAX_SAFE_DECIMAL = BigDecimal.valueOf(MAX_SAFE_INTEGER);

  private JsonValues() {}

  /**
   * A JSON value from a Java one.
   *
   * @throws IllegalArgumentException for a value that is not JSON (or a number JSON cannot carry)
   */
  public static Value toValue(Object value) {
    if (value == null) {
      return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
    }
    if (value instanceof Value v) {
      return v;
    }
    if (value instanceof Boolean b) {
      return Value.newBuilder().setBoolValue(b).build();
    }
    if (value instanceof Number n) {
      return Value.newBuilder().setNumberValue(toDouble(n)).build();
    }
    if (value instanceof CharSequence || value instanceof Character) {
      return Value.newBuilder().setStringValue(value.toString()).build();
    }
    if (value instanceof Enum<?> e) {
      return Value.newBuilder().setStringValue(e.name()).build();
    }
    if (value instanceof Map<?, ?> || value instanceof Struct) {
      return Value.newBuilder().setStructValue(toStruct(value)).build();
    }
    if (value instanceof Iterable<?> || value instanceof Object[] || value instanceof ListValue) {
      return Value.newBuilder().setListValue(toListValue(value)).build();
    }
    throw new IllegalArgumentException(
        "not a JSON value: " + value.getClass().getName() + " (use Map, List, String, Number, Boolean or null)");
  }

  /**
   * A JSON list from a Java {@link Iterable} or array (a {@link ListValue} is returned as is).
   *
   * @throws IllegalArgumentException for an element that is not JSON
   */
  public static ListValue toListValue(Object list) {
    if (list instanceof ListValue lv) {
      return lv;
    }
    Iterable<?> items;
    if (list instanceof Object[] array) {
      items = java.util.Arrays.asList(array);
    } else if (list instanceof Iterable<?> iterable) {
      items = iterable;
    } else {
      throw new IllegalArgumentException("not a JSON list: " + (list == null ? "null" : list.getClass().getName()));
    }
    ListValue.Builder out = ListValue.newBuilder();
    int i = 0;
    for (Object item : items) {
      try {
        out.addValues(toValue(item));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("[" + i + "]: " + e.getMessage(), e);
      }
      i++;
    }
    return out.build();
  }

  /**
   * A JSON object from a Java {@link Map} with string keys (a {@link Struct} is returned as is).
   *
   * @throws IllegalArgumentException for a key that is not a string or a value that is not JSON
   */
  public static Struct toStruct(Object map) {
    if (map instanceof Struct s) {
      return s;
    }
    if (!(map instanceof Map<?, ?> m)) {
      throw new IllegalArgumentException("not a JSON object: " + (map == null ? "null" : map.getClass().getName()));
    }
    Struct.Builder out = Struct.newBuilder();
    for (Map.Entry<?, ?> entry : m.entrySet()) {
      if (!(entry.getKey() instanceof String key)) {
        throw new IllegalArgumentException("JSON object keys must be strings, not " + entry.getKey());
      }
      try {
        out.putFields(key, toValue(entry.getValue()));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("[\"" + key + "\"]: " + e.getMessage(), e);
      }
    }
    return out.build();
  }

  /** The Java value of a JSON value; an unset value is {@code null}. */
  public static Object fromValue(Value value) {
    return switch (value.getKindCase()) {
      case BOOL_VALUE -> value.getBoolValue();
      case NUMBER_VALUE -> fromDouble(value.getNumberValue());
      case STRING_VALUE -> value.getStringValue();
      case LIST_VALUE -> fromListValue(value.getListValue());
      case STRUCT_VALUE -> fromStruct(value.getStructValue());
      case NULL_VALUE, KIND_NOT_SET -> null;
    };
  }

  /** The Java list of a JSON list (unmodifiable; elements may be null). */
  public static List<Object> fromListValue(ListValue list) {
    List<Object> out = new ArrayList<>(list.getValuesCount());
    for (Value v : list.getValuesList()) {
      out.add(fromValue(v));
    }
    return Collections.unmodifiableList(out);
  }

  /** The Java map of a JSON object (unmodifiable, in the order received; values may be null). */
  public static Map<String, Object> fromStruct(Struct struct) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<String, Value> entry : struct.getFieldsMap().entrySet()) {
      out.put(entry.getKey(), fromValue(entry.getValue()));
    }
    return Collections.unmodifiableMap(out);
  }

  private static double toDouble(Number n) {
    if (n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte
        || n instanceof AtomicInteger || n instanceof AtomicLong || n instanceof LongAdder) {
      // Not Math.abs: that of Long.MIN_VALUE is negative, and would pass.
      long l = n.longValue();
      if (l > MAX_SAFE_INTEGER || l < -MAX_SAFE_INTEGER) {
        throw beyondSafe(n);
      }
      return l;
    }
    if (n instanceof Double || n instanceof Float) {
      return finite(n.doubleValue(), n);
    }
    BigDecimal exact;
    if (n instanceof BigDecimal dec) {
      exact = dec;
    } else if (n instanceof BigInteger big) {
      exact = new BigDecimal(big);
    } else {
      // Any other Number (an accumulator, a library's own type): its decimal form, when it has one.
      try {
        exact = new BigDecimal(n.toString());
      } catch (NumberFormatException e) {
        return finite(n.doubleValue(), n);
      }
    }
    boolean integral = exact.signum() == 0 || exact.stripTrailingZeros().scale() <= 0;
    if (integral && exact.abs().compareTo(MAX_SAFE_DECIMAL) > 0) {
      throw beyondSafe(n);
    }
    return finite(exact.doubleValue(), n);
  }

  private static double finite(double d, Number n) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new IllegalArgumentException(n + " is not a JSON number");
    }
    return d;
  }

  private static IllegalArgumentException beyondSafe(Number n) {
    return new IllegalArgumentException(n + " is beyond 2^53: JSON numbers travel as doubles");
  }

  private static Object fromDouble(double d) {
    if (d == Math.rint(d) && Math.abs(d) <= MAX_SAFE_INTEGER && !(d == 0 && 1 / d < 0)) {
      return (long) d;
    }
    return d;
  }
}
