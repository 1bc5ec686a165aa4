// SPEC §5 request signing in the browser (WebCrypto), for the admin page's
// actions. The operator's API key is imported as a non-extractable HMAC key
// and held only in this closure: never in storage, a URL, the DOM or a log.
// Reloading or closing the tab forgets it.
'use strict';

window.mgSigning = (() => {
  const enc = new TextEncoder();
  let held = null; // { keyId, key: CryptoKey }

  const UNRESERVED = /[A-Za-z0-9\-._~]/;

  function hex(buffer) {
    return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
  }

  function hexValue(c) {
    if (c >= 0x30 && c <= 0x39) return c - 0x30;
    if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
    if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
    return -1;
  }

  // As the server decodes: %XX with two hex digits is a byte, anything else
  // (a lone '%', '+') is itself.
  function percentDecode(text) {
    const b = enc.encode(text);
    const out = [];
    for (let i = 0; i < b.length; i++) {
      if (b[i] === 0x25 && i + 2 < b.length) {
        const hi = hexValue(b[i + 1]), lo = hexValue(b[i + 2]);
        if (hi >= 0 && lo >= 0) {
          out.push(hi * 16 + lo);
          i += 2;
          continue;
        }
      }
      out.push(b[i]);
    }
    return out;
  }

  function percentEncode(bytes) {
    return bytes.map((c) => {
      const ch = String.fromCharCode(c);
      return c < 0x80 && UNRESERVED.test(ch) ? ch : '%' + c.toString(16).toUpperCase().padStart(2, '0');
    }).join('');
  }

  /// SPEC §5's sorted_query from the raw query (without '?').
  function canonicalQuery(raw) {
    const pairs = [];
    for (const piece of String(raw || '').split('&')) {
      if (!piece) continue;
      const eq = piece.indexOf('=');
      const k = eq < 0 ? piece : piece.slice(0, eq);
      const v = eq < 0 ? '' : piece.slice(eq + 1);
      pairs.push([percentEncode(percentDecode(k)), percentEncode(percentDecode(v))]);
    }
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    return pairs.map(([k, v]) => `${k}=${v}`).join('&');
  }

  function newNonce() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return hex(b.buffer);
  }

  function available() {
    return !!(window.crypto && crypto.subtle);
  }

  async function setKey(keyId, secret) {
    if (!available()) throw new Error('WebCrypto is not available: open the page over https or on localhost');
    const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' },
      false, ['sign']);
    held = { keyId, key };
  }

  function forget() {
    held = null;
  }

  function keyId() {
    return held ? held.keyId : '';
  }

  /// The four X-QTG-* headers for `method target body` at `unixSeconds`.
  async function headers(method, target, body, unixSeconds) {
    if (!held) throw new Error('no API key');
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? '' : target.slice(q + 1);
    const timestamp = String(unixSeconds);
    const nonce = newNonce();
    const bodyHash = hex(await crypto.subtle.digest('SHA-256', enc.encode(body)));
    const canonical = [method, path, canonicalQuery(query), bodyHash, timestamp, nonce].join('\n');
    const signature = hex(await crypto.subtle.sign('HMAC', held.key, enc.encode(canonical)));
    return {
      'X-QTG-Key-Id': held.keyId,
      'X-QTG-Timestamp': timestamp,
      'X-QTG-Nonce': nonce,
      'X-QTG-Signature': signature,
    };
  }

  return { available, setKey, forget, keyId, headers, canonicalQuery };
})();
