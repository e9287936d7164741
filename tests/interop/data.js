// Interop between tpuctl's transfer engine and Google's official
// @google-cloud/storage client, both against tpuctl-emulator:
//   node data.js check BUCKET PREFIX DIR
//     every object under PREFIX (uploaded by tpuctl) is downloaded with
//     crc32c and md5 validation and must equal DIR/<name minus PREFIX>;
//     its crc32c metadata must equal the client's own CRC32C of the file.
//   node data.js put BUCKET PREFIX DIR
//     every file of DIR is uploaded to PREFIX<name> with validation,
//     files under 1 MiB as simple uploads, the others resumable.
// Prints "ok ..." lines; exits non-zero on the first failure.
//
// Environment: EMU_ENV (the emulator's DIR/env, with STORAGE_EMULATOR_HOST)
// and EMU_TOKEN_FILE (DIR/access-token), GCS_TEST_PROJECT.
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');

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

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

function walk(dir, rel = '') {
  let out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), {withFileTypes: true})) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out = out.concat(walk(dir, r));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}

async function main() {
  const [mode, bucketName, prefix, dir] = process.argv.slice(2);
  if (!['check', 'put'].includes(mode) || !bucketName || prefix === undefined ||
      !dir) {
    throw new Error('usage: data.js check|put BUCKET PREFIX DIR');
  }
  loadEnv(need('EMU_ENV'));
  const host = need('STORAGE_EMULATOR_HOST');
  if (!/^http:\/\/(127\.[0-9.]+|\[::1\]|localhost)(:[0-9]+)?\/?$/.test(host)) {
    throw new Error(`STORAGE_EMULATOR_HOST '${host}' is not loopback`);
  }
  const token = fs.readFileSync(need('EMU_TOKEN_FILE'), 'utf8').trim();
  const {Storage, CRC32C} = require('@google-cloud/storage');
  const {OAuth2Client} = require('google-auth-library');
  const auth = new OAuth2Client();
  auth.setCredentials({
    access_token: token,
    token_type: 'Bearer',
    expiry_date: Date.now() + 3600 * 1000,
  });
  const storage = new Storage({
    projectId: need('GCS_TEST_PROJECT'),
    apiEndpoint: host.replace(/\/$/, ''),
    useAuthWithCustomEndpoint: true,
    authClient: auth,
    retryOptions: {autoRetry: false},
  });
  storage.interceptors.push({
    request: (reqOpts) => {
      reqOpts.headers = Object.assign({}, reqOpts.headers,
          {Authorization: `Bearer ${token}`});
      return reqOpts;
    },
  });
  const bucket = storage.bucket(bucketName);
  const crc32c = (buf) => {
    const c = new CRC32C();
    c.update(buf);
    return c.toString();
  };

  if (mode === 'check') {
    const [files] = await bucket.getFiles({prefix});
    assert.ok(files.length > 0, `no objects under ${prefix}`);
    for (const f of files) {
      const local = path.join(dir, f.name.slice(prefix.length));
      const want = fs.readFileSync(local);
      const [meta] = await f.getMetadata();
      assert.strictEqual(Number(meta.size), want.length, `${f.name}: size`);
      assert.strictEqual(meta.crc32c, crc32c(want), `${f.name}: crc32c`);
      const [got] = await f.download({validation: true});
      assert.ok(got.equals(want), `${f.name}: content differs`);
      console.log(`ok check ${f.name} ${want.length}`);
    }
  } else {
    for (const rel of walk(dir)) {
      const p = path.join(dir, rel);
      const size = fs.statSync(p).size;
      await bucket.upload(p, {
        destination: prefix + rel,
        resumable: size >= 1024 * 1024,
        validation: size >= 1024 * 1024 ? 'crc32c' : 'md5',
      });
      console.log(`ok put ${prefix}${rel} ${size}`);
    }
  }
  console.log('ok done');
}

main().catch((err) => {
  console.error(`FAIL: ${err.stack || err}`);
  process.exit(1);
});
