#include "actors/workers/ccip_drift.hpp"

#include <cstdio>
#include <stdexcept>

#include "actors/workers/bounded_lanes.hpp"
#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "domain/ccip_drift_report.hpp"
#include "executors/json_http_client.hpp"

namespace mg::workers {

namespace {

struct poll_answer {
  executors::http_reply reply;
  std::string error; // transport failure ("" when there is a reply)
};

/// The poll, cut off at a hard deadline even against a trickling sidecar.
executors::http_reply poll_sidecar(const std::string& url, double timeout) {
  executors::json_http_client client(url, timeout);
  std::vector<std::function<poll_answer()>> lane{[client, timeout]() -> poll_answer {
    auto started = std::chrono::steady_clock::now();
    try {
      return {client.get("/v1/registry/drift"), {}};
    } catch (const std::exception& ex) {
      return {{}, label_timeout(ex.what(), started, timeout)};
    }
  }};
  auto deadline = std::chrono::milliseconds(static_cast<long>(2 * timeout * 1000) + 500);
  auto answer = run_bounded_lanes(std::move(lane), 1, deadline)[0];
  if (!answer) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "ccip sidecar: timeout after %g s", timeout);
    throw std::runtime_error(buf);
  }
  if (!answer->error.empty())
    throw std::runtime_error("ccip sidecar: " + answer->error);
  return answer->reply;
}

} // namespace

pass_result ccip_drift_pass(db::connection_slot& conn, const config::settings& s,
                            db::drift_record_counts* counts, double timeout_seconds) {
  auto reply = poll_sidecar(s.ccip_sidecar_url, timeout_seconds);
  if (reply.status != 200)
    throw std::runtime_error("ccip sidecar answered HTTP " + std::to_string(reply.status));
  std::string error;
  auto items = domain::parse_ccip_drift_report(reply.body, error);
  if (!items)
    throw std::runtime_error("ccip sidecar: malformed drift report: " + error);

  std::vector<db::drift_observation> observations;
  for (auto& item : *items)
    observations.push_back(
        {"ccip", item.key, item.expected, item.observed, !item.drift, item.detail_json});
  auto recorded = db::record_drift_observations(conn.get(), std::move(observations));
  if (recorded.detected > 0)
    log::warn("ccip_drift: registry drift detected", {{"entries", recorded.detected}});
  if (counts)
    *counts = recorded;
  pass_result out;
  out.processed = recorded.checked;
  return out;
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_pass> build_ccip_drift(const worker_build& b) {
  if (!domain::split_url(b.ctx->settings.ccip_sidecar_url))
    return skipped("ccip_drift", "MG_CCIP_SIDECAR_URL (an http(s) URL)");
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::ccip_drift_pass(c, ctx->settings);
  };
}

} // namespace mg::actors
