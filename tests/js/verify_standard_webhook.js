// Verifies one delivery with the standardwebhooks package's own Webhook
// class (not movegate's code): node verify_standard_webhook.js SECRET
// HEADERS_JSON_FILE BODY_FILE. Prints "valid" (exit 0) or the error (exit 1).
const fs = require("fs");
const { Webhook } = require("standardwebhooks");

const [secret, headersFile, bodyFile] = process.argv.slice(2);
const headers = JSON.parse(fs.readFileSync(headersFile, "utf8"));
const body = fs.readFileSync(bodyFile, "utf8");
try {
  new Webhook(secret).verify(body, headers);
  console.log("valid");
} catch (e) {
  console.log(`invalid: ${e.message}`);
  process.exit(1);
}
