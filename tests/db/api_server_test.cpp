// The /v3 front door (SPEC §5) on a real socket and a real database: the
// checks in order (413 → 401 → 403 → 429 → 400 → 404), signatures over the
// raw target, replay protection in api_nonces, never a 500. Also the admin
// listener.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "config/log.hpp"
#include "domain/json.hpp"
#include "http/admin_server.hpp"
#include "http/api_server.hpp"
#include "http/rate_limiter.hpp"
#include "persistence/heartbeat_view.hpp"
#include "persistence/nonce_store.hpp"
#include "tests/support/api_client.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

namespace {

const std::string reader_secret = "reader-secret-0123456789";
const std::string creator_secret = "creator-secret-0123456789";

std::vector<api::api_key> test_keys() {
  return {{"reader", reader_secret, {api::scope::read}},
          {"creator", creator_secret, {api::scope::create, api::scope::read}}};
}

// What a handler saw, as JSON, so the tests can check it.
api::reply echo(const http::call& c) {
  std::string out = "{\"key_id\":" + json::quote(c.who.key_id) + ",\"params\":[";
  for (size_t i = 0; i < c.params.size(); ++i)
    out += (i ? "," : "") + json::quote(c.params[i]);
  out += "],\"raw_query\":" + json::quote(c.raw_query) + ",\"query\":[";
  bool first = true;
  for (const auto& [k, v] : c.query) {
    out += (first ? "[" : ",[") + json::quote(k) + "," + json::quote(v) + "]";
    first = false;
  }
  out += "],\"json\":" + json::dump(c.json) + "}";
  return {200, out, {}};
}

std::vector<http::route> test_routes() {
  return {
      {"GET", "/v3/things/{id}/sub/{name}", api::scope::read, false, echo},
      {"GET", "/v3/things", api::scope::read, false, echo},
      {"GET", "/v3/things/{id}/sub/literal", api::scope::read, false,
       [](const http::call&) {
         return api::reply{200, "{\"literal\":true}", {}};
       }},
      {"POST", "/v3/things/{id}", api::scope::create, true, echo},
      {"GET", "/v3/boom", api::scope::read, false,
       [](const http::call&) -> api::reply {
         throw std::runtime_error("handler exploded");
       }},
  };
}

long long now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One api_server on a free port, with its own pool on the test database.
struct front {
  front(const config::settings& s, const std::string& url)
      : pool(url, 2), services{pool, s, plans, {}, nullptr},
        server(s, test_keys(), services, test_routes()) {
    port = server.start("127.0.0.1:0");
  }
  db::connection_pool pool;
  db::plan_cache plans;
  services::service_context services;
  http::api_server server;
  int port = 0;

  test::api_client reader() { return {port, "reader", reader_secret}; }
  test::api_client creator() { return {port, "creator", creator_secret}; }
};

// Redirects fd 2 (where config/log writes) into a temp file while alive.
struct stderr_capture {
  stderr_capture() {
    std::fflush(stderr);
    saved = ::dup(2);
    file = std::tmpfile();
    ::dup2(::fileno(file), 2);
  }
  ~stderr_capture() {
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::fclose(file);
  }
  std::string text() {
    std::fflush(stderr);
    std::string out;
    std::rewind(file);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file)) > 0)
      out.append(buf, n);
    return out;
  }
  int saved;
  std::FILE* file;
};

json::document parse(const std::string& body) {
  auto d = json::parse(body);
  BOOST_REQUIRE_MESSAGE(d.has_value(), "not JSON: " << body);
  return std::move(*d);
}

// SPEC §5's error body with `code`, and the JSON content type.
void expect_error(const test::api_reply& r, int status, const std::string& code) {
  BOOST_TEST(r.status == status);
  BOOST_TEST(r.header("Content-Type") == "application/json");
  auto d = parse(r.body);
  BOOST_REQUIRE_MESSAGE(d.IsObject() && d.HasMember("error"), r.body);
  BOOST_TEST(json::get_string(d["error"], "code") == code);
  BOOST_TEST(d["error"].HasMember("message"));
  BOOST_TEST(d["error"]["details"].IsArray());
}

} // namespace

BOOST_AUTO_TEST_SUITE(api_server)

