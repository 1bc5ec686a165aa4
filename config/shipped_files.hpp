#pragma once
// Where the file trees movegate ships (migrations, templates) are found: the
// same binary runs from a build tree and from an installed package.
#include <string>

namespace mg::config {

/// `env` when that variable is set and not empty; else
/// `<this executable's dir>/../share/movegate/<name>` when that directory
/// exists (an installed package: /usr/bin/movegate reads
/// /usr/share/movegate/<name>, also under a dpkg --root); else `build_default`
/// (the source tree of a build).
std::string shipped_dir(const char* env, const std::string& name, const std::string& build_default);

} // namespace mg::config
