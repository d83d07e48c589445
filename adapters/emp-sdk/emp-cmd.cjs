#!/usr/bin/env node
'use strict';
// memconform `cmd:` adapter for the public EMP SDK (theianmay/edge-memory, sdk/): one process per
// operation, as one app launch. Usage:
//   MEMCONFORM_EMP_SDK_HOME=/path/to/built/sdk node emp-cmd.cjs OP INPUT.json OUTPUT.json
// The SDK is loaded from $MEMCONFORM_EMP_SDK_HOME/dist (a copy built by the user; none ships here).
// Operations and bodies are memconform's EMP operations (errata/emp.md E9): append, update, delete,
// resolve, query. Each maps onto the SDK's public store API (write, update, delete, read, search)
// after the store is created for the memory file and initialized, as an app does at start-up.
// Exit codes: 0 done, 3 refused (the SDK threw a validation, lock-timeout or not-found error),
// 4 operation not offered, 2 usage or missing SDK, 1 any other error (the target erroring).

const fs = require('node:fs');
const path = require('node:path');
const { FsPlatformHandler } = require('./fs-platform.cjs');

const EXIT_OK = 0;
const EXIT_ERROR = 1;
const EXIT_USAGE = 2;
const EXIT_REFUSED = 3;
const EXIT_UNSUPPORTED = 4;
const OPERATIONS = ['append', 'update', 'delete', 'resolve', 'query'];
const DEFAULT_APP_ID = 'org.memconform.empsdk';
const ENTRY_INPUT_FIELDS = ['content', 'type', 'tags', 'meta', 'emb', 'ts'];
const REFUSAL_NAMES = new Set(['ValidationError', 'LockTimeoutError']);

class Refused extends Error {}

function parseRequest(raw) {
  let body;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    throw new Refused(`the request is not JSON: ${error.message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new Refused('the request is not a JSON object');
  }
  if (typeof body.path !== 'string' || body.path === '') {
    throw new Refused('the request names no memory file ("path")');
  }
  return body;
}

// The app writing is named by the entry's src when it gives one (each launch is one app).
function appIdFor(body) {
  const entry = body.entry;
  if (entry && typeof entry === 'object' && typeof entry.src === 'string') return entry.src;
  return DEFAULT_APP_ID;
}

// Only the fields of the SDK's CreateMemoryInput: the SDK chooses v, id and src itself.
function createInput(entry) {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw new Refused('the entry is not a JSON object');
  }
  const input = {};
  for (const field of ENTRY_INPUT_FIELDS) {
    if (entry[field] !== undefined) input[field] = entry[field];
  }
  return input;
}

// Every parameter handed to the SDK as it came, whatever its JSON type: what a value outside the SDK's
// MemoryFilter types means is the SDK's to decide (its own code meets it), never this adapter's. Dropping
// a `tags` that is not a list here once made the SDK look as if it ignored the filter.
function readFilter(body) {
  const filter = {};
  if (body.start !== undefined) filter.since = body.start;
  if (body.end !== undefined) filter.until = body.end;
  if (body.type !== undefined) filter.type = body.type;
  if (body.tags !== undefined) filter.tags = body.tags;
  return filter;
}

function isRefusal(error) {
  if (error instanceof Refused) return true;
  if (error && REFUSAL_NAMES.has(error.name)) return true;
  return Boolean(error && typeof error.message === 'string' && / not found$/.test(error.message));
}

function exitCodeFor(error) {
  return isRefusal(error) ? EXIT_REFUSED : EXIT_ERROR;
}

async function perform(store, op, body) {
  switch (op) {
    case 'append': {
      const written = await store.write(createInput(body.entry));
      return { ok: true, id: written.id };
    }
    case 'update': {
      const written = await store.update(String(body.id), createInput(body.entry || {}));
      return { ok: true, id: written.id };
    }
    case 'delete':
      await store.delete(String(body.id));
      return { ok: true };
    case 'resolve':
      return store.read();
    case 'query': {
      const filter = readFilter(body);
      if (typeof body.text === 'string') return store.search(body.text, filter);
      return store.read(filter);
    }
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

function loadSdk(home) {
  const dist = path.join(home, 'dist');
  return {
    EdgeMemoryStore: require(path.join(dist, 'MemoryStore.js')).EdgeMemoryStore,
  };
}

async function openStore(sdk, body) {
  const config = { appId: appIdFor(body), filePath: body.path };
  const store = new sdk.EdgeMemoryStore(config, new FsPlatformHandler(body.path));
  await store.initialize();
  return store;
}

function writeReply(outputPath, reply) {
  fs.writeFileSync(outputPath, JSON.stringify(reply));
}

async function main(argv) {
  if (argv.length !== 3) {
    process.stderr.write('usage: emp-cmd.cjs OP INPUT.json OUTPUT.json\n');
    return EXIT_USAGE;
  }
  const [op, inputPath, outputPath] = argv;
  if (!OPERATIONS.includes(op)) return EXIT_UNSUPPORTED;
  const home = process.env.MEMCONFORM_EMP_SDK_HOME;
  if (!home || !fs.existsSync(path.join(home, 'dist', 'MemoryStore.js'))) {
    process.stderr.write('MEMCONFORM_EMP_SDK_HOME must name a built EMP SDK (with dist/MemoryStore.js)\n');
    return EXIT_USAGE;
  }
  try {
    const body = parseRequest(fs.readFileSync(inputPath, 'utf8'));
    const store = await openStore(loadSdk(home), body);
    writeReply(outputPath, await perform(store, op, body));
    return EXIT_OK;
  } catch (error) {
    const code = exitCodeFor(error);
    const message = error && error.message ? error.message : String(error);
    if (code === EXIT_REFUSED) writeReply(outputPath, { errors: [message] });
    else process.stderr.write(`${op} failed: ${message}\n`);
    return code;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}

module.exports = { parseRequest, appIdFor, createInput, readFilter, exitCodeFor, perform, main, Refused };
