// SPEC §5 "Hostile input" at the HTTP listeners of a real `movegate serve`:
// framing refused before any body is read and the connection closed after
// the refusal (no request smuggled behind it), nothing buffered or inflated
// past the limit, and slow clients neither starve a listener nor hold a
// connection past MG_HTTP_REQUEST_TIMEOUT_SECONDS.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "build_paths.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

const test::api_key_spec reader{"reader", "0123456789abcdef0123456789abcdef", R"(["read"])"};

/// A plain TCP connection to 127.0.0.1:port.
struct raw_socket {
  int fd = -1;
  explicit raw_socket(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~raw_socket() {
    if (fd >= 0)
      ::close(fd);
  }
  raw_socket(const raw_socket&) = delete;

  /// false once the peer has closed (or reset) the connection.
  bool send_all(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      auto n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  /// Everything the server sends until it closes or `patience` passes
  /// without a byte; `closed` says which.
  std::string read_until_closed(std::chrono::milliseconds patience, bool& closed) {
    std::string out;
    closed = false;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(patience.count())) <= 0)
        return out;
      char buf[65536];
      auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        closed = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }
};

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

/// An unsigned document on the API listener, to ask for behind a refusal.
const std::string smuggled = "GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n";

struct framing_fixture : test::serve_fixture {
  framing_fixture() { keys = {reader}; }

  /// Sends `request` then a second request on the same connection; checks
  /// that exactly one answer with `status` comes back and the server closes.
  void refused_and_closed(const std::string& request, int status) {
    raw_socket s(api_port);
    BOOST_REQUIRE(s.fd >= 0);
    s.send_all(request + smuggled);
    bool closed = false;
    auto got = s.read_until_closed(5000ms, closed);
    BOOST_TEST(got.rfind("HTTP/1.1 " + std::to_string(status) + " ", 0) == 0, got.substr(0, 200));
    BOOST_TEST(count_of(got, "HTTP/1.1 ") == 1u, got);
    BOOST_TEST(got.find("\"openapi\"") == std::string::npos);
    BOOST_TEST(closed);
  }
};

std::string post_head(const std::string& extra_headers) {
  return "POST /v3/movements HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         extra_headers + "\r\n";
}

} // namespace

BOOST_AUTO_TEST_SUITE(framing)

BOOST_FIXTURE_TEST_CASE(transfer_encoding_is_411_and_closes, framing_fixture) {
  start();
  refused_and_closed(post_head("Transfer-Encoding: chunked\r\n") + "2\r\n{}\r\n0\r\n\r\n", 411);
}

BOOST_FIXTURE_TEST_CASE(content_encoding_is_415_and_closes, framing_fixture) {
  start();
  // gzip of "{}"
  const unsigned char gz[] = {31,  139, 8, 0,  0,   0,   0,   0, 2, 255, 171,
                              174, 5,   0, 67, 191, 166, 163, 2, 0, 0,   0};
  std::string body(reinterpret_cast<const char*>(gz), sizeof gz);
  refused_and_closed(post_head("Content-Encoding: gzip\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n") +
                         body,
                     415);
}

BOOST_FIXTURE_TEST_CASE(non_decimal_content_length_is_400_and_closes, framing_fixture) {
  start();
  refused_and_closed(post_head("Content-Length: 1e3\r\n") + "{}", 400);
}

BOOST_FIXTURE_TEST_CASE(two_content_lengths_are_400_and_close, framing_fixture) {
  start();
  refused_and_closed(post_head("Content-Length: 2\r\nContent-Length: 40\r\n") + "{}", 400);
}

