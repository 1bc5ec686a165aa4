#include "http/openapi.hpp"

#include <stdexcept>

#include "http/embedded_file.hpp"

namespace mg::http {

const std::string& openapi_document() {
  static const std::string doc = [] {
    for (const auto& f : openapi_files())
      if (std::string(f.name) == "openapi.json")
        return f.text();
    throw std::logic_error("openapi/openapi.json was not embedded");
  }();
  return doc;
}

} // namespace mg::http
