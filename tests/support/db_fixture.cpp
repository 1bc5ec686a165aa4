#include "tests/support/db_fixture.hpp"

#include <chrono>
#include <random>
#include <thread>

#include "domain/hash.hpp"
#include "persistence/db.hpp"
#include "persistence/migrate.hpp"
#include "persistence/template_store.hpp"

namespace mg::test {

namespace {

/// Named after the migrations' content, so a schema change gets a new one.
std::string template_db_name() {
  std::string all;
  for (auto& m : db::bundled_migrations())
    all += m.sql;
  return "mg_test_tmpl_" + domain::sha256_hex(all).substr(0, 12);
}
constexpr long long template_lock = 0x6d67746573740000;

std::string admin_url_from_env() {
  const char* url = std::getenv("MG_DATABASE_URL");
  if (!url || !*url)
    throw std::runtime_error("MG_DATABASE_URL is not set: run the tests through scripts/test.sh");
  return url;
}

std::string random_suffix() {
  std::random_device rd;
  std::mt19937_64 rng(
      rd() ^ static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return std::to_string(rng() % 1000000000000ULL);
}

/// Creates the migrated template database once (serialised by an advisory
/// lock, so parallel test processes agree).
void ensure_template(const std::string& admin_url, const std::string& template_db) {
  auto admin = db::connect(admin_url);
  pqxx::nontransaction tx(*admin);
  tx.exec("SELECT pg_advisory_lock(" + std::to_string(template_lock) + ")");
  bool exists =
      !tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", template_db).empty();
  if (!exists) {
    tx.exec(std::string("CREATE DATABASE ") + template_db);
    db::migrate(url_for_database(admin_url, template_db), db::bundled_migrations());
  }
  tx.exec("SELECT pg_advisory_unlock(" + std::to_string(template_lock) + ")");
}

} // namespace

std::string url_for_database(const std::string& url, const std::string& dbname) {
  auto q = url.find('?');
  auto base = url.substr(0, q);
  auto slash = base.rfind('/');
  return base.substr(0, slash + 1) + dbname + (q == std::string::npos ? "" : url.substr(q));
}

db_fixture::db_fixture()
    : conn(""), dbname_("mg_t_" + random_suffix()), admin_url_(admin_url_from_env()) {
  auto template_db = template_db_name();
  ensure_template(admin_url_, template_db);
  {
    auto admin = db::connect(admin_url_);
    pqxx::nontransaction tx(*admin);
    tx.exec("CREATE DATABASE " + dbname_ + " TEMPLATE " + template_db);
  }
  url = url_for_database(admin_url_, dbname_);
  conn = db::connection_slot(url);
  other = db::connect(url);
  settings = config::load_settings([](const char*) { return std::optional<std::string>(); });
  settings.database_url = url;
  settings.runtime_node = "test-node";
  apply_settings();
}

db_fixture::~db_fixture() {
  ctx.reset();
  conn.reset();
  other.reset();
  try {
    auto admin = db::connect(admin_url_);
    pqxx::nontransaction tx(*admin);
    tx.exec("DROP DATABASE IF EXISTS " + dbname_ + " WITH (FORCE)");
  } catch (const std::exception& e) {
    BOOST_TEST_MESSAGE("could not drop " << dbname_ << ": " << e.what());
  }
}

void db_fixture::apply_settings() {
  ctx = std::make_shared<workers::engine_context>(settings, executors::builtin_providers(url));
}

void db_fixture::add_template(const std::string& json) {
  pqxx::work tx(*other);
  auto r = db::save_template(tx, json);
  if (r.outcome == db::save_outcome::invalid || r.outcome == db::save_outcome::conflict) {
    std::string msg = "template refused:";
    for (auto& e : r.errors)
      msg += " " + e.field + ": " + e.message + ";";
    throw std::runtime_error(msg);
  }
  tx.commit();
}

std::string db_fixture::create(const std::string& template_key, const std::string& input_params,
                               const std::string& callback_url) {
  pqxx::work tx(*other);
  db::create_params p;
  p.template_key = template_key;
  p.intent = R"({"asset": "USDC", "amount": "10.5", "destination": "0xdef"})";
  p.input_params = input_params;
  p.callback_url = callback_url;
  p.idempotency_key = "t-" + random_suffix();
  p.created_by = "tester";
  p.network_class = settings.network_class;
  auto id = db::create_request(tx, ctx->plans, p, settings.callback_max_attempts).id;
  tx.commit();
  return id;
}

db::approve_result db_fixture::approve(const std::string& id) {
  pqxx::work tx(*other);
  auto r = db::approve_request(tx, ctx->plans, id, "approver", ctx->e.reconcile_settings());
  tx.commit();
  return r;
}

std::string db_fixture::create_and_approve(const std::string& template_key,
                                           const std::string& input_params) {
  auto id = create(template_key, input_params);
  auto r = approve(id);
  if (r.status != db::approve_status::approved)
    throw std::runtime_error("approve refused");
  return id;
}

db::reconcile_outcome db_fixture::reconcile(const std::string& id) {
  pqxx::work tx(*other);
  auto r = db::reconcile_request(tx, ctx->plans, id, ctx->e.reconcile_settings());
  tx.commit();
  return r;
}

db::request_snapshot db_fixture::snapshot(const std::string& id) {
  pqxx::work tx(*other);
  auto s = db::load_request(tx, id);
  tx.commit();
  if (!s)
    throw std::runtime_error("no request " + id);
  return *s;
}

std::string db_fixture::node_state(const std::string& id, const std::string& node_key) {
  for (auto& n : snapshot(id).nodes)
    if (n.node_key == node_key)
      return std::string(domain::to_string(n.node_state));
  throw std::runtime_error("no node " + node_key);
}

std::string db_fixture::scalar(const std::string& sql) {
  pqxx::nontransaction tx(*other);
  auto r = tx.exec(sql);
  if (r.empty() || r[0][0].is_null())
    return "";
  return r[0][0].c_str();
}

void db_fixture::exec(const std::string& sql) {
  pqxx::nontransaction tx(*other);
  tx.exec(sql);
}

bool db_fixture::wait_for(const std::string& sql, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (scalar(sql) == "t")
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

} // namespace mg::test
