"""Callback verification of REAL deliveries: `movegate serve` delivers to the
package's own WSGI receiver (movegate.receiver) on loopback, under both
signature schemes; the recorded deliveries are then verified, tampered
with and replayed."""

import asyncio
import base64
import io
import re
import socketserver
import threading
import time
import unittest
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import movegate
from movegate import Client, callbacks, receiver

from plans import INTENT, KEYS, TEMPLATES
from serve import Serve

V3_SECRET = "py-callback-secret-0123456789"
SW_SECRET = "whsec_" + base64.b64encode(b"py-standard-webhooks-key-0123456").decode()


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Receiver:
    """The package's WSGI receiver on a loopback port, recording every raw
    delivery (headers, body) before the app sees it."""

    def __init__(self, secret):
        self.events = []
        self.deliveries = []
        self.lock = threading.Lock()
        app = receiver.make_wsgi_app(secret, self._on_event)

        def recording(environ, start_response):
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length)
            headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
            with self.lock:
                self.deliveries.append((headers, body))
            environ["wsgi.input"] = io.BytesIO(body)
            return app(environ, start_response)

        self.server = make_server("127.0.0.1", 0, recording, server_class=_ThreadingWSGIServer,
                                  handler_class=_QuietHandler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def _on_event(self, event):
        with self.lock:
            self.events.append(event)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_port}/hook"

    def wait_for(self, predicate, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if predicate(list(self.events)):
                    return True
            time.sleep(0.05)
        return False

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def post(url, headers, body):
    import urllib.request

    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def run_asgi(app, headers, body, method="POST"):
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/hook",
             "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]}
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], sent[1]["body"]


class _DeliveryTest:
    secret = None
    scheme = None
    env = {}

    @classmethod
    def setUpClass(cls):
        cls.receiver = Receiver(cls.secret)
        env = {"MG_CALLBACK_SECRET": cls.secret, "MG_CALLBACK_ALLOW_PRIVATE": "true"}
        env.update(cls.env)
        cls.serve = Serve("cb_" + cls.scheme.replace("-", "_"), KEYS, TEMPLATES, env).start()
        maker = Client(cls.serve.base_url, "maker", KEYS["maker"][0])
        cls.movement = maker.create_movement(
            "py_chain", INTENT, input_params={"to": "0xabc"}, callback_url=cls.receiver.url
        )
        Client(cls.serve.base_url, "checker", KEYS["checker"][0]).approve(cls.movement.id)
        reader = Client(cls.serve.base_url, "reader", KEYS["reader"][0])
        reader.wait(cls.movement.id, "COMPLETED")
        # Deliveries of one batch go out concurrently, in any order: wait
        # for every event of the finished timeline.
        cls.expected_ids = {e.id for e in reader.iter_events(cls.movement.id) if e.kind == "event"}
        cls.delivered = cls.receiver.wait_for(
            lambda events: {e.event_id for e in events} >= cls.expected_ids
        )

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()
        cls.receiver.close()

    def recorded(self):
        self.assertTrue(self.delivered, f"not every event was delivered:\n{self.serve.log_tail()}")
        with self.receiver.lock:
            return list(self.receiver.deliveries)

    def test_every_real_delivery_verifies_and_is_acted_on_once(self):
        deliveries = self.recorded()
        for headers, body in deliveries:
            self.assertEqual(callbacks.detect_scheme(headers), self.scheme)
            event = callbacks.verify(self.secret, headers, body)
            self.assertEqual(event.request_id, self.movement.id)
        with self.receiver.lock:
            events = list(self.receiver.events)
        ids = [e.event_id for e in events]
        self.assertEqual(len(ids), len(set(ids)), "each event acted on once")
        self.assertEqual(set(ids), self.expected_ids)
        completed = next(e for e in events if e.event_type == "request_completed")
        self.assertEqual(completed.request_state, "COMPLETED")

    def test_tampered_deliveries_are_refused(self):
        headers, body = self.recorded()[0]
        tampered_body = re.sub(rb'("request_state"\s*:\s*")', rb"\1X", body, count=1)
        self.assertNotEqual(tampered_body, body)
        for name, (h, b, secret) in {
            "body": (headers, tampered_body, self.secret),
            "wrong secret": (headers, body, self.other_secret()),
            "signature": (self.with_bad_signature(headers), body, self.secret),
        }.items():
            with self.subTest(name):
                with self.assertRaises(movegate.InvalidCallback):
                    callbacks.verify(secret, h, b)
        status, _ = post(self.receiver.url, headers, tampered_body)
        self.assertEqual(status, 401)

    def test_replayed_delivery_is_acknowledged_not_acted_on(self):
        headers, body = self.recorded()[0]
        with self.receiver.lock:
            before = len(self.receiver.events)
        status, answer = post(self.receiver.url, headers, body)
        self.assertEqual((status, answer), (200, b'{"status": "duplicate"}'))
        with self.receiver.lock:
            self.assertEqual(len(self.receiver.events), before)

    def test_asgi_receiver_on_a_real_delivery(self):
        headers, body = self.recorded()[-1]
        seen = []

        async def on_event(event):
            seen.append(event.event_id)

        app = receiver.make_asgi_app(self.secret, on_event)
        pairs = list(headers.items())
        self.assertEqual(run_asgi(app, pairs, body), (200, b'{"status": "ok"}'))
        self.assertEqual(run_asgi(app, pairs, body), (200, b'{"status": "duplicate"}'))
        self.assertEqual(len(seen), 1)
        self.assertEqual(run_asgi(app, pairs, body + b" ")[0], 401)
        signature = next(k for k in headers if k.endswith("signature"))
        doubled = pairs + [(signature, headers[signature])]
        self.assertEqual(run_asgi(app, doubled, body)[0], 401, "a signature header given twice")
        self.assertEqual(run_asgi(app, pairs, body, method="GET")[0], 405)