BOOST_FIXTURE_TEST_CASE(good_signature_reaches_handler_with_raw_params_and_query,
                        test::db_fixture) {
  front f(settings, url);
  auto r = f.reader().get("/v3/things/abc%2Fdef/sub/x%20y?q=a+b&q=c&flag");
  BOOST_TEST(r.status == 200);
  BOOST_TEST(r.header("Content-Type") == "application/json");
  auto d = parse(r.body);
  BOOST_TEST(json::get_string(d, "key_id") == "reader");
  BOOST_REQUIRE(d["params"].Size() == 2u);
  BOOST_TEST(std::string(d["params"][0].GetString()) == "abc%2Fdef"); // raw, as sent
  BOOST_TEST(std::string(d["params"][1].GetString()) == "x%20y");
  BOOST_TEST(json::get_string(d, "raw_query") == "q=a+b&q=c&flag");
  BOOST_TEST(json::dump(d["query"]) == R"([["flag",""],["q","a+b"],["q","c"]])");
  BOOST_TEST(json::dump(d["json"]) == "{}");
}

BOOST_FIXTURE_TEST_CASE(post_body_parsed_empty_body_is_empty_object, test::db_fixture) {
  front f(settings, url);
  auto c = f.creator();
  auto r = c.post("/v3/things/7", R"({"a": [1, "x"]})");
  BOOST_TEST(r.status == 200);
  auto d = parse(r.body);
  BOOST_TEST(json::dump(d["json"]) == R"({"a":[1,"x"]})");
  BOOST_TEST(json::get_string(d["params"][0], "") == "");
  auto empty = c.post("/v3/things/7", "");
  BOOST_TEST(empty.status == 200);
  BOOST_TEST(json::dump(parse(empty.body)["json"]) == "{}");
  // Content-Type is not required.
  test::request_options no_type;
  no_type.omit_headers = {"Content-Type"};
  BOOST_TEST(c.post("/v3/things/7", R"({"b": 2})", no_type).status == 200);
}

BOOST_FIXTURE_TEST_CASE(missing_auth_headers_401, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  for (const char* h : {"X-QTG-Key-Id", "X-QTG-Timestamp", "X-QTG-Nonce", "X-QTG-Signature"}) {
    test::request_options o;
    o.omit_headers = {h};
    BOOST_TEST_CONTEXT("without " << h) {
      expect_error(c.get("/v3/things", o), 401, "unauthorized");
    }
  }
  test::request_options unsigned_call;
  unsigned_call.sign = false;
  expect_error(c.get("/v3/things", unsigned_call), 401, "unauthorized");
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 0);
}

BOOST_FIXTURE_TEST_CASE(an_auth_header_given_twice_401, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  BOOST_REQUIRE(c.get("/v3/things").status == 200);
  for (const char* h : {"X-QTG-Key-Id", "X-QTG-Timestamp", "X-QTG-Nonce", "X-QTG-Signature"}) {
    // The valid value comes first (what the server would read), a second
    // copy after it.
    test::request_options o;
    o.repeat_headers = {{h, "00000000000000000000"}};
    BOOST_TEST_CONTEXT("two " << h) {
      expect_error(c.get("/v3/things", o), 401, "unauthorized");
    }
  }
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 1);
}

