// A partner's JUnit 5 test against the billing sandbox's image with Testcontainers' GenericContainer:
// the wait, a fresh partner's credentials, a token, one call, a webhook to a receiver on this machine,
// and the events asserted through GET /_sandbox/events instead. HTTP is the JDK's own (java.net.http,
// com.sun.net.httpserver); a regex reads the few JSON fields (use your JSON library instead).
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

@Testcontainers
class BillingSandboxTest {
  static final HttpClient HTTP = HttpClient.newHttpClient();

  String baseUrl;
  String token;

  // #region setup
  @Container
  static final GenericContainer<?> SANDBOX =
      new GenericContainer<>(DockerImageName.parse(System.getProperty("billingSandboxImage", "billing-sandbox:latest")))
          .withExposedPorts(4010)
          .withCommand("--rate-limit", "0", "--allow-http-webhooks")
          .withExtraHost("host.docker.internal", "host-gateway") // the receiver below, on this machine
          .waitingFor(Wait.forHttp("/_sandbox/health").forPort(4010).forStatusCode(200));

  /** A fresh partner per test (POST /_sandbox/partners), then a token for its production key. */
  @BeforeEach
  void partner() throws Exception {
    baseUrl = "http://" + SANDBOX.getHost() + ":" + SANDBOX.getMappedPort(4010);
    String made = send("POST", "/_sandbox/partners", "{\"name\":\"junit\"}", null);
    String production = made.substring(made.indexOf("\"production\""));
    String basic = Base64.getEncoder().encodeToString((field(production, "client_id") + ":" + field(production, "client_secret")).getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> granted = HTTP.send(
        HttpRequest.newBuilder(URI.create(baseUrl + "/oauth/token"))
            .header("Authorization", "Basic " + basic)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString("grant_type=client_credentials"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, granted.statusCode());
    token = field(granted.body(), "access_token");
  }
  // #endregion setup

  @Test
  void createsAndReadsACustomer() throws Exception {
    String customer = send("POST", "/customers", "{\"name\":\"Acme Corp\",\"email\":\"ap@acme.test\"}", token);
    String id = field(customer, "id");
    assertEquals(id, field(send("GET", "/customers/" + id, null, token), "id"));
  }

  // #region tests
  @Test
  void deliversAWebhookToAReceiverOnThisMachine() throws Exception {
    BlockingQueue<String> received = new LinkedBlockingQueue<>();
    HttpServer receiver = HttpServer.create(new InetSocketAddress("0.0.0.0", 0), 0); // reachable from the container
    receiver.createContext("/hooks", exchange -> {
      received.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    receiver.start();
    try {
      String endpoint = "http://host.docker.internal:" + receiver.getAddress().getPort() + "/hooks";
      send("POST", "/webhooks", "{\"endpoint_url\":\"" + endpoint + "\",\"topic\":\"customer_created\"}", token);
      String id = field(send("POST", "/customers", "{\"name\":\"Globex\"}", token), "id");
      String delivery = received.poll(10, TimeUnit.SECONDS);
      assertEquals("customer_created", field(delivery, "topic"));
      assertEquals(id, field(delivery, "entity_id"));
    } finally {
      receiver.stop(0);
    }
  }

  @Test
  void assertsThroughTheEventsInsteadOfAReceiver() throws Exception {
    String id = field(send("POST", "/customers", "{\"name\":\"Initech\"}", token), "id");
    String events = send("GET", "/_sandbox/events?topic=customer_created&entity_id=" + id, null, token);
    assertTrue(events.contains("\"entity_id\":\"" + id + "\""), events);
  }
  // #endregion tests

  /** One call with JSON in and out; the access token names the account (the control plane's too). */
  String send(String method, String path, String json, String bearer) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(10))
        .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json))
        .header("Content-Type", "application/json");
    if (bearer != null) request.header("Authorization", "Bearer " + bearer);
    HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    assertTrue(response.statusCode() < 300, method + " " + path + " answered " + response.statusCode() + ": " + response.body());
    return response.body();
  }

  /** The first string field of that name. */
  static String field(String json, String name) {
    Matcher found = Pattern.compile("\"" + Pattern.quote(name) + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
    if (!found.find()) throw new AssertionError(name + " not in " + json);
    return found.group(1);
  }
}
