#pragma once
// Files compiled into the binary at build time (cmake/embed_files.cmake), so
// what the listeners serve needs no file at run time.
#include <cstddef>
#include <string>
#include <vector>

namespace mg::http {

struct embedded_file {
  const char* name; // file name within its source folder, e.g. "app.js"
  const unsigned char* data;
  size_t size;

  std::string text() const { return std::string(reinterpret_cast<const char*>(data), size); }
};

/// Every file of http/admin_page/ (generated source).
const std::vector<embedded_file>& admin_page_files();

/// openapi/openapi.json (generated source).
const std::vector<embedded_file>& openapi_files();

} // namespace mg::http
