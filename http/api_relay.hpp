#pragma once
// The admin page's same-origin way to the signed API: `/relay/v3/...` on the
// admin listener answers exactly what `/v3/...` answers on the API port.
// The page is on the admin origin and /v3 on another port, so a direct call
// would need CORS (and its unsigned preflight). The relay adds no
// authority: it needs the admin bearer token *and* the request's own SPEC §5
// signature over the `/v3/...` target, hands the X-QTG-* headers, method,
// query and body to api_server::answer_relayed (signature, nonce, scopes,
// four-eyes, audit, rate limit as on /v3) and forwards nothing else, to
// nothing but /v3 paths. Bodies up to 1 MiB, as on /v3.
#include <vector>

#include "http/admin_server.hpp"
#include "http/api_server.hpp"

namespace mg::http {

/// The prefix stripped before the target reaches the API.
inline constexpr const char* relay_prefix = "/relay";

std::vector<admin_route> api_relay_routes(api_server& api);

} // namespace mg::http
