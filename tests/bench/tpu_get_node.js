// One cold GET of a node with the official @google-cloud/tpu client over
// REST, as a user's script would run it: process start, require, one
// getNode.  Used by bench_api_get.sh as the Node.js peer of
// "tpuctl describe".  Usage: node tpu_get_node.js PORT NODE_NAME TOKEN_FILE
'use strict';
const fs = require('fs');
const path = require('path');
const interop = path.join(__dirname, '..', 'interop', 'node_modules');
const {v2} = require(require.resolve('@google-cloud/tpu', {paths: [interop]}));
const gaxDir = path.dirname(require.resolve('google-gax/package.json', {paths: [interop]}));
const gal = require(require.resolve('google-auth-library', {paths: [gaxDir]}));

const [port, name, tokenFile] = process.argv.slice(2);
const authClient = new gal.OAuth2Client();
authClient.setCredentials({
  access_token: fs.readFileSync(tokenFile, 'utf8').trim(),
  expiry_date: Date.now() + 3600e3,
});
const client = new v2.TpuClient({
  apiEndpoint: '127.0.0.1', port: Number(port), protocol: 'http',
  fallback: 'rest', authClient,
});
client.getNode({name}).then(([node]) => {
  if (!node.name) process.exit(1);
  client.close();
}, (e) => { console.error(e.message); process.exit(1); });