BOOST_FIXTURE_TEST_CASE(bad_bytes_in_path_or_query_400_with_a_valid_json_body, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  for (const std::string target :
       {"/v3/things/%00/sub/x", "/v3/things/%FF/sub/x", "/v3/things/%ED%B0%80/sub/x",
        "/v3/things/\xff/sub/x", "/v3/things?cursor=%00", "/v3/things?cursor=%FF",
        "/v3/things?cursor=\xff", "/v3/things?%C0%AF=1"}) {
    BOOST_TEST_CONTEXT("target " << target) {
      auto r = c.get(target);
      expect_error(r, 400, "invalid_request");
      BOOST_TEST(json::read(r.body).has_value(), r.body);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(timestamp_must_be_decimal_integer_401, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  const std::string now = std::to_string(now_s());
  for (const std::string& ts :
       std::vector<std::string>{now + ".0", "1.7e9", "abc", "0x10", "+" + now}) {
    test::request_options o;
    o.timestamp = ts;
    BOOST_TEST_CONTEXT("timestamp '" << ts << "'") {
      expect_error(c.get("/v3/things", o), 401, "unauthorized");
    }
  }
}

BOOST_FIXTURE_TEST_CASE(timestamp_skew_over_300_seconds_401, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  test::request_options o;
  o.timestamp = std::to_string(now_s() - 302);
  expect_error(c.get("/v3/things", o), 401, "unauthorized");
  o.timestamp = std::to_string(now_s() + 302);
  expect_error(c.get("/v3/things", o), 401, "unauthorized");
  o.timestamp = std::to_string(now_s() - 295);
  BOOST_TEST(c.get("/v3/things", o).status == 200);
  o.timestamp = std::to_string(now_s() + 295);
  BOOST_TEST(c.get("/v3/things", o).status == 200);
}

BOOST_FIXTURE_TEST_CASE(invalid_nonce_format_401, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  for (const std::string& n : {std::string("short"), std::string("has space in it 0123"),
                               std::string(129, 'a'), std::string("semi;colon0123456789")}) {
    test::request_options o;
    o.nonce = n;
    BOOST_TEST_CONTEXT("nonce '" << n << "'") {
      expect_error(c.get("/v3/things", o), 401, "unauthorized");
    }
  }
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 0);
}

BOOST_FIXTURE_TEST_CASE(unknown_key_401, test::db_fixture) {
  front f(settings, url);
  test::api_client stranger(f.port, "stranger", "stranger-secret-0123");
  expect_error(stranger.get("/v3/things"), 401, "unauthorized");
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 0);
}

BOOST_FIXTURE_TEST_CASE(bad_signature_401_and_no_nonce_row, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  test::request_options other_secret;
  other_secret.secret = creator_secret;
  expect_error(c.get("/v3/things", other_secret), 401, "unauthorized");
  test::request_options garbage;
  garbage.signature = std::string(64, 'a');
  expect_error(c.get("/v3/things", garbage), 401, "unauthorized");
  // The right signature in upper case is not the lower-case hex SPEC asks for.
  auto ts = std::to_string(now_s());
  auto nonce = test::new_nonce();
  auto sig = api::sign_request(reader_secret, "GET", "/v3/things", "", "", ts, nonce);
  for (auto& ch : sig)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  test::request_options upper;
  upper.timestamp = ts;
  upper.nonce = nonce;
  upper.signature = sig;
  expect_error(c.get("/v3/things", upper), 401, "unauthorized");
  // Forged requests must not fill api_nonces.
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 0);
}

BOOST_FIXTURE_TEST_CASE(body_is_signed, test::db_fixture) {
  front f(settings, url);
  auto c = f.creator();
  auto ts = std::to_string(now_s());
  auto nonce = test::new_nonce();
  test::request_options o;
  o.timestamp = ts;
  o.nonce = nonce;
  o.signature =
      api::sign_request(creator_secret, "POST", "/v3/things/1", "", R"({"a":1})", ts, nonce);
  expect_error(c.post("/v3/things/1", R"({"a":2})", o), 401, "unauthorized");
  o.nonce = test::new_nonce();
  o.signature = api::sign_request(creator_secret, "GET", "/v3/things/1", "", R"({"a":1})", ts,
                                  *o.nonce); // wrong method
  expect_error(c.post("/v3/things/1", R"({"a":1})", o), 401, "unauthorized");
}

BOOST_FIXTURE_TEST_CASE(path_is_signed_raw_as_sent, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  // Signed over the decoded path: refused, the server checks the raw one.
  auto ts = std::to_string(now_s());
  test::request_options decoded;
  decoded.timestamp = ts;
  decoded.nonce = test::new_nonce();
  decoded.signature = api::sign_request(reader_secret, "GET", "/v3/things/abc/def/sub/x y", "", "",
                                        ts, *decoded.nonce);
  expect_error(c.get("/v3/things/abc%2Fdef/sub/x%20y", decoded), 401, "unauthorized");
  // A literal segment wins over a capture, whatever the table order.
  BOOST_TEST(c.get("/v3/things/1/sub/literal").body == R"({"literal":true})");
  // Lower-case escapes are signed as sent, not normalised.
  auto r = c.get("/v3/things/a%2fb/sub/%7e");
  BOOST_TEST(r.status == 200);
  auto d = parse(r.body);
  BOOST_TEST(std::string(d["params"][0].GetString()) == "a%2fb");
  BOOST_TEST(std::string(d["params"][1].GetString()) == "%7e");
}

