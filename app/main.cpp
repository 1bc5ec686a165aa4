// movegate: durable movement runtime. Subcommands: serve, migrate, demo,
// bench, templates load DIR.
#include <iostream>

#include "app/common.hpp"
#include "config/log.hpp"
#include "config/malloc_arenas.hpp"

namespace mg::app {
int cmd_baselines(const args& a); // app/cmd_baselines.cpp
} // namespace mg::app

namespace {

int usage() {
  std::cerr
      << "usage: movegate <command>\n"
         "  serve                 run the workers (MG_* settings from the environment)\n"
         "  migrate               apply database migrations (safe to run twice)\n"
         "  demo                  run sim movements in-process and show their progress\n"
         "  bench [--movements N] [--shape chain4|fan4] [--json] [--no-compare]\n"
         "        [--latency-movements N] [--pace-ms MS] [--compare-movements N]\n"
         "        [--approve-while-running]\n"
         "                        throughput and latency on the zero-latency sim\n"
         "  templates load DIR    load template JSON files\n"
         "  keys new --scopes create,read [--key-id ID]\n"
         "                        print a fresh API key entry (JSON)\n"
         "  movements list|show|approve|reject|cancel|resume|retry ... [--json]\n"
         "                        operator calls over the /v3 API (movegate movements --help)\n"
         "  workers [--admin URL] [--json]\n"
         "                        workers, heartbeats and errors from the admin listener\n"
         "  callbacks verify --secret S --headers FILE_OR_JSON --body FILE\n"
         "        [--scheme v3|standard-webhooks] [--now UNIX] [--check-age]\n"
         "                        check a captured callback's signature\n"
         "  baselines load FILE   load the registry baselines verify_drift checks\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  mg::config::limit_malloc_arenas();
  if (argc < 2)
    return usage();
  std::string cmd = argv[1];
  mg::app::args rest(argv + 2, argv + argc);
  try {
    if (cmd == "serve")
      return mg::app::cmd_serve(rest);
    if (cmd == "migrate")
      return mg::app::cmd_migrate(rest);
    if (cmd == "demo")
      return mg::app::cmd_demo(rest);
    if (cmd == "bench")
      return mg::app::cmd_bench(rest);
    if (cmd == "templates")
      return mg::app::cmd_templates(rest);
    if (cmd == "keys")
      return mg::app::cmd_keys(rest);
    if (cmd == "movements")
      return mg::app::cmd_movements(rest);
    if (cmd == "workers")
      return mg::app::cmd_workers(rest);
    if (cmd == "callbacks")
      return mg::app::cmd_callbacks(rest);
    if (cmd == "baselines")
      return mg::app::cmd_baselines(rest);
  } catch (const std::exception& e) {
    mg::log::error("command failed", {{"command", cmd}, {"error", e.what()}});
    return 1;
  }
  return usage();
}