class V3Deliveries(_DeliveryTest, unittest.TestCase):
    secret = V3_SECRET
    scheme = "v3"

    def other_secret(self):
        return V3_SECRET + "x"

    def with_bad_signature(self, headers):
        sig = headers["x-qtg-callback-signature"]
        return dict(headers, **{"x-qtg-callback-signature": ("0" if sig[0] != "0" else "1") + sig[1:]})

    def test_v3_headers_and_optional_age_check(self):
        headers, body = self.recorded()[0]
        self.assertEqual(headers["x-qtg-callback-signature-version"], "v3")
        ts = int(headers["x-qtg-callback-timestamp"])
        callbacks.verify_v3(self.secret, headers, body, tolerance=300, now=ts + 299)
        callbacks.verify_v3(self.secret, headers, body, now=ts + 86400)  # retries keep the time
        with self.assertRaises(movegate.InvalidCallback):
            callbacks.verify_v3(self.secret, headers, body, tolerance=300, now=ts + 301)
        with self.assertRaises(movegate.InvalidCallback):
            callbacks.verify_v3(self.secret, dict(headers, **{"x-qtg-callback-signature-version": "v4"}), body)


class StandardWebhooksDeliveries(_DeliveryTest, unittest.TestCase):
    secret = SW_SECRET
    scheme = "standard-webhooks"
    env = {"MG_CALLBACK_SIGNATURE_SCHEME": "standard-webhooks"}

    def other_secret(self):
        return "whsec_" + base64.b64encode(b"another-key-0123456789abcdef").decode()

    def with_bad_signature(self, headers):
        sig = headers["webhook-signature"]
        return dict(headers, **{"webhook-signature": sig[:3] + ("A" if sig[3] != "A" else "B") + sig[4:]})

    def test_timestamp_tolerance_and_rotation(self):
        headers, body = self.recorded()[0]
        ts = int(headers["webhook-timestamp"])
        event = callbacks.verify(self.secret, headers, body, now=ts + 299)
        self.assertEqual(event.event_id, headers["webhook-id"])
        for now in (ts + 301, ts - 301):
            with self.assertRaises(movegate.InvalidCallback):
                callbacks.verify(self.secret, headers, body, now=now)
        rotated = dict(headers, **{"webhook-signature": "v1,bm90IGl0 " + headers["webhook-signature"]})
        callbacks.verify(self.secret, rotated, body, now=ts)
        with self.assertRaises(movegate.InvalidCallback):
            callbacks.verify("not-a-whsec-secret", headers, body, now=ts)


class DeduperTest(unittest.TestCase):
    def test_first_time_once_and_bounded(self):
        d = callbacks.Deduper(capacity=2)
        self.assertTrue(d.first_time("a"))
        self.assertFalse(d.first_time("a"))
        self.assertTrue(d.first_time("b"))
        self.assertTrue(d.first_time("c"))  # evicts the oldest, "a"
        self.assertNotIn("a", d)
        self.assertEqual(len(d), 2)
        d.forget("c")
        self.assertTrue(d.first_time("c"))


if __name__ == "__main__":
    unittest.main()