BOOST_FIXTURE_TEST_CASE(query_plus_and_duplicates_are_signed_canonically, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  // The client signs the raw query; the server canonicalises the same way.
  BOOST_TEST(c.get("/v3/things?z=1&a=2&a=1&p=x+y&s=%20").status == 200);
  auto ts = std::to_string(now_s());
  // A signer that took '+' for a space signs a different query: refused.
  test::request_options space;
  space.timestamp = ts;
  space.nonce = test::new_nonce();
  space.signature =
      api::sign_request(reader_secret, "GET", "/v3/things", "p=x%20y", "", ts, *space.nonce);
  expect_error(c.get("/v3/things?p=x+y", space), 401, "unauthorized");
  // A signer that dropped a duplicate: refused.
  test::request_options dedup;
  dedup.timestamp = ts;
  dedup.nonce = test::new_nonce();
  dedup.signature =
      api::sign_request(reader_secret, "GET", "/v3/things", "a=1", "", ts, *dedup.nonce);
  expect_error(c.get("/v3/things?a=1&a=1", dedup), 401, "unauthorized");
  // Pair order on the wire does not matter.
  test::request_options reordered;
  reordered.timestamp = ts;
  reordered.nonce = test::new_nonce();
  reordered.signature =
      api::sign_request(reader_secret, "GET", "/v3/things", "b=2&a=1", "", ts, *reordered.nonce);
  BOOST_TEST(c.get("/v3/things?a=1&b=2", reordered).status == 200);
}

BOOST_FIXTURE_TEST_CASE(replayed_nonce_401, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  BOOST_TEST(c.get("/v3/things").status == 200);
  test::request_options again;
  again.nonce = c.last_nonce();
  expect_error(c.get("/v3/things", again), 401, "unauthorized");
  // The same nonce under another key is a different pair.
  auto other = f.creator();
  BOOST_TEST(other.get("/v3/things", again).status == 200);
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 2);
}

BOOST_FIXTURE_TEST_CASE(replay_after_restart_401, test::db_fixture) {
  std::string nonce;
  {
    front first(settings, url);
    auto c = first.reader();
    BOOST_TEST(c.get("/v3/things").status == 200);
    nonce = c.last_nonce();
    first.server.stop();
  }
  front second(settings, url);
  test::request_options again;
  again.nonce = nonce;
  expect_error(second.reader().get("/v3/things", again), 401, "unauthorized");
}

BOOST_FIXTURE_TEST_CASE(wrong_scope_403_but_nonce_remembered, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  expect_error(c.post("/v3/things/1", "{}"), 403, "forbidden");
  BOOST_TEST(count("SELECT count(*) FROM api_nonces WHERE key_id = 'reader' AND nonce = '" +
                   c.last_nonce() + "'") == 1);
}

BOOST_FIXTURE_TEST_CASE(rate_limit_429_with_retry_after, test::db_fixture) {
  settings.api_rate_limit_per_second = 1; // burst 2
  front f(settings, url);
  auto c = f.reader();
  BOOST_TEST(c.get("/v3/things").status == 200);
  BOOST_TEST(c.get("/v3/things").status == 200);
  auto r = c.get("/v3/things");
  expect_error(r, 429, "rate_limited");
  BOOST_TEST(std::stoi(r.header("Retry-After")) >= 1);
  // Buckets are per key.
  BOOST_TEST(f.creator().get("/v3/things").status == 200);
}

BOOST_AUTO_TEST_CASE(rate_limiter_refills_at_rate_up_to_twice_the_rate) {
  http::rate_limiter limiter(2); // 2/s, burst 4
  auto t0 = http::rate_limiter::clock::now();
  for (int i = 0; i < 4; ++i)
    BOOST_TEST(limiter.acquire("k", t0) == 0);
  BOOST_TEST(limiter.acquire("k", t0) == 1);
  BOOST_TEST(limiter.acquire("other", t0) == 0);
  BOOST_TEST(limiter.acquire("k", t0 + std::chrono::milliseconds(500)) == 0); // one back
  BOOST_TEST(limiter.acquire("k", t0 + std::chrono::milliseconds(500)) == 1);
  // Ten idle seconds refill only up to the burst.
  auto later = t0 + std::chrono::seconds(10);
  for (int i = 0; i < 4; ++i)
    BOOST_TEST(limiter.acquire("k", later) == 0);
  BOOST_TEST(limiter.acquire("k", later) == 1);
  http::rate_limiter slow(0.25); // one token per 4 s, bucket of one
  BOOST_TEST(slow.acquire("k", t0) == 0);
  BOOST_TEST(slow.acquire("k", t0) == 4);
  BOOST_TEST(slow.acquire("k", t0 + std::chrono::seconds(3)) == 1);
}

