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
// and EMU_TOKEN_FILE (DIR/access-token), GCS_TEST_PROJECT (see lib.js).
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const {walk, crc32c, storageClient, run} = require('./lib');

async function main() {
  const [mode, bucketName, prefix, dir] = process.argv.slice(2);
  if (!['check', 'put'].includes(mode) || !bucketName || prefix === undefined ||
      !dir) {
    throw new Error('usage: data.js check|put BUCKET PREFIX DIR');
  }
  const {storage} = storageClient();
  const bucket = storage.bucket(bucketName);

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

run('data.js', main);
