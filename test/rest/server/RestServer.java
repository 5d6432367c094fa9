/*
 * The REST catalog server of Floe's REST client tests: Apache Iceberg's own request handlers
 * (org.apache.iceberg.rest.CatalogHandlers, iceberg-core) and serializers (RESTObjectMapper)
 * over a JdbcCatalog (SQLite file) with S3FileIO on the test's S3 server, behind the JDK's
 * HttpServer on loopback. Only the routing and the error-to-status mapping are here; they follow
 * the REST spec (open-api/rest-catalog-open-api.yaml) and Iceberg's RESTCatalogAdapter.
 *
 * Settings (environment): REST_PORT (0 = any; the port is printed as "listening <port>"),
 * REST_WAREHOUSE (s3://bucket/prefix), REST_S3_ENDPOINT, REST_DB (SQLite file), REST_PREFIX
 * (returned by GET /v1/config and required in every other path), REST_CLIENT_ID and
 * REST_CLIENT_SECRET (when set: POST /v1/oauth/tokens hands out a token that every other request
 * must carry as a bearer token).
 */
package org.apache.iceberg.rest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;

public class RestServer {
  private static final ObjectMapper MAPPER = RESTObjectMapper.mapper();

  private final JdbcCatalog catalog = new JdbcCatalog();
  private final String prefix;
  private final String clientId;
  private final String clientSecret;
  private final String token = UUID.randomUUID().toString();

  RestServer(Map<String, String> env) {
    Map<String, String> props = new HashMap<>();
    props.put("uri", "jdbc:sqlite:" + env.get("REST_DB"));
    props.put("warehouse", env.get("REST_WAREHOUSE"));
    props.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    props.put("s3.endpoint", env.get("REST_S3_ENDPOINT"));
    props.put("s3.path-style-access", "true");
    // s3rver stores aws-chunked bodies as they are and never answers a chunked upload correctly.
    props.put("s3.chunked-encoding-enabled", "false");
    props.put("s3.access-key-id", env.getOrDefault("AWS_ACCESS_KEY_ID", "S3RVER"));
    props.put("s3.secret-access-key", env.getOrDefault("AWS_SECRET_ACCESS_KEY", "S3RVER"));
    props.put("client.region", env.getOrDefault("AWS_REGION", "us-east-1"));
    catalog.initialize("rest_backend", props);
    this.prefix = env.getOrDefault("REST_PREFIX", "");
    this.clientId = env.get("REST_CLIENT_ID");
    this.clientSecret = env.get("REST_CLIENT_SECRET");
  }

  public static void main(String[] args) throws IOException {
    RestServer server = new RestServer(System.getenv());
    int port = Integer.parseInt(System.getenv().getOrDefault("REST_PORT", "0"));
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
    http.createContext("/", server::handle);
    http.start(); // one dispatcher thread: requests are served one at a time, as SQLite prefers
    System.out.println("listening " + http.getAddress().getPort());
    System.out.flush();
  }

  private void handle(HttpExchange ex) throws IOException {
    int status;
    Object body;
    try {
      String method = ex.getRequestMethod();
      String[] parts = Arrays.stream(ex.getRequestURI().getRawPath().split("/")).filter(s -> !s.isEmpty()).map(RestServer::decode).toArray(String[]::new);
      String payload = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      if (parts.length == 3 && parts[1].equals("oauth") && parts[2].equals("tokens")) {
        Map<String, String> form = RESTUtil.decodeFormData(payload);
        if (clientId == null || !clientId.equals(form.get("client_id")) || !clientSecret.equals(form.get("client_secret"))) {
          reply(ex, 401, Map.of("error", "invalid_client"));
          return;
        }
        reply(ex, 200, Map.of("access_token", token, "token_type", "bearer", "issued_token_type", "urn:ietf:params:oauth:token-type:access_token", "expires_in", 3600));
        return;
      }
      if (clientId != null && !("Bearer " + token).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
        throw new NotAuthorized("missing or wrong bearer token");
      }
      body = route(method, parts, payload);
      status = body == null ? 204 : 200;
    } catch (Exception e) {
      status = statusOf(e);
      body = ErrorResponse.builder().responseCode(status).withType(e.getClass().getSimpleName()).withMessage(String.valueOf(e.getMessage())).build();
    }
    reply(ex, status, body);
  }