BOOST_FIXTURE_TEST_CASE(nonces_kept_900_seconds_then_pruned, test::db_fixture) {
  // SPEC §5: remembered at least 900 s (the ±300 s window plus drift).
  exec("INSERT INTO api_nonces (key_id, nonce, seen_at) VALUES "
       "('reader', 'old-old-old-old-old', now() - interval '901 seconds'),"
       "('reader', 'recent-recent-recent', now() - interval '890 seconds')");
  BOOST_TEST(db::prune_nonces(conn.get()) == 1);
  BOOST_TEST(scalar("SELECT string_agg(nonce, ',') FROM api_nonces") == "recent-recent-recent");
}

BOOST_FIXTURE_TEST_CASE(server_prunes_nonces_now_and_then, test::db_fixture) {
  exec("INSERT INTO api_nonces (key_id, nonce, seen_at) VALUES "
       "('reader', 'old-old-old-old-old', now() - interval '950 seconds'),"
       "('reader', 'young-young-young-young', now() - interval '880 seconds')");
  front f(settings, url);
  auto c = f.reader();
  // Every 256 new nonces (or once a minute) the server prunes.
  for (int i = 0; i < 255; ++i)
    BOOST_REQUIRE(c.get("/v3/things").status == 200);
  BOOST_TEST(count("SELECT count(*) FROM api_nonces WHERE nonce = 'old-old-old-old-old'") == 1);
  BOOST_REQUIRE(c.get("/v3/things").status == 200);
  BOOST_TEST(count("SELECT count(*) FROM api_nonces WHERE nonce = 'old-old-old-old-old'") == 0);
  // 880 s old: still inside the 900 s the server must keep.
  BOOST_TEST(count("SELECT count(*) FROM api_nonces WHERE nonce = 'young-young-young-young'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 257);
}

namespace {

/// The server may answer 413 and close as soon as Content-Length is over the
/// limit, before the client has written the whole body; the client then sees
/// a failed write instead of the answer. Such a try shows nothing either way,
/// so it is made again (a bounded number of times).
test::api_reply post_over_the_limit(test::api_client& c, const std::string& body,
                                    const test::request_options& options = {}) {
  for (int attempt = 1;; ++attempt) {
    try {
      return c.post("/v3/things/1", body, options);
    } catch (const std::runtime_error& ex) {
      if (attempt == 10 || std::string(ex.what()).find("Write") == std::string::npos)
        throw;
    }
  }
}

} // namespace

BOOST_FIXTURE_TEST_CASE(body_over_one_mib_413, test::db_fixture) {
  front f(settings, url);
  auto c = f.creator();
  const size_t mib = 1024 * 1024;
  std::string exactly = R"({"x":")" + std::string(mib - 8, 'a') + "\"}";
  BOOST_REQUIRE(exactly.size() == mib);
  BOOST_TEST(c.post("/v3/things/1", exactly).status == 200);
  std::string over = R"({"x":")" + std::string(mib - 7, 'a') + "\"}";
  BOOST_REQUIRE(over.size() == mib + 1);
  expect_error(post_over_the_limit(c, over), 413, "payload_too_large");
  // Answered before authentication: even unsigned.
  test::request_options unsigned_call;
  unsigned_call.sign = false;
  expect_error(post_over_the_limit(c, over, unsigned_call), 413, "payload_too_large");
}

BOOST_FIXTURE_TEST_CASE(body_not_a_json_object_400, test::db_fixture) {
  front f(settings, url);
  auto c = f.creator();
  for (const std::string body :
       {"[1, 2]", "\"text\"", "12", "null", "{\"a\": ", "not json", "{\"a\":1} trailing", " "}) {
    BOOST_TEST_CONTEXT("body '" << body << "'") {
      expect_error(c.post("/v3/things/1", body), 400, "invalid_request");
    }
  }
}

