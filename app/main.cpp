// movegate: durable movement runtime. Subcommands: serve, migrate, demo,
// bench, templates load DIR.
#include <iostream>

#include "app/common.hpp"
#include "config/log.hpp"

namespace {

int usage() {
  std::cerr << "usage: movegate <command>\n"
               "  serve                 run the workers (MG_* settings from the environment)\n"
               "  migrate               apply database migrations (safe to run twice)\n"
               "  demo                  run sim movements in-process and show their progress\n"
               "  bench [--movements N] [--shape chain4|fan4] [--json] [--no-compare]\n"
               "        [--latency-movements N] [--pace-ms MS] [--compare-movements N]\n"
               "                        throughput and latency on the zero-latency sim\n"
               "  templates load DIR    load template JSON files\n"
               "  keys new --scopes create,read [--key-id ID]\n"
               "                        print a fresh API key entry (JSON)\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
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
  } catch (const std::exception& e) {
    mg::log::error("command failed", {{"command", cmd}, {"error", e.what()}});
    return 1;
  }
  return usage();
}