  private Object route(String method, String[] p, String payload) throws IOException {
    if (p.length == 2 && p[1].equals("config") && method.equals("GET")) {
      // HashMaps: the response serializer probes the maps with null keys, which Map.of refuses.
      Map<String, String> defaults = new HashMap<>();
      defaults.put("floe.test.default", "yes");
      Map<String, String> overrides = new HashMap<>();
      if (!prefix.isEmpty()) overrides.put("prefix", prefix);
      return ConfigResponse.builder().withDefaults(defaults).withOverrides(overrides).build();
    }
    int at = 1;
    if (!prefix.isEmpty()) {
      if (p.length < 2 || !p[1].equals(prefix)) throw new NotFound("unknown prefix in path " + String.join("/", p));
      at = 2;
    }
    List<String> r = Arrays.asList(p).subList(at, p.length);
    if (r.isEmpty() || !r.get(0).equals("namespaces")) throw new NotFound("no route " + method + " " + String.join("/", p));
    if (r.size() == 1 && method.equals("GET")) return CatalogHandlers.listNamespaces(catalog, Namespace.empty());
    if (r.size() == 1 && method.equals("POST")) return CatalogHandlers.createNamespace(catalog, MAPPER.readValue(payload, CreateNamespaceRequest.class));
    Namespace ns = Namespace.of(r.get(1).split("\u001f"));
    if (r.size() == 2 && method.equals("GET")) return CatalogHandlers.loadNamespace(catalog, ns);
    if (r.size() == 3 && r.get(2).equals("tables") && method.equals("GET")) return CatalogHandlers.listTables(catalog, ns);
    if (r.size() == 3 && r.get(2).equals("tables") && method.equals("POST")) return CatalogHandlers.createTable(catalog, ns, MAPPER.readValue(payload, CreateTableRequest.class));
    if (r.size() == 4 && r.get(2).equals("tables")) {
      TableIdentifier id = TableIdentifier.of(ns, r.get(3));
      switch (method) {
        case "GET": return CatalogHandlers.loadTable(catalog, id, RESTCatalogProperties.SnapshotMode.ALL);
        case "POST": return CatalogHandlers.updateTable(catalog, id, MAPPER.readValue(payload, UpdateTableRequest.class));
        case "DELETE": CatalogHandlers.dropTable(catalog, id); return null;
        default: break;
      }
    }
    throw new NotFound("no route " + method + " " + String.join("/", p));
  }

  /** The REST spec's status for each Iceberg exception (as Iceberg's RESTCatalogAdapter maps them). */
  private static int statusOf(Exception e) {
    if (e instanceof NotFound || e instanceof NoSuchTableException || e instanceof NoSuchNamespaceException) return 404;
    if (e instanceof NotAuthorized) return 401;
    if (e instanceof AlreadyExistsException || e instanceof CommitFailedException || e instanceof NamespaceNotEmptyException) return 409;
    if (e instanceof CommitStateUnknownException) return 500;
    if (e instanceof ValidationException || e instanceof IllegalArgumentException || e instanceof IOException) return 400;
    return 500;
  }

  private static void reply(HttpExchange ex, int status, Object body) throws IOException {
    byte[] bytes = body == null ? new byte[0] : MAPPER.writeValueAsBytes(body);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) ex.getResponseBody().write(bytes);
    ex.close();
  }

  private static String decode(String segment) {
    return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  static class NotFound extends RuntimeException {
    NotFound(String message) { super(message); }
  }

  static class NotAuthorized extends RuntimeException {
    NotAuthorized(String message) { super(message); }
  }
}
