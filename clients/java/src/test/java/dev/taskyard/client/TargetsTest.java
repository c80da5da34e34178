package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TargetsTest {
  @Test
  void findsTheHost() {
    assertEquals("gw.example.com", Targets.host("gw.example.com:50051"));
    assertEquals("::1", Targets.host("[::1]:50051"));
    assertEquals("localhost", Targets.host("dns:///localhost:50051"));
    assertEquals("gw", Targets.host("gw"));
  }

  @Test
  void loopbackWithoutResolvingNames() {
    assertTrue(Targets.isLoopback("localhost:50051"));
    assertTrue(Targets.isLoopback("127.0.0.2:50051"));
    assertTrue(Targets.isLoopback("[::1]:50051"));
    assertFalse(Targets.isLoopback("10.0.0.1:50051"));
    assertFalse(Targets.isLoopback("cafe:50051"));
  }

  @Test
  void refusesATokenInPlaintextToARemoteHost() {
    assertThrows(
        IllegalArgumentException.class,
        () -> TaskyardClient.builder("gw.example.com:50051").plaintext().token("secret-token").build());
  }
}
