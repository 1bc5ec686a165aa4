# The README's receiver example (v3), run by tests/db/callback_dispatcher_test.cpp
# against a real delivery: python3 callback_verify.py SECRET HEADERS_JSON BODY_FILE
import hashlib, hmac, json, sys, time

def verify_callback(secret: bytes, headers: dict, body: bytes, max_age=None) -> bool:
    h = {k.lower(): v for k, v in headers.items()}
    ts, nonce = h["x-qtg-callback-timestamp"], h["x-qtg-callback-nonce"]
    if h.get("x-qtg-callback-signature-version", "v3") != "v3":
        return False
    if max_age is not None and abs(time.time() - int(ts)) > max_age:
        return False  # optional: retries keep the enqueue timestamp
    message = f"{ts}\n{nonce}\n{hashlib.sha256(body).hexdigest()}".encode()
    expected = hmac.new(secret, message, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, h["x-qtg-callback-signature"])
    # then dedupe on json.loads(body)["event_id"] before acting

if __name__ == "__main__":
    secret, headers_file, body_file = sys.argv[1:]
    ok = verify_callback(secret.encode(), json.load(open(headers_file)), open(body_file, "rb").read())
    print("valid" if ok else "invalid")
    sys.exit(0 if ok else 1)
