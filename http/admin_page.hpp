#pragma once
// The admin inspection page (SPEC §5 `GET /`): static HTML/JS/CSS from
// http/admin_page/, embedded in the binary at build time (CMake runs
// cmake/embed_files.cmake, which writes the table admin_page_files returns),
// so the page works offline and needs no file at run time. Loading the page
// and its assets needs no token; every data call the page makes does.
#include <cstddef>
#include <string>
#include <vector>

#include "http/admin_server.hpp"
#include "http/embedded_file.hpp"

namespace mg::http {

/// The Content-Type for a file name by its extension.
std::string content_type_for(const std::string& name);

/// GET / (index.html) and GET /assets/{name}; unknown names answer 404.
/// Each answer carries its Content-Type, Cache-Control: no-store and a
/// Content-Security-Policy that only allows the page's own origin.
std::vector<admin_route> admin_page_routes();

} // namespace mg::http
