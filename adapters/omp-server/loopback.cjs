'use strict';
// Preload (`node -r .../loopback.cjs server.js`) that keeps a server under test on this machine:
// every TCP listen is forced onto 127.0.0.1 whatever host the program asked for, and fetch() to any
// host other than loopback is refused, so a program that would call an outside service (an AI
// provider, say) fails that call instead of reaching the network. Our own code; it patches Node's
// built-in modules only and knows nothing about the program it is loaded into.

const net = require('node:net');

const LOOPBACK_HOST = '127.0.0.1';
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function isHandleOrPipe(first) {
  // A unix socket path, an inherited fd or a handle object: not a TCP port, left as asked.
  if (typeof first === 'string' && !/^\d+$/.test(first)) return true;
  if (first !== null && typeof first === 'object') {
    return 'path' in first || 'fd' in first || '_handle' in first || 'handle' in first;
  }
  return false;
}

function loopbackListenArgs(args) {
  const callback = args.find((arg) => typeof arg === 'function');
  const first = args[0];
  if (isHandleOrPipe(first)) return args;
  let options;
  if (first !== null && typeof first === 'object') {
    options = { ...first, host: LOOPBACK_HOST };
  } else {
    // listen([port[, host[, backlog]]][, callback]): keep the port and backlog, replace the host.
    const port = typeof first === 'function' || first === undefined || first === null ? 0 : Number(first);
    const backlog = args.find((arg, i) => i >= 1 && typeof arg === 'number');
    options = { port, host: LOOPBACK_HOST };
    if (backlog !== undefined) options.backlog = backlog;
  }
  delete options.ipv6Only;
  return callback ? [options, callback] : [options];
}

function forceLoopbackListen() {
  const originalListen = net.Server.prototype.listen;
  net.Server.prototype.listen = function listenOnLoopback(...args) {
    return originalListen.apply(this, loopbackListenArgs(args));
  };
}

function hostOf(resource) {
  const href = typeof resource === 'string' ? resource
    : resource instanceof URL ? resource.href
      : resource && typeof resource.url === 'string' ? resource.url : String(resource);
  return new URL(href).hostname;
}

function refuseOutsideFetch() {
  const originalFetch = globalThis.fetch;
  if (typeof originalFetch !== 'function') return;
  globalThis.fetch = async function loopbackOnlyFetch(resource, init) {
    const host = hostOf(resource);
    if (!LOOPBACK_NAMES.has(host)) {
      throw new Error(`refused by the loopback preload: no network access to ${host}`);
    }
    return originalFetch.call(this, resource, init);
  };
}

forceLoopbackListen();
refuseOutsideFetch();

module.exports = { loopbackListenArgs, hostOf, LOOPBACK_HOST };
