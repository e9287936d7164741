// Google's official Node.js Cloud TPU clients against tpuctl-emulator:
// the googleapis tpu v2 client and @google-cloud/tpu (REST fallback, which
// asks for enum-encoding=int) each create a node, wait for the operation,
// list, get, patch and delete it (googleapis also: queueCount kept, a
// v2alpha1-only field refused as Google does).  Exits non-zero at the
// first mismatch.
//
// Environment (tests/e2e/t150-tpu-interop.sh sets it):
//   CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU  http://127.0.0.1:PORT/
//   TPU_ACCESS_TOKEN_FILE                a token the emulator issued
//   TPU_PROJECT, TPU_ZONE                default tpuctl-e2e, us-central2-b
'use strict';

const fs = require('fs');
const path = require('path');
const assert = require('assert');

const base = (process.env.CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU || '').replace(/\/+$/, '');
const tokenFile = process.env.TPU_ACCESS_TOKEN_FILE || '';
const project = process.env.TPU_PROJECT || 'tpuctl-e2e';
const zone = process.env.TPU_ZONE || 'us-central2-b';
const parent = `projects/${project}/locations/${zone}`;

if (!/^http:\/\/127\.[0-9.]+:[0-9]+$/.test(base)) {
  console.error(`tpu.js: CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU must be a loopback http URL, got '${base}'`);
  process.exit(2);
}
const token = fs.readFileSync(tokenFile, 'utf8').trim();
const port = Number(new URL(base).port);

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function log(msg) {
  console.log(`tpu.js: ${msg}`);
}

// googleapis: google.tpu v2 with an OAuth2 client holding our token
// (google-auth-library ignores a key file's token_uri).
async function viaGoogleapis() {
  const {google} = require('googleapis');
  const auth = new google.auth.OAuth2();
  auth.setCredentials({access_token: token, expiry_date: Date.now() + 3600e3});
  const tpu = google.tpu({version: 'v2', rootUrl: base + '/', auth});
  const nodes = tpu.projects.locations.nodes;
  const name = `${parent}/nodes/gapi-1`;

  async function wait(op) {
    for (let i = 0; i < 300 && !op.done; i++) {
      await sleep(100);
      op = (await tpu.projects.locations.operations.get({name: op.name})).data;
    }
    assert.ok(op.done, `operation ${op.name} not done`);
    assert.ok(!op.error, `operation failed: ${JSON.stringify(op.error)}`);
    return op;
  }

  let res = await nodes.create({
    parent,
    nodeId: 'gapi-1',
    requestBody: {
      acceleratorType: 'v4-8',
      runtimeVersion: 'tpu-vm-v4-base',
      labels: {client: 'googleapis'},
      networkConfig: {queueCount: 4},
    },
  });
  assert.strictEqual(res.data.metadata.verb, 'create');
  let op = await wait(res.data);
  assert.strictEqual(op.response['@type'], 'type.googleapis.com/google.cloud.tpu.v2.Node');
  assert.strictEqual(op.response.state, 'READY');
  log('googleapis: created ' + op.response.name);

  res = await nodes.list({parent});
  assert.ok(res.data.nodes.some((n) => n.name === name), 'node not listed');
  res = await nodes.get({name});
  assert.strictEqual(res.data.state, 'READY');
  assert.strictEqual(res.data.acceleratorConfig.type, 'V4');
  assert.strictEqual(res.data.acceleratorConfig.topology, '2x2x1');
  assert.strictEqual(res.data.networkEndpoints.length, 1);
  assert.strictEqual(res.data.networkConfig.queueCount, 4);

  // A v2alpha1-only field on the v2 API: Google's "Unknown name" 400,
  // as the client library reports it, and no node.
  const unknown = `Invalid JSON payload received. Unknown name "autocheckpointEnabled" at 'node': Cannot find field.`;
  await assert.rejects(nodes.create({
    parent,
    nodeId: 'gapi-2',
    requestBody: {acceleratorType: 'v4-8', runtimeVersion: 'tpu-vm-v4-base', autocheckpointEnabled: true},
  }), (e) => {
    const err = e.response && e.response.data && e.response.data.error;
    assert.strictEqual(e.code, 400);
    assert.strictEqual(e.message, unknown);
    assert.strictEqual(err.status, 'INVALID_ARGUMENT');
    assert.deepStrictEqual(err.details, [{
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{field: 'node', description: unknown}],
    }]);
    return true;
  });
  await assert.rejects(nodes.get({name: `${parent}/nodes/gapi-2`}), (e) => e.code === 404);

  res = await nodes.patch({
    name,
    updateMask: 'labels',
    requestBody: {labels: {client: 'googleapis', step: 'patched'}},
  });
  op = await wait(res.data);
  assert.strictEqual(op.response.labels.step, 'patched');
  res = await nodes.get({name});
  assert.deepStrictEqual(res.data.labels, {client: 'googleapis', step: 'patched'});

  res = await nodes.getGuestAttributes({name, requestBody: {queryPath: 'hostkeys/'}});
  const items = res.data.guestAttributes[0].queryValue.items;
  assert.ok(items.some((it) => it.namespace === 'hostkeys' && it.key === 'ssh-ed25519' &&
    /^AAAA/.test(it.value)), 'no ssh-ed25519 host key');

  res = await tpu.projects.locations.acceleratorTypes.list({parent});
  assert.ok(res.data.acceleratorTypes.some((t) => t.type === 'v4-32'));
  res = await tpu.projects.locations.runtimeVersions.list({parent});
  assert.ok(res.data.runtimeVersions.some((v) => v.version === 'tpu-vm-v4-base'));

  res = await nodes.delete({name});
  op = await wait(res.data);
  assert.strictEqual(op.response['@type'], 'type.googleapis.com/google.protobuf.Empty');
  await assert.rejects(nodes.get({name}), (e) => e.code === 404 || e.status === 404);
  log('googleapis: create, list, get, patch, getGuestAttributes, delete ok');
}

