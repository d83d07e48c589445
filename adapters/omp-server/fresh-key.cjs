'use strict';
// Preload (`node -r .../fresh-key.cjs server.js`) that gives a server under test a fresh API key:
// when MEMCONFORM_KEY_FILE names a file, 32 random bytes (64 hex characters) become OMP_API_KEY
// before the program reads its environment, and {"api_key": KEY} is written to that file (mode 0600)
// for the harness to send as the bearer token. A key already set in OMP_API_KEY is kept and written.
// Our own code: a registry entry names the file as api_key_from, so no key is ever written in a recipe.

const crypto = require('node:crypto');
const fs = require('node:fs');

function freshKey() {
  return crypto.randomBytes(32).toString('hex');
}

function publishKey(keyFile, env) {
  if (!env.OMP_API_KEY) env.OMP_API_KEY = freshKey();
  fs.writeFileSync(keyFile, JSON.stringify({ api_key: env.OMP_API_KEY }), { mode: 0o600, flag: 'wx' });
  return env.OMP_API_KEY;
}

if (process.env.MEMCONFORM_KEY_FILE) publishKey(process.env.MEMCONFORM_KEY_FILE, process.env);

module.exports = { freshKey, publishKey };
