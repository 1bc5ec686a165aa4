#pragma once
// TLS for the cluster door (SPEC §8, issue 6): CAF's OpenSSL module with
// certificates on both sides. Every node and sibling presents a certificate
// and accepts only peers whose certificate chains to the configured CA
// (mutual TLS); a plain CAF peer, a self-signed or foreign certificate, or
// none at all fails the handshake. Part of movegate_client: siblings use the
// same files and checks as `serve`.
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman_actor.hpp>
#include <optional>
#include <string>

namespace mg::cluster {

struct tls_files {
  std::string certificate; // PEM certificate (chain) this side presents
  std::string key;         // its PEM private key (unencrypted)
  std::string ca;          // PEM CA bundle a peer's certificate must chain to
};

struct tls_problem {
  enum class file { certificate, key, ca };
  file which = file::certificate;
  std::string what;
};

/// What is wrong with `f`, checked before CAF sees it (CAF would only fail
/// at the first handshake): unreadable or non-PEM files, an encrypted key, a
/// key that does not belong to the certificate, a certificate that does not
/// verify against the CA (expired, or signed by someone else).
std::optional<tls_problem> check_tls_files(const tls_files& f);

/// Loads CAF's OpenSSL module with `f` into `cfg`; call after the
/// middleman is loaded and before the actor system is made.
void load_tls(caf::actor_system_config& cfg, const tls_files& f);

/// True when `sys` was configured with load_tls: every cluster connection
/// it publishes or opens is then TLS.
bool tls_enabled(caf::actor_system& sys);

/// Who dials cluster connections for `sys`: the OpenSSL module's connection
/// manager under TLS (a plain dial would fail its handshake), else the
/// middleman's.
caf::io::middleman_actor connection_manager(caf::actor_system& sys);

} // namespace mg::cluster
