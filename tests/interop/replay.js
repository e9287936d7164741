// Replay the recorded real Google exchanges of /work/shared/api/samples
// against tpuctl-emulator and compare each answer with the recording:
// the same status class (2xx/3xx/4xx/5xx) and, for JSON bodies, every
// field of the recorded answer present with the same JSON type (values
// such as ids, times and names may differ).  Extra emulator fields are
// allowed (newer API revisions add fields).
//
// usage: node replay.js SAMPLE...
// Environment: EMU_URL (the emulator's base URL), EMU_TOKEN (a bearer
// token it issued), EMU_PROJECT (its project id).  Prints one line per
// exchange and exits 1 when any exchange differs.
//
// Placeholders of the recordings are bound on the way: ${projectId} and
// ${projectNumber} to EMU_PROJECT, ${uniqueId} to a fresh suffix,
// ${operationID} to the operation the previous answer named, a resumable
// upload_id to the Location of the session the emulator opened.  Request
// bodies the recording elided ("<N bytes elided>") are N fresh bytes.
// The gcsfs cassettes dropped some request bodies: a body that had a
// Content-Length is that many fresh bytes, a resumable initiation gets
// the name of the object its session finally created (the next recorded
// storage#object answer), a compose the objects uploaded before it.
// A done operation in the recording is polled until done.
'use strict';

const fs = require('fs');
const crypto = require('crypto');

const BASE = process.env.EMU_URL;
const TOKEN = process.env.EMU_TOKEN;
const PROJECT = process.env.EMU_PROJECT;
if (!BASE || !TOKEN || !PROJECT) {
  console.error('replay.js: set EMU_URL, EMU_TOKEN and EMU_PROJECT');
  process.exit(2);
}

// Exchanges whose recorded answer depends on state outside the
// recording; each is documented in man/tpuctl-emulator.1 CAVEATS.
const SKIP = [
  // 403: the recorder could see but not delete someone else's bucket
  // named "unknown"; the emulator has no foreign owners.
  { method: 'DELETE', path: /\/storage\/v1\/b\/unknown$/ },
  // The JSON API batch endpoint (multipart/mixed) is not emulated.
  { method: 'POST', path: /^\/batch\/storage\/v1$/ },
];

// --- parsing the two recording formats -------------------------------