BOOST_FIXTURE_TEST_CASE(a_gzip_bomb_is_never_inflated, framing_fixture) {
  start();
  // 1 GiB of zeros, gzip -9: about 1 MiB on the wire.
  auto path = prefix + "-bomb.gz";
  auto made = test::run_shell(
      "python3 -c \"import zlib,sys\nc=zlib.compressobj(9,zlib.DEFLATED,31)\n"
      "o=sys.stdout.buffer\nz=bytes(1<<20)\nfor _ in range(1024): o.write(c.compress(z))\n"
      "o.write(c.flush())\" > " +
      path);
  BOOST_REQUIRE(made.status == 0);
  std::ifstream in(path, std::ios::binary);
  std::string bomb((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  BOOST_REQUIRE(bomb.size() > 900 * 1024 && bomb.size() < 1024 * 1024);
  auto before = rss_kib(server->pid());
  raw_socket s(api_port);
  s.send_all(post_head("Content-Encoding: gzip\r\nContent-Length: " + std::to_string(bomb.size()) +
                       "\r\n") +
             bomb);
  bool closed = false;
  auto got = s.read_until_closed(10000ms, closed);
  auto after = rss_kib(server->pid());
  // The answer may be lost to the reset of a connection closed mid-body.
  if (!got.empty())
    BOOST_TEST(got.rfind("HTTP/1.1 415 ", 0) == 0, got.substr(0, 200));
  BOOST_TEST(after - before < 20 * 1024, "RSS grew " << (after - before) << " KiB");
}

BOOST_FIXTURE_TEST_CASE(a_200_mib_chunked_body_is_never_buffered, framing_fixture) {
  start();
  auto before = rss_kib(server->pid());
  raw_socket s(api_port);
  s.send_all(post_head("Transfer-Encoding: chunked\r\n"));
  std::string chunk = "100000\r\n" + std::string(1 << 20, 'a') + "\r\n";
  int sent = 0;
  while (sent < 200 && s.send_all(chunk))
    ++sent;
  if (sent == 200)
    s.send_all("0\r\n\r\n");
  bool closed = false;
  auto got = s.read_until_closed(5000ms, closed);
  auto after = rss_kib(server->pid());
  BOOST_TEST(after - before < 20 * 1024, "RSS grew " << (after - before) << " KiB");
  // The answer may be lost to the reset when the client kept sending.
  if (!got.empty())
    BOOST_TEST(got.rfind("HTTP/1.1 411 ", 0) == 0, got.substr(0, 200));
  BOOST_TEST(sent < 200, "the server read all 200 MiB");
}

BOOST_FIXTURE_TEST_CASE(a_normal_request_still_keeps_its_connection, framing_fixture) {
  start();
  raw_socket s(api_port);
  s.send_all(smuggled + smuggled);
  bool closed = false;
  auto got = s.read_until_closed(1500ms, closed);
  BOOST_TEST(count_of(got, "HTTP/1.1 200 ") == 2u, got.substr(0, 300));
}

namespace {

/// `n` connections to `port` that each send one header byte per
/// `every`; stops (and closes them) when destroyed.
struct trickle {
  std::vector<std::unique_ptr<raw_socket>> sockets;
  std::atomic<bool> stop{false};
  std::thread thread;
  trickle(int port, int n, std::chrono::milliseconds every) {
    for (int i = 0; i < n; ++i) {
      sockets.push_back(std::make_unique<raw_socket>(port));
      BOOST_REQUIRE(sockets.back()->fd >= 0);
    }
    thread = std::thread([this, every] {
      const std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ";
      for (size_t i = 0; !stop; ++i) {
        for (auto& s : sockets)
          s->send_all(std::string(1, i < head.size() ? head[i] : 'a'));
        for (auto waited = 0ms; waited < every && !stop; waited += 50ms)
          std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~trickle() {
    stop = true;
    thread.join();
  }
};

double best_of_three(const std::function<int()>& call) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    auto started = clock_type::now();
    int status = call();
    double took = std::chrono::duration<double>(clock_type::now() - started).count();
    BOOST_TEST(status == 200);
    BOOST_TEST_MESSAGE("answered in " << took << " s");
    best = std::min(best, took);
  }
  return best;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(sixty_four_slow_clients_leave_both_listeners_answering, framing_fixture) {
  start();
  trickle on_api(api_port, 64, 2000ms);
  trickle on_admin(admin_port, 64, 2000ms);
  std::this_thread::sleep_for(500ms); // every connection accepted and trickling
  auto api = client(reader);
  double signed_call = best_of_three([&] { return api.get("/v3/movements?limit=1").status; });
  BOOST_TEST(signed_call < 1.0, "signed request took " << signed_call << " s");
  test::api_client health(admin_port, "", "");
  test::request_options unsigned_call;
  unsigned_call.sign = false;
  double healthz = best_of_three([&] { return health.get("/healthz", unsigned_call).status; });
  BOOST_TEST(healthz < 1.0, "/healthz took " << healthz << " s");
}

BOOST_FIXTURE_TEST_CASE(a_trickling_request_is_cut_at_the_total_deadline, framing_fixture) {
  start("e2e", {{"MG_HTTP_REQUEST_TIMEOUT_SECONDS", "2"}});
  for (int port : {api_port, admin_port}) {
    raw_socket s(port);
    auto started = clock_type::now();
    // The request line at once, then a header a byte per 300 ms (each byte
    // well inside httplib's 5 s per-recv timeout).
    BOOST_REQUIRE(s.send_all("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: "));
    std::string got;
    bool closed = false;
    while (clock_type::now() - started < 8s && !closed) {
      if (!s.send_all("a"))
        break;
      pollfd p{s.fd, POLLIN, 0};
      if (::poll(&p, 1, 300) > 0) // the answer, then the close
        got = s.read_until_closed(2000ms, closed);
    }
    double took = std::chrono::duration<double>(clock_type::now() - started).count();
    BOOST_TEST(closed, "port " << port << " still open after " << took << " s");
    BOOST_TEST(got.find("HTTP/1.1 408 ") == 0, got.substr(0, 200));
    BOOST_TEST(took >= 1.5);
    BOOST_TEST(took < 6.0);
  }
}

BOOST_AUTO_TEST_SUITE_END()