BOOST_FIXTURE_TEST_CASE(unknown_path_404_wrong_method_405, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  expect_error(c.get("/v3/nothing/here"), 404, "not_found");
  expect_error(c.get("/v3/things/1/sub"), 404, "not_found");
  expect_error(c.get("/elsewhere"), 404, "not_found");
  auto r = c.request("PUT", "/v3/things/1", "{}");
  expect_error(r, 405, "method_not_allowed");
  BOOST_TEST(r.header("Allow") == "POST");
  // 401 comes first under /v3.
  test::request_options unsigned_call;
  unsigned_call.sign = false;
  expect_error(c.get("/v3/nothing/here", unsigned_call), 401, "unauthorized");
}

BOOST_FIXTURE_TEST_CASE(handler_exception_answers_503_not_500, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  expect_error(c.get("/v3/boom"), 503, "internal");
  BOOST_TEST(c.get("/v3/things").status == 200); // still serving
}

BOOST_FIXTURE_TEST_CASE(database_lost_503_then_serves_again, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  BOOST_TEST(c.get("/v3/things").status == 200);
  // Kill the pool's connection under it: the next nonce check fails.
  exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
       "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  expect_error(c.get("/v3/things"), 503, "unavailable");
  BOOST_TEST(c.get("/v3/things").status == 200);
}

BOOST_FIXTURE_TEST_CASE(database_unreachable_503, test::db_fixture) {
  db::connection_pool dead("postgresql://127.0.0.1:1/nowhere?connect_timeout=2", 2);
  services::service_context nowhere{dead, settings, ctx->plans, {}, nullptr};
  http::api_server server(settings, test_keys(), nowhere, test_routes());
  int port = server.start("127.0.0.1:0");
  test::api_client c(port, "reader", reader_secret);
  expect_error(c.get("/v3/things"), 503, "unavailable");
  expect_error(c.get("/v3/things"), 503, "unavailable");
}

