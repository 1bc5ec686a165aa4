#include "actors/workers/host_resolver.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

namespace mg::workers {

std::vector<std::string> resolve_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::string> out;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0)
    return out;
  for (auto* a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* where = nullptr;
    if (a->ai_family == AF_INET)
      where = &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
    else if (a->ai_family == AF_INET6)
      where = &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
    if (where && ::inet_ntop(a->ai_family, where, text, sizeof text))
      out.emplace_back(text);
  }
  ::freeaddrinfo(found);
  return out;
}

} // namespace mg::workers
