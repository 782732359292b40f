// SPDX-License-Identifier: GPL-2.0-or-later
// node validate-sarif.js SCHEMA FILE...: validate SARIF files against the SARIF 2.1.0 JSON
// schema (draft-04, as published: sarif-2.1.0-rtm.5.json) with ajv-draft-04 and ajv-formats
// (NODE_PATH: their node_modules). Exit 0 when all are valid; the errors otherwise.
"use strict";
const fs = require("fs");
const Ajv = require("ajv-draft-04");
const addFormats = require("ajv-formats");
const [schemaPath, ...files] = process.argv.slice(2);
// unicodeRegExp: false: the published schema's "language" pattern has a stray "]" that only
// non-unicode regular expressions accept (as its draft-04 validators did)
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, "utf8")));
let bad = 0;
for (const f of files) {
	if (validate(JSON.parse(fs.readFileSync(f, "utf8")))) {
		console.log(`${f}: valid`);
	} else {
		bad++;
		for (const e of validate.errors) console.log(`${f}: ${e.instancePath} ${e.message}`);
	}
}
process.exit(bad ? 1 : 0);
