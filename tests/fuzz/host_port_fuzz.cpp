// domain::parse_host_port (MG_HTTP_ADDR, MG_ADMIN_ADDR, MG_CLUSTER_ADDR,
// cluster_nodes rows). Invariants: only std::invalid_argument; an accepted
// address has a non-empty host and a port 0..65535 that is the decimal text
// after the last ':'; host and port put back together give the address.
#include <stdexcept>

#include "domain/url.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string address(fuzz::bytes(data, size));
  domain::host_port hp;
  try {
    hp = domain::parse_host_port(address);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  MG_FUZZ_CHECK(!hp.host.empty(), "host not empty");
  MG_FUZZ_CHECK(hp.port >= 0 && hp.port <= 65535, "port in range");
  const std::string port = address.substr(address.rfind(':') + 1);
  MG_FUZZ_CHECK(!port.empty() && port.size() <= 5 &&
                    port.find_first_not_of("0123456789") == std::string::npos &&
                    std::stoi(port) == hp.port,
                "port is the decimal after the last ':'");
  const std::string host_text = address.substr(0, address.rfind(':'));
  MG_FUZZ_CHECK(host_text == hp.host || host_text == "[" + hp.host + "]",
                "host is the text before the last ':' (IPv6 brackets dropped)");
  return 0;
}
