// The setup shared by the Cloud Storage interop scripts (gcs.js, data.js):
// the emulator's environment, a @google-cloud/storage client that talks
// to tpuctl-emulator only, and small helpers.
//
// Environment: EMU_ENV (the emulator's DIR/env, with STORAGE_EMULATOR_HOST),
// EMU_TOKEN_FILE (DIR/access-token; google-auth-library ignores a key's
// token_uri, so the scripts hand the emulator's token over themselves),
// GCS_TEST_PROJECT.
'use strict';

const fs = require('fs');
const path = require('path');

// Load "export NAME='value'" lines of file into process.env.
function loadEnv(file) {
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = line.match(/^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/);
    if (!m) continue;
    let v = m[2].trim();
    if ((v.startsWith("'") && v.endsWith("'")) ||
        (v.startsWith('"') && v.endsWith('"'))) {
      v = v.slice(1, -1);
    }
    process.env[m[1]] = v;
  }
}

// The value of environment variable name; throws when unset or empty.
function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

// The files under dir (relative paths, '/'-separated, sorted).
function walk(dir, rel = '') {
  let out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), {withFileTypes: true})) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out = out.concat(walk(dir, r));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}

// The base64 CRC32C of buf, computed by the client library.
function crc32c(buf) {
  const {CRC32C} = require('@google-cloud/storage');
  const c = new CRC32C();
  c.update(buf);
  return c.toString();
}

// {storage, project}: a Storage client for the emulator of EMU_ENV,
// refusing any STORAGE_EMULATOR_HOST that is not loopback, with the
// client's own retries off (a test sees every failure).
function storageClient() {
  loadEnv(need('EMU_ENV'));
  const host = need('STORAGE_EMULATOR_HOST');
  if (!/^http:\/\/(127\.[0-9.]+|\[::1\]|localhost)(:[0-9]+)?\/?$/.test(host)) {
    throw new Error(`STORAGE_EMULATOR_HOST '${host}' is not loopback`);
  }
  const token = fs.readFileSync(need('EMU_TOKEN_FILE'), 'utf8').trim();
  const project = need('GCS_TEST_PROJECT');
  const {Storage} = require('@google-cloud/storage');
  const {OAuth2Client} = require('google-auth-library');
  const auth = new OAuth2Client();
  auth.setCredentials({
    access_token: token,
    token_type: 'Bearer',
    expiry_date: Date.now() + 3600 * 1000,
  });
  const storage = new Storage({
    projectId: project,
    apiEndpoint: host.replace(/\/$/, ''),
    useAuthWithCustomEndpoint: true,
    authClient: auth,
    retryOptions: {autoRetry: false},
  });
  // Resumable uploads take their headers from the request interceptors
  // (customRequestOptions), not from the auth client: hand the token over
  // there too.
  storage.interceptors.push({
    request: (reqOpts) => {
      reqOpts.headers = Object.assign({}, reqOpts.headers,
          {Authorization: `Bearer ${token}`});
      return reqOpts;
    },
  });
  return {storage, project};
}

// Run main; on a rejection print "NAME: stack" and exit 1.
function run(name, main) {
  main().catch((err) => {
    console.error(`${name}: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  });
}

module.exports = {loadEnv, need, walk, crc32c, storageClient, run};
