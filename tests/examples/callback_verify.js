// The README's receiver example (v3), run by tests/db/callback_dispatcher_test.cpp
// against a real delivery: node callback_verify.js SECRET HEADERS_JSON BODY_FILE
const crypto = require("node:crypto");

function verifyCallback(secret, headers, body /* Buffer: the raw bytes */) {
  const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ts = h["x-qtg-callback-timestamp"], nonce = h["x-qtg-callback-nonce"];
  if ((h["x-qtg-callback-signature-version"] ?? "v3") !== "v3") return false;
  const bodyHash = crypto.createHash("sha256").update(body).digest("hex");
  const expected = crypto.createHmac("sha256", secret)
    .update(`${ts}\n${nonce}\n${bodyHash}`).digest();
  const given = Buffer.from(h["x-qtg-callback-signature"] ?? "", "hex");
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  // then dedupe on JSON.parse(body).event_id before acting
}

if (require.main === module) {
  const fs = require("node:fs");
  const [secret, headersFile, bodyFile] = process.argv.slice(2);
  const ok = verifyCallback(secret, JSON.parse(fs.readFileSync(headersFile, "utf8")),
                            fs.readFileSync(bodyFile));
  console.log(ok ? "valid" : "invalid");
  process.exit(ok ? 0 : 1);
}
