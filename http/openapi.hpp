#pragma once
// The OpenAPI 3.0 description of /v3 and the admin listener
// (openapi/openapi.json, embedded at build time; served unsigned at
// GET /openapi.json on the API listener).
#include <string>

namespace mg::http {

/// The text of openapi/openapi.json as it was when the binary was built.
const std::string& openapi_document();

} // namespace mg::http