// @google-cloud/tpu v2 over REST: its auth client must come from
// google-gax's own copy of google-auth-library.
async function viaCloudTpu() {
  const {v2, protos} = require('@google-cloud/tpu');
  const {TpuClient} = v2;
  const Node = protos.google.cloud.tpu.v2.Node;
  // Decoded operation results carry enums as numbers, plain calls as names.
  const is = (value, enumType, name) => value === name || value === enumType[name];
  const gaxDir = path.dirname(require.resolve('google-gax/package.json'));
  const gal = require(require.resolve('google-auth-library', {paths: [gaxDir]}));
  const authClient = new gal.OAuth2Client();
  authClient.setCredentials({access_token: token, expiry_date: Date.now() + 3600e3});
  const client = new TpuClient({
    apiEndpoint: '127.0.0.1',
    port,
    protocol: 'http',
    fallback: 'rest',
    authClient,
  });
  const name = `${parent}/nodes/gcl-1`;

  let [operation] = await client.createNode({
    parent,
    nodeId: 'gcl-1',
    node: {
      acceleratorConfig: {type: 'V4', topology: '2x2x2'},
      runtimeVersion: 'tpu-vm-v4-base',
      labels: {client: 'cloud-tpu'},
    },
  });
  let [node] = await operation.promise();
  assert.strictEqual(node.name, name);
  assert.ok(is(node.state, Node.State, 'READY'), `state ${node.state}`);
  assert.strictEqual(node.acceleratorType, 'v4-16');
  assert.strictEqual(node.networkEndpoints.length, 2);
  log('@google-cloud/tpu: created ' + node.name);

  const [list] = await client.listNodes({parent});
  assert.ok(list.some((n) => n.name === name), 'node not listed');
  [node] = await client.getNode({name});
  assert.ok(is(node.state, Node.State, 'READY'), `state ${node.state}`);
  assert.ok(is(node.health, Node.Health, 'HEALTHY'), `health ${node.health}`);
  assert.ok(is(node.acceleratorConfig.type, protos.google.cloud.tpu.v2.AcceleratorConfig.Type, 'V4'));
  assert.ok(is(node.apiVersion, Node.ApiVersion, 'V2'), `apiVersion ${node.apiVersion}`);

  [operation] = await client.updateNode({
    node: {name, labels: {client: 'cloud-tpu', step: 'patched'}},
    updateMask: {paths: ['labels']},
  });
  [node] = await operation.promise();
  assert.strictEqual(node.labels.step, 'patched');
  [node] = await client.getNode({name});
  assert.strictEqual(node.labels.step, 'patched');

  const [ga] = await client.getGuestAttributes({name, queryPath: 'hostkeys/'});
  assert.strictEqual(ga.guestAttributes.length, 2);

  [operation] = await client.deleteNode({name});
  await operation.promise();
  await assert.rejects(client.getNode({name}), (e) => e.code === 5 || e.code === 404);
  await client.close();
  log('@google-cloud/tpu: create, list, get, update, getGuestAttributes, delete ok');
}

(async () => {
  await viaGoogleapis();
  await viaCloudTpu();
  log('all ok');
})().catch((e) => {
  console.error('tpu.js: FAILED:', e && e.stack ? e.stack : e);
  process.exit(1);
});