function parseKccLog(text) {
  const out = [];
  for (const chunk of text.split(/\n---\n/)) {
    const lines = chunk.replace(/^\n+/, '').split('\n');
    if (lines.length < 2 || !/^[A-Z]+ https?:\/\//.test(lines[0])) continue;
    const [method, uri] = lines[0].split(' ');
    let i = 1;
    const reqHeaders = {};
    for (; i < lines.length && lines[i] !== ''; i++) {
      const c = lines[i].indexOf(':');
      reqHeaders[lines[i].slice(0, c).toLowerCase()] =
          lines[i].slice(c + 1).trim();
    }
    i++;
    const reqBody = [];
    for (; i < lines.length && !/^\d{3} /.test(lines[i]); i++) {
      reqBody.push(lines[i]);
    }
    const code = parseInt(lines[i], 10);
    i++;
    const respHeaders = {};
    for (; i < lines.length && lines[i] !== ''; i++) {
      const c = lines[i].indexOf(':');
      respHeaders[lines[i].slice(0, c).toLowerCase()] =
          lines[i].slice(c + 1).trim();
    }
    out.push({
      method, uri, reqHeaders, reqBody: reqBody.join('\n').trim(),
      code, respHeaders, respBody: lines.slice(i + 1).join('\n').trim(),
    });
  }
  return out;
}

function lower(h) {
  const o = {};
  for (const [k, v] of Object.entries(h || {})) {
    o[k.toLowerCase()] = Array.isArray(v) ? v[0] : v;
  }
  return o;
}

function parseCassette(text) {
  return JSON.parse(text).map((x) => ({
    method: x.request.method,
    uri: x.request.uri,
    reqHeaders: lower(x.request.headers),
    reqBody: typeof x.request.body === 'string' ? x.request.body :
        (x.request.body == null ? '' : JSON.stringify(x.request.body)),
    code: x.response.status.code,
    respHeaders: lower(x.response.headers),
    respBody: typeof x.response.body === 'string' ? x.response.body :
        (x.response.body == null ? '' : JSON.stringify(x.response.body)),
  }));
}

// --- comparison -------------------------------------------------------

function jtype(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

// Differences of got against want (want's fields must all be in got with
// the same JSON type), as "path: ..." strings.
function shapeDiff(want, got, path, out) {
  if (jtype(want) !== jtype(got)) {
    out.push(`${path || '.'}: ${jtype(want)} recorded, ${jtype(got)} served`);
    return out;
  }
  if (Array.isArray(want)) {
    if (want.length > 0 && got.length === 0) {
      out.push(`${path}: recorded ${want.length} items, served none`);
    } else if (want.length > 0) {
      // The served item of the same name (listings also hold objects
      // earlier recordings left), else the first.
      const w = want[0];
      const g = (jtype(w) === 'object' && typeof w.name === 'string' &&
          got.find((x) => x && x.name === w.name)) || got[0];
      shapeDiff(w, g, `${path}[0]`, out);
    }
  } else if (jtype(want) === 'object') {
    for (const k of Object.keys(want)) {
      if (!(k in got)) {
        out.push(`${path}.${k}: missing`);
      } else {
        shapeDiff(want[k], got[k], `${path}.${k}`, out);
      }
    }
  }
  return out;
}

function tryJson(s) {
  if (typeof s !== 'string' || !/^\s*[{[]/.test(s)) return undefined;
  try {
    return JSON.parse(s);
  } catch (e) {
    return undefined;
  }
}

// --- replay -----------------------------------------------------------

const vars = {
  projectId: PROJECT,
  projectNumber: PROJECT,
  uniqueId: crypto.randomBytes(4).toString('hex'),
  operationID: '',
};
let uploadLocation = null;

function bind(s) {
  return s.replace(/\$\{(\w+)\}/g, (m, k) => (k in vars ? vars[k] : m));
}

function localUrl(uri) {
  const u = new URL(bind(uri));
  if (u.searchParams.has('upload_id') && uploadLocation) {
    const loc = new URL(uploadLocation);
    u.searchParams.set('upload_id', loc.searchParams.get('upload_id'));
  }
  return BASE.replace(/\/$/, '') + u.pathname + u.search;
}

function requestBody(x) {
  const m = /^<(\d+) bytes elided>$/.exec(x.reqBody);
  if (m) return crypto.randomBytes(parseInt(m[1], 10));
  const len = parseInt(x.reqHeaders['content-length'] || '0', 10);
  if (x.reqBody === '' && len > 0) return crypto.randomBytes(len);
  if (x.reqBody === '') return undefined;
  return Buffer.from(bind(x.reqBody), 'latin1');
}

async function send(x) {
  const headers = { authorization: `Bearer ${TOKEN}` };
  for (const k of ['content-type', 'content-range', 'range',
    'x-upload-content-type', 'x-upload-content-length']) {
    if (x.reqHeaders[k]) headers[k] = x.reqHeaders[k];
  }
  const res = await fetch(localUrl(x.uri), {
    method: x.method, headers, body: requestBody(x), redirect: 'manual',
  });
  const body = await res.text();
  return { status: res.status, headers: res.headers, body };
}

async function pollDone(x, first) {
  let r = first;
  for (let i = 0; i < 300; i++) {
    const j = tryJson(r.body);
    if (!j || j.done) return r;
    await new Promise((ok) => setTimeout(ok, 100));
    r = await send(x);
  }
  return r;
}

// Give a resumable initiation whose recorded body was dropped the name
// of the object its session created, and a compose whose body was
// dropped the objects uploaded before it in the same recording.
function fillResumableNames(xs) {
  xs.forEach((x, i) => {
    if (x.method === 'POST' && x.reqBody === '' &&
        /\/compose$/.test(new URL(x.uri).pathname)) {
      const names = new Set();
      for (const y of xs.slice(0, i)) {
        const j = tryJson(y.respBody);
        if (/\/upload\//.test(y.uri) && j && j.kind === 'storage#object') {
          names.add(j.name);
        }
      }
      x.reqBody = JSON.stringify({
        sourceObjects: [...names].map((name) => ({ name })),
      });
      x.reqHeaders['content-type'] = 'application/json';
      return;
    }
    if (x.method !== 'POST' || x.reqBody !== '' ||
        !/uploadType=resumable/.test(x.uri) || /upload_id=/.test(x.uri) ||
        /[?&]name=/.test(x.uri)) {
      return;
    }
    for (const y of xs.slice(i + 1)) {
      const j = tryJson(y.respBody);
      if (j && j.kind === 'storage#object' && j.name) {
        x.reqBody = JSON.stringify({ name: j.name });
        x.reqHeaders['content-type'] = 'application/json; charset=UTF-8';
        return;
      }
    }
  });
  return xs;
}

async function replayFile(file) {
  const text = fs.readFileSync(file, 'utf8');
  const xs = fillResumableNames(
      /\.json$/.test(file) ? parseCassette(text) : parseKccLog(text));
  let bad = 0;
  vars.uniqueId = crypto.randomBytes(4).toString('hex');
  for (const [n, x] of xs.entries()) {
    const path = new URL(bind(x.uri)).pathname;
    const tag = `${file.replace(/.*\//, '')}#${n} ${x.method} ${path}`;
    if (SKIP.some((s) => s.method === x.method && s.path.test(path))) {
      console.log(`skip ${tag} (see CAVEATS)`);
      continue;
    }
    let r = await send(x);
    const want = tryJson(x.respBody);
    if (want && want.done === true) r = await pollDone(x, r);
    const got = tryJson(r.body);
    const diffs = [];
    if (Math.floor(r.status / 100) !== Math.floor(x.code / 100)) {
      diffs.push(`status ${r.status}, recorded ${x.code}`);
    }
    if (want !== undefined && Math.floor(x.code / 100) !== 3) {
      if (got === undefined) {
        diffs.push('served a non-JSON body');
      } else {
        shapeDiff(want, got, '', diffs);
      }
    }
    if (got && typeof got.name === 'string' &&
        /\/operations\/[^/]+$/.test(got.name)) {
      vars.operationID = got.name.replace(/.*\/operations\//, '');
    }
    if (r.headers.get('location') && /upload_id=/.test(
        r.headers.get('location'))) {
      uploadLocation = r.headers.get('location');
    }
    if (diffs.length) {
      bad++;
      console.log(`FAIL ${tag}: ${diffs.join('; ')}`);
      if (process.env.REPLAY_VERBOSE) console.log(r.body.slice(0, 2000));
    } else {
      console.log(`ok   ${tag} (${r.status})`);
    }
  }
  return bad;
}

(async () => {
  let bad = 0;
  for (const f of process.argv.slice(2)) bad += await replayFile(f);
  process.exit(bad ? 1 : 0);
})().catch((e) => {
  console.error(`replay.js: ${e.stack || e}`);
  process.exit(1);
});
