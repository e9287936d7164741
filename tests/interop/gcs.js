// @google-cloud/storage (Google's official Node.js client) against
// tpuctl-emulator: create a bucket, upload simple (multipart) and
// resumable objects with checksum validation, list with a delimiter,
// download with validation and by range, update metadata, copy (rewrite),
// compose, check a no-clobber precondition, and delete everything.
// Exits non-zero on the first failure.
//
// Environment: EMU_ENV, EMU_TOKEN_FILE, GCS_TEST_PROJECT (see lib.js),
// GCS_TEST_TMP (a scratch directory).
'use strict';

const assert = require('assert');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const {need, crc32c, storageClient, run} = require('./lib');

async function main() {
  const {storage} = storageClient();
  const tmp = need('GCS_TEST_TMP');
  const ok = (what) => console.log(`ok ${what}`);

  const name = `interop-${crypto.randomBytes(4).toString('hex')}`;
  const [bucket] = await storage.createBucket(name);
  assert.strictEqual(bucket.name, name);
  const [bmeta] = await bucket.getMetadata();
  assert.strictEqual(bmeta.kind, 'storage#bucket');
  ok('bucket');

  // Simple upload (multipart/related), crc32c + md5 validation on.
  const small = crypto.randomBytes(1000);
  const f1 = bucket.file('dir/small.bin');
  await f1.save(small, {
    resumable: false,
    validation: true,
    metadata: {contentType: 'application/x-small', metadata: {k: 'v'}},
  });
  const [m1] = await f1.getMetadata();
  assert.strictEqual(Number(m1.size), small.length);
  assert.strictEqual(m1.md5Hash,
      crypto.createHash('md5').update(small).digest('base64'));
  assert.strictEqual(m1.crc32c, crc32c(small));
  assert.strictEqual(m1.contentType, 'application/x-small');
  assert.strictEqual(m1.metadata.k, 'v');
  ok('simple upload');

  // Resumable upload from a file (one chunked PUT, bytes 0-*/*).
  const big = crypto.randomBytes(3 * 1024 * 1024 + 17);
  const bigPath = path.join(tmp, 'big.bin');
  fs.writeFileSync(bigPath, big);
  await bucket.upload(bigPath, {
    destination: 'dir/sub/big.bin',
    resumable: true,
    validation: 'crc32c',
  });
  // And a resumable save() of a buffer, with md5 validation.
  const f3 = bucket.file('top.bin');
  await f3.save(big.subarray(0, 300000), {resumable: true, validation: 'md5'});
  ok('resumable upload');

  // Downloads, validated by the client against X-Goog-Hash.
  const [got] = await bucket.file('dir/sub/big.bin').download({validation: true});
  assert.ok(got.equals(big), 'resumable object differs');
  const [got1] = await f1.download({validation: 'crc32c'});
  assert.ok(got1.equals(small), 'simple object differs');
  const [part] = await bucket.file('dir/sub/big.bin').download({start: 10, end: 99});
  assert.ok(part.equals(big.subarray(10, 100)), 'ranged read differs');
  ok('download');

  // Lists: everything, then one level with a delimiter.
  const [all] = await bucket.getFiles();
  assert.deepStrictEqual(all.map((f) => f.name).sort(),
      ['dir/small.bin', 'dir/sub/big.bin', 'top.bin']);
  const [files, , resp] = await bucket.getFiles({
    prefix: 'dir/', delimiter: '/', autoPaginate: false,
  });
  assert.deepStrictEqual(files.map((f) => f.name), ['dir/small.bin']);
  assert.deepStrictEqual(resp.prefixes, ['dir/sub/']);
  const paged = [];
  let pages = 0;
  for (let q = {maxResults: 1, autoPaginate: false}; q; pages++) {
    const [page, next] = await bucket.getFiles(q);
    paged.push(...page.map((f) => f.name));
    q = next;
  }
  assert.deepStrictEqual(paged.sort(), all.map((f) => f.name).sort());
  assert.strictEqual(pages, 3);
  ok('list');

  // Metadata update bumps the metageneration.
  const [m2] = await f1.setMetadata({metadata: {k2: 'v2'}});
  assert.strictEqual(String(m2.metageneration), '2');
  assert.strictEqual(m2.metadata.k2, 'v2');
  ok('metadata');

  // Copy (rewrite) keeps the checksums.
  const [copy] = await f1.copy(bucket.file('copy/small.bin'));
  const [mc] = await copy.getMetadata();
  assert.strictEqual(mc.crc32c, m1.crc32c);
  assert.strictEqual(mc.md5Hash, m1.md5Hash);
  ok('copy');

  // Compose: the composite crc32c is the crc32c of the concatenation.
  const [combined] = await bucket.combine(
      [f1, bucket.file('top.bin'), bucket.file('dir/sub/big.bin')],
      'combined.bin');
  const [mcomb] = await combined.getMetadata();
  const cat = Buffer.concat([small, big.subarray(0, 300000), big]);
  assert.strictEqual(mcomb.crc32c, crc32c(cat));
  assert.strictEqual(Number(mcomb.componentCount), 3);
  assert.strictEqual(mcomb.md5Hash, undefined);
  const [gotc] = await combined.download({validation: 'crc32c'});
  assert.ok(gotc.equals(cat), 'composite differs');
  ok('compose');

  // No-clobber: ifGenerationMatch=0 on an existing object is a 412.
  let code = 0;
  try {
    await f1.save(Buffer.from('x'), {
      resumable: false, preconditionOpts: {ifGenerationMatch: 0},
    });
  } catch (err) {
    code = err.code;
  }
  assert.strictEqual(code, 412);
  code = 0;
  try {
    await bucket.file('nope').download();
  } catch (err) {
    code = err.code;
  }
  assert.strictEqual(code, 404);
  ok('errors');

  const [exists] = await bucket.file('copy/small.bin').exists();
  assert.ok(exists);
  await bucket.deleteFiles({force: true});
  const [left] = await bucket.getFiles();
  assert.strictEqual(left.length, 0);
  await bucket.delete();
  const [bexists] = await bucket.exists();
  assert.ok(!bexists);
  ok('delete');
  ok('done');
}

run('gcs.js', main);
