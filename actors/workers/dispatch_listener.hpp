#pragma once
// LISTEN mg_dispatch: turns NOTIFYs from other processes (approvals made
// there, operator calls) into dispatcher wake-ups. A latency hint only:
// polling stays the safety net, so this runs as a sidecar. This process's
// own API announces its changes in-process, waking only as many
// dispatchers as it made nodes READY; its NOTIFYs are passed over here, or
// every dispatcher would race for one node.
#include <memory>
#include <pqxx/pqxx>
#include <string>

#include "actors/workers/engine.hpp"

namespace mg::workers {

class dispatch_listener {
public:
  /// NOTIFYs whose payload is `own_sender` (this process's API
  /// application_name) are passed over.
  dispatch_listener(std::string database_url, std::string own_sender);
  ~dispatch_listener();

  /// Waits up to `wait_ms` for notifications; wake_dispatcher is set when
  /// any arrived. Reconnects (and listens again) after a lost connection.
  pass_result pass(int wait_ms);

private:
  struct receiver;
  void drop(); // the receiver must go before its connection

  std::string url_;
  std::string own_sender_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<receiver> receiver_;
  int received_ = 0;
};

} // namespace mg::workers
