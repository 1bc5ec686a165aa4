"""Every error class of the /v3 API as the client raises it: status, the
server's error.code and details, against a real `movegate serve`."""

import time
import unittest
import uuid

import movegate
from movegate import Client

from plans import CHAIN, INTENT, KEYS, TEMPLATES
from serve import Serve

UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"


class ErrorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A low per-key limit (burst 2x) so a burst of reads meets 429; every
        # other test uses a key of its own well below it.
        cls.serve = Serve("errors", KEYS, TEMPLATES, {"MG_API_RATE_LIMIT_PER_SECOND": "10"}).start()

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()

    def client(self, key_id, secret=None):
        return Client(self.serve.base_url, key_id, secret or KEYS[key_id][0])

    def assertApiError(self, cls, status, code, call, *args, **kw):
        with self.assertRaises(cls) as caught:
            call(*args, **kw)
        e = caught.exception
        self.assertIsInstance(e, movegate.ApiError)
        self.assertEqual(e.status, status)
        self.assertEqual(e.code, code)
        self.assertTrue(e.message)
        return e

    def pending(self, key="maker"):
        return self.client(key).create_movement("py_chain", INTENT, input_params={"to": "0xabc"})

    def test_401_bad_signature_and_unknown_key(self):
        forged = self.client("reader", secret="not-the-secret-0123456789")
        e = self.assertApiError(movegate.Unauthorized, 401, "unauthorized", forged.list_movements)
        self.assertIn("signature", e.message)
        stranger = Client(self.serve.base_url, "mallory", KEYS["reader"][0])
        self.assertApiError(movegate.Unauthorized, 401, "unauthorized", stranger.list_movements)
        skewed = Client(self.serve.base_url, "reader", KEYS["reader"][0], clock=lambda: time.time() - 400)
        e = self.assertApiError(movegate.Unauthorized, 401, "unauthorized", skewed.list_movements)
        self.assertIn("300 s", e.message)

    def test_403_scope_and_four_eyes(self):
        e = self.assertApiError(
            movegate.Forbidden, 403, "forbidden",
            self.client("reader").create_movement, "py_chain", INTENT,
        )
        self.assertIn("create", e.message)
        m = self.pending("both")
        e = self.assertApiError(movegate.Forbidden, 403, "forbidden", self.client("both").approve, m.id)
        self.assertIn("created it", e.message)
        plan = dict(CHAIN, template_key="py_err_" + uuid.uuid4().hex[:8])
        proposal = self.client("admin-1").propose_template(plan["template_key"], plan)
        self.assertApiError(
            movegate.Forbidden, 403, "forbidden", self.client("admin-1").approve_proposal, proposal.id
        )

    def test_404_unknown_ids(self):
        reader = self.client("reader")
        self.assertApiError(movegate.NotFound, 404, "not_found", reader.get_movement, UNKNOWN_ID)
        self.assertApiError(movegate.NotFound, 404, "not_found", reader.get_movement, "not-a-uuid")
        self.assertApiError(movegate.NotFound, 404, "not_found", reader.get_template, "no_such")
        self.assertApiError(
            movegate.NotFound, 404, "not_found", self.client("checker").approve, UNKNOWN_ID
        )
        self.assertApiError(
            movegate.NotFound, 404, "not_found",
            self.client("admin-1").set_expected_identity, "no_such_signer",
            "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23",
        )

    def test_405_wrong_method(self):
        e = self.assertApiError(
            movegate.MethodNotAllowed, 405, "method_not_allowed",
            self.client("reader").request, "DELETE", "/v3/movements",
        )
        self.assertIn("GET", e.headers.get("allow", ""))

    def test_409_state_conflicts_and_reused_key(self):
        checker = self.client("checker")
        m = self.pending()
        checker.reject(m.id)
        self.assertApiError(movegate.Conflict, 409, "conflict", checker.approve, m.id)
        self.assertApiError(movegate.Conflict, 409, "conflict", checker.resume, m.id)
        maker = self.client("maker")
        key = "err-reuse-" + uuid.uuid4().hex
        maker.create_movement("py_chain", INTENT, idempotency_key=key)
        e = self.assertApiError(
            movegate.Conflict, 409, "conflict",
            maker.create_movement, "py_chain", dict(INTENT, amount="13"), idempotency_key=key,
        )
        self.assertIn("idempotency_key", e.message)

    def test_422_with_field_details(self):
        maker = self.client("maker")
        e = self.assertApiError(
            movegate.Unprocessable, 422, "unprocessable",
            maker.create_movement, "py_chain", dict(INTENT, amount="1000.01"),
        )
        self.assertEqual([d.field for d in e.details], ["intent.amount"])
        self.assertIsInstance(e.details[0], movegate.FieldError)
        e = self.assertApiError(
            movegate.Unprocessable, 422, "unprocessable",
            maker.create_movement, "no_such_template", INTENT,
        )
        self.assertEqual(e.details[0].field, "template_key")
        e = self.assertApiError(
            movegate.Unprocessable, 422, "callbacks_not_configured",
            maker.create_movement, "py_chain", INTENT, callback_url="https://example.com/hook",
        )
        self.assertEqual(e.details[0].field, "callback_url")

    def test_400_malformed_requests(self):
        maker = self.client("maker")
        e = self.assertApiError(
            movegate.BadRequest, 400, "invalid_request",
            maker.request, "POST", "/v3/movements", b'{"template_key": "py_chain",',
        )
        e = self.assertApiError(
            movegate.BadRequest, 400, "invalid_request",
            maker.create_movement, "py_chain", {"asset": "USDC", "amount": 5},
        )
        e = self.assertApiError(
            movegate.BadRequest, 400, "invalid_request",
            self.client("reader").list_movements, limit=500,
        )
        self.assertEqual([d.field for d in e.details], ["limit"])
        self.assertApiError(
            movegate.BadRequest, 400, "invalid_request",
            self.client("reader").list_movements, state="DONE",
        )

    def test_413_body_over_one_mib(self):
        body = b'{"pad": "' + b"x" * (1024 * 1024) + b'"}'
        self.assertApiError(
            movegate.PayloadTooLarge, 413, "payload_too_large",
            self.client("maker").request, "POST", "/v3/movements", body,
        )

    def test_429_with_retry_after(self):
        burst = self.client("burst")
        deadline = time.monotonic() + 30
        while True:
            try:
                burst.executors()
            except movegate.RateLimited as e:
                self.assertEqual(e.status, 429)
                self.assertEqual(e.code, "rate_limited")
                self.assertIsInstance(e.retry_after, int)
                self.assertGreaterEqual(e.retry_after, 1)
                break
            self.assertLess(time.monotonic(), deadline, "no 429 within 30 s of a burst")
        # The limit is per key: another key is served meanwhile.
        self.assertIsInstance(self.client("reader").executors(), list)

    def test_503_fresh_balances_without_a_fetcher(self):
        reader = Client(self.serve.base_url, "reader", KEYS["reader"][0], retries=0)
        e = self.assertApiError(movegate.Unavailable, 503, "unavailable", reader.balances, fresh=True)
        self.assertIn("MG_GATEWAY_API_URL", e.details[0].message)

    def test_transport_error_when_nobody_listens(self):
        from serve import free_port

        c = Client(f"http://127.0.0.1:{free_port()}", "reader", KEYS["reader"][0], retries=1, retry_delay=0.01)
        with self.assertRaises(movegate.TransportError):
            c.list_movements()

    def test_oversized_or_non_json_answers_are_refused(self):
        # A peer that is not movegate (a wrong port, a proxy's error page).
        import http.server
        import threading

        class Peer(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<html>" * (2 * 1024 * 1024) if self.path.endswith("big") else b"<html>oops"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        peer = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Peer)
        threading.Thread(target=peer.serve_forever, daemon=True).start()
        try:
            c = Client(f"http://127.0.0.1:{peer.server_port}", "reader", KEYS["reader"][0],
                       max_answer_bytes=1024 * 1024)
            with self.assertRaisesRegex(movegate.MovegateError, "over 1048576 bytes"):
                c.request("GET", "/v3/big")
            with self.assertRaisesRegex(movegate.MovegateError, "not JSON"):
                c.request("GET", "/v3/small")
        finally:
            peer.shutdown()
            peer.server_close()

    def test_base_url_with_a_path_is_refused(self):
        with self.assertRaises(ValueError):
            Client("http://127.0.0.1:8080/api", "reader", "x" * 16)


if __name__ == "__main__":
    unittest.main()
