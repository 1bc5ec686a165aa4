#include "config/shipped_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mg::config {

std::string shipped_dir(const char* env, const std::string& name,
                        const std::string& build_default) {
  const char* set = std::getenv(env);
  if (set && *set)
    return set;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = exe.parent_path().parent_path() / "share" / "movegate" / name;
    if (std::filesystem::is_directory(installed, ec))
      return installed.string();
  }
  return build_default;
}

} // namespace mg::config
