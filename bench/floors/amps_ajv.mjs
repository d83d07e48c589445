// Native anchor for an AMPS export: ajv (JSON Schema 2020-12) with ajv-formats, on node.
//   node bench/floors/amps_ajv.mjs FILE SCHEMA      (ajv and ajv-formats from NODE_PATH)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(process.env.NODE_PATH + "/");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats");
const [file, schemaFile] = process.argv.slice(2);
const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(schemaFile, "utf8")));
process.exit(validate(JSON.parse(readFileSync(file, "utf8"))) ? 0 : 1);