BOOST_FIXTURE_TEST_CASE(requests_logged_at_debug_without_secrets, test::db_fixture) {
  front f(settings, url);
  auto c = f.reader();
  std::string log_text;
  {
    stderr_capture capture;
    log::level before = log::enabled(log::level::debug) ? log::level::debug : log::level::info;
    log::set_level(log::level::debug);
    BOOST_TEST(c.get("/v3/things/a/sub/b?secret_looking=x").status == 200);
    expect_error(c.get("/v3/boom"), 503, "internal");
    log::set_level(before);
    log_text = capture.text();
  }
  BOOST_TEST_MESSAGE(log_text);
  BOOST_TEST(log_text.find(R"("msg":"http request","method":"GET","path":"/v3/things/a/sub/b",)"
                           R"("status":200,"key_id":"reader","ms":)") != std::string::npos);
  BOOST_TEST(log_text.find(R"("status":503)") != std::string::npos);
  BOOST_TEST(log_text.find("handler exploded") != std::string::npos);
  BOOST_TEST(log_text.find(reader_secret) == std::string::npos);
  BOOST_TEST(log_text.find("secret_looking") == std::string::npos); // no query in logs
  BOOST_TEST(log_text.find("X-QTG-Signature") == std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(start_binds_free_port_and_stop_is_idempotent, test::db_fixture) {
  db::connection_pool pool(url, 1);
  services::service_context services{pool, settings, ctx->plans, {}, nullptr};
  http::api_server a(settings, test_keys(), services, test_routes());
  http::api_server b(settings, test_keys(), services, test_routes());
  int pa = a.start("127.0.0.1:0");
  int pb = b.start("127.0.0.1:0");
  BOOST_TEST(pa > 0);
  BOOST_TEST(pb > 0);
  BOOST_TEST(pa != pb);
  http::api_server clash(settings, test_keys(), services, test_routes());
  BOOST_CHECK_THROW(clash.start("127.0.0.1:" + std::to_string(pa)), std::runtime_error);
  a.stop();
  a.stop();
  b.stop();
}

// --- admin listener ------------------------------------------------------

namespace {

struct admin_front {
  admin_front(const config::settings& s, http::admin_hooks hooks) : server(s, std::move(hooks)) {
    port = server.start("127.0.0.1:0");
  }
  http::admin_server server;
  int port = 0;

  test::api_reply get(const std::string& path, const std::string& token = "") {
    test::api_client c(port, "", "");
    test::request_options o;
    o.sign = false;
    if (!token.empty())
      o.headers.emplace_back("Authorization", "Bearer " + token);
    return c.get(path, o);
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(admin_healthz_and_readyz, test::db_fixture) {
  bool db_ok = true, core_ok = true;
  admin_front a(settings, {[&] { return db_ok; }, [&] { return core_ok; },
                           [] {
                             return "[]";
                           }});
  auto h = a.get("/healthz");
  BOOST_TEST(h.status == 200);
  BOOST_TEST(h.body == R"({"status":"ok"})");
  BOOST_TEST(h.header("Content-Type") == "application/json");
  BOOST_TEST(a.get("/readyz").status == 200);
  db_ok = false;
  auto r = a.get("/readyz");
  BOOST_TEST(r.status == 503);
  BOOST_TEST(json::dump(parse(r.body)["checks"]) == R"({"database":false,"core_workers":true})");
  db_ok = true;
  core_ok = false;
  r = a.get("/readyz");
  BOOST_TEST(r.status == 503);
  BOOST_TEST(json::dump(parse(r.body)["checks"]) == R"({"database":true,"core_workers":false})");
}

BOOST_FIXTURE_TEST_CASE(admin_readyz_hook_throwing_is_not_ready, test::db_fixture) {
  admin_front a(settings,
                {[]() -> bool { throw std::runtime_error("db gone"); }, [] { return true; },
                 [] {
                   return "[]";
                 }});
  BOOST_TEST(a.get("/readyz").status == 503);
}

BOOST_FIXTURE_TEST_CASE(admin_workers_needs_bearer_token, test::db_fixture) {
  exec("INSERT INTO worker_heartbeats (worker_name, runtime_node, network_class, status, "
       "iterations, items_processed, consecutive_errors, last_error) "
       "VALUES ('node_dispatcher', 'host:1', 'devnet', 'running', 7, 3, 1, 'boom \"q\"')");
  settings.admin_token = "admin-token-0123456789";
  auto view_url = url;
  admin_front a(settings, {[] { return true; }, [] { return true; },
                           [view_url] {
                             auto c = db::connect(view_url);
                             return db::worker_heartbeats_json(*c);
                           }});
  expect_error(a.get("/admin/workers"), 401, "unauthorized");
  expect_error(a.get("/admin/workers", "wrong-token"), 401, "unauthorized");
  expect_error(a.get("/admin/workers", "admin-token-012345678"), 401, "unauthorized");
  auto r = a.get("/admin/workers", "admin-token-0123456789");
  BOOST_TEST(r.status == 200);
  BOOST_TEST(r.header("Content-Type") == "application/json");
  auto d = parse(r.body);
  BOOST_REQUIRE(d.IsArray());
  BOOST_REQUIRE(d.Size() == 1u);
  const auto& w = d[0];
  BOOST_TEST(json::get_string(w, "worker_name") == "node_dispatcher");
  BOOST_TEST(json::get_string(w, "runtime_node") == "host:1");
  BOOST_TEST(json::get_string(w, "worker_group") == "core");
  BOOST_TEST(json::get_string(w, "status") == "running");
  BOOST_TEST(json::get_string(w, "last_error") == "boom \"q\"");
  BOOST_TEST(w["iterations"].GetInt() == 7);
  BOOST_TEST(w["items_processed"].GetInt() == 3);
  BOOST_TEST(w["consecutive_errors"].GetInt() == 1);
  BOOST_TEST(w["heartbeat_age_seconds"].IsNumber());
  BOOST_TEST(w.HasMember("last_heartbeat_at"));
  // Unknown admin paths: JSON 404.
  expect_error(a.get("/admin/nothing", "admin-token-0123456789"), 404, "not_found");
}

BOOST_FIXTURE_TEST_CASE(admin_without_configured_token_refuses_403, test::db_fixture) {
  settings.admin_token = "";
  admin_front a(settings, {[] { return true; }, [] { return true; },
                           [] {
                             return "[]";
                           }});
  expect_error(a.get("/admin/workers"), 403, "admin_disabled");
  expect_error(a.get("/admin/workers", "anything"), 403, "admin_disabled");
  BOOST_TEST(a.get("/healthz").status == 200);
}

BOOST_FIXTURE_TEST_CASE(heartbeat_view_empty_is_empty_array, test::db_fixture) {
  auto c = db::connect(url);
  BOOST_TEST(db::worker_heartbeats_json(*c) == "[]");
}

BOOST_AUTO_TEST_SUITE_END()
