#include "actors/cluster/cluster_tls.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <memory>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>

namespace mg::cluster {

namespace {

using bio_ptr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using x509_ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using store_ptr = std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)>;
using store_ctx_ptr = std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)>;

void free_chain(STACK_OF(X509) * chain) {
  sk_X509_pop_free(chain, X509_free);
}
using chain_ptr = std::unique_ptr<STACK_OF(X509), decltype(&free_chain)>;

bio_ptr open_file(const std::string& path) {
  return {BIO_new_file(path.c_str(), "r"), &BIO_free};
}

/// A passphrase callback that refuses: an encrypted key fails to load
/// instead of prompting on the terminal.
int no_passphrase(char*, int, int, void*) {
  return -1;
}

std::optional<tls_problem> problem(tls_problem::file which, std::string what) {
  ERR_clear_error();
  return tls_problem{which, std::move(what)};
}

} // namespace

std::optional<tls_problem> check_tls_files(const tls_files& f) {
  using file = tls_problem::file;
  auto cert_in = open_file(f.certificate);
  if (!cert_in)
    return problem(file::certificate, "cannot open '" + f.certificate + "'");
  x509_ptr cert{PEM_read_bio_X509(cert_in.get(), nullptr, no_passphrase, nullptr), &X509_free};
  if (!cert)
    return problem(file::certificate, "no PEM certificate in '" + f.certificate + "'");
  // The rest of the file: intermediates a peer needs to reach the CA.
  chain_ptr intermediates{sk_X509_new_null(), &free_chain};
  while (X509* next = PEM_read_bio_X509(cert_in.get(), nullptr, no_passphrase, nullptr))
    sk_X509_push(intermediates.get(), next);
  ERR_clear_error(); // the read past the last certificate

  auto key_in = open_file(f.key);
  if (!key_in)
    return problem(file::key, "cannot open '" + f.key + "'");
  key_ptr key{PEM_read_bio_PrivateKey(key_in.get(), nullptr, no_passphrase, nullptr),
              &EVP_PKEY_free};
  if (!key)
    return problem(file::key, "no unencrypted PEM private key in '" + f.key + "'");
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    return problem(file::key,
                   "'" + f.key + "' is not the key of the certificate in '" + f.certificate + "'");

  store_ptr store{X509_STORE_new(), &X509_STORE_free};
  if (!store || X509_STORE_load_file(store.get(), f.ca.c_str()) != 1)
    return problem(file::ca, "no PEM CA certificate readable in '" + f.ca + "'");
  store_ctx_ptr ctx{X509_STORE_CTX_new(), &X509_STORE_CTX_free};
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), intermediates.get()) != 1)
    return problem(file::ca, "cannot set up certificate verification");
  if (X509_verify_cert(ctx.get()) != 1)
    return problem(file::certificate,
                   "the certificate in '" + f.certificate + "' does not verify against '" + f.ca +
                       "': " + X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get())));
  return std::nullopt;
}

void load_tls(caf::actor_system_config& cfg, const tls_files& f) {
  cfg.load<caf::openssl::manager>();
  cfg.openssl_certificate = f.certificate;
  cfg.openssl_key = f.key;
  cfg.openssl_cafile = f.ca;
}

bool tls_enabled(caf::actor_system& sys) {
  return sys.has_openssl_manager();
}

caf::io::middleman_actor connection_manager(caf::actor_system& sys) {
  return tls_enabled(sys) ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
}

} // namespace mg::cluster
