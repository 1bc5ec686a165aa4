// Validates openapi/openapi.json against the OpenAPI 3.0 schema and checks
// every $ref resolves (@apidevtools/swagger-parser). Exit 0 when valid.
const SwaggerParser = require("@apidevtools/swagger-parser");
const path = process.argv[2];
SwaggerParser.validate(path)
  .then((api) => {
    console.log(`valid: ${api.info.title} ${api.info.version}, ${Object.keys(api.paths).length} paths`);
  })
  .catch((err) => {
    console.error(`invalid: ${err.message}`);
    process.exit(1);
  });
