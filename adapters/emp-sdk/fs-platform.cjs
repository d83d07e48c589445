'use strict';
// A platform access handler for the EMP SDK under Node: the SDK's PlatformAccessHandler interface
// (getFilePath, hasAccess, requestAccess, readFile, appendFile, writeFile, fileExists, deleteFile,
// ensureDirectory) answered with Node's `fs`, in place of the SDK's Expo handler. Written for
// memconform from that interface; no SDK code. Access is always granted (no picker on a server);
// the file path comes from the store's config, so getFilePath is only a fallback.

const fs = require('node:fs');
const fsp = require('node:fs/promises');

function isMissing(error) {
  return error !== null && typeof error === 'object' && error.code === 'ENOENT';
}

class FsPlatformHandler {
  constructor(filePath) {
    this.filePath = filePath;
  }

  async getFilePath() {
    if (!this.filePath) throw new Error('no memory file path was configured');
    return this.filePath;
  }

  async hasAccess() {
    return true;
  }

  async requestAccess() {
    return true;
  }

  // A missing file reads as empty, as the interface's other handler does.
  async readFile(path) {
    try {
      return await fsp.readFile(path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return '';
      throw error;
    }
  }

  // A real append (O_APPEND), so one write lands at the end whatever else wrote meanwhile.
  async appendFile(path, content) {
    await fsp.appendFile(path, content, 'utf8');
  }

  async writeFile(path, content) {
    await fsp.writeFile(path, content, 'utf8');
  }

  async fileExists(path) {
    return fs.existsSync(path);
  }

  async deleteFile(path) {
    try {
      await fsp.unlink(path);
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  async ensureDirectory(path) {
    if (path) await fsp.mkdir(path, { recursive: true });
  }
}

module.exports = { FsPlatformHandler };
